//! One module per screen.

pub mod admin;
pub mod chat_links;
pub mod device;
pub mod home;
pub mod incident;
pub mod incidents;
pub mod login;
pub mod not_found;
pub mod on_demand;
pub mod profile;
pub mod reach;
pub mod schedule;
pub mod signup;
pub mod team_access;
pub mod team_channels;
pub mod team_deadman;
pub mod team_escalation;
pub mod team_integrations;
pub mod team_maintenance;
pub mod team_members;
pub mod team_rota;
pub mod team_rules;
pub mod team_schedule;
pub mod team_templates;
pub mod teams;
