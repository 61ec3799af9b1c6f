//! Klaxon's Kubernetes operator: the custom resources (`crd`) it reconciles into servers,
//! teams and their parts, talking to Klaxon only over its REST API.

pub mod controller;
pub mod crd;
pub mod klaxon;
pub mod lease;
pub mod ops;
pub mod server;
pub mod team;
