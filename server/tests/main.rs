//! Klaxon's integration tests, as one binary: each module is one capability, run against the
//! real router over loopback HTTP on SQLite and PostgreSQL (`common`). One binary links once,
//! where forty would link forty times the same dependencies.

#[macro_use]
mod common;

mod accounts;
mod alertmanager;
mod bundling;
mod channels;
mod chat_discord;
mod chat_edits;
mod chat_matrix;
mod chat_mattermost;
mod chat_slack;
mod chat_telegram;
mod config;
mod contact_methods;
mod deadman;
mod device;
mod escalation;
mod exports;
mod faults;
mod handoff;
mod heartbeat_urls;
mod hostile;
mod http;
mod import;
mod incidents;
mod intake;
mod invites;
mod key_rate;
mod live;
mod mail_server;
mod maintenance;
mod matrix;
mod oncall_day;
mod ops;
mod opsgenie;
mod outbound;
mod pagerduty;
mod paging;
mod personal_webhook;
mod phone;
mod process;
mod reach;
mod replicas;
mod reports;
mod reviews;
mod rights;
mod rotations;
mod routing_rules;
mod schedule;
mod schema;
mod security;
mod service_accounts;
mod settings;
mod silences;
mod sso;
mod stats;
mod sweeper;
mod teams;
mod unpaged;
mod upgrade;
mod webhook_templates;
