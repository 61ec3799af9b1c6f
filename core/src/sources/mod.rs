//! Where alerts come from: each sender's format is one file here implementing `Source`, which
//! turns a request's body into Klaxon's own normalized alerts (`Alerts`); `Core::intake` takes
//! those, whatever sent them. A source is chosen by the integration's kind, registered once in
//! `SOURCES`; its sentences name it ("not a Grafana webhook payload").

mod alertmanager;
mod grafana;

use klaxon_domain::alerting::{IncomingAlert, PayloadGroup};
use std::collections::BTreeMap;

/// Most alerts one request may carry; Alertmanager's own default cap is far lower.
pub const MAX_ALERTS: usize = 10_000;

/// One request's alerts as Klaxon keeps them: checked, one per fingerprint, with the group they
/// arrived in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alerts {
    pub group: PayloadGroup,
    /// By fingerprint; a fingerprint twice in one request: the later copy wins.
    pub alerts: BTreeMap<String, IncomingAlert>,
    /// Alerts that were unusable, or an earlier copy of a fingerprint.
    pub ignored: usize,
}

/// One alert format.
pub trait Source: Sync {
    /// The integration kind that sends it (`integrations.kind`).
    fn kind(&self) -> &'static str;

    /// Its name in a sentence.
    fn label(&self) -> &'static str;

    /// The request's body as alerts, or why it is not one: the 400's sentence.
    fn read(&self, body: &[u8]) -> Result<Alerts, String>;
}

/// Every source, registered once.
static SOURCES: [&dyn Source; 2] = [&alertmanager::Alertmanager, &grafana::Grafana];

/// The source an integration of `kind` reads; Alertmanager's for a kind Klaxon does not know.
pub fn source(kind: &str) -> &'static dyn Source {
    SOURCES
        .iter()
        .copied()
        .find(|s| s.kind() == kind)
        .unwrap_or(&alertmanager::Alertmanager)
}
