//! Grafana's webhook contact point (unified alerting): Alertmanager's webhook shape with Grafana's
//! own fields beside it (`orgId`, `title`, `state`, `message`, each alert's `valueString`,
//! `dashboardURL`, `panelURL`, `silenceURL`), which Klaxon does not need.
//! <https://grafana.com/docs/grafana/latest/alerting/configure-notifications/manage-contact-points/integrations/webhook-notifier/>

use super::alertmanager::read_webhook;
use super::{Reading, Source};
use klaxon_domain::mapping::WebhookTemplates;

pub struct Grafana;

impl Source for Grafana {
    fn kind(&self) -> &'static str {
        "grafana"
    }

    fn label(&self) -> &'static str {
        "Grafana"
    }

    fn read(&self, body: &[u8], _: i64, _: Option<&WebhookTemplates>) -> Result<Reading, String> {
        read_webhook(body, self.label()).map(Reading::Alerts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grafanas_webhook_is_read_and_its_sentences_say_grafana() {
        let body = include_bytes!("../../../domain/tests/fixtures/grafana-webhook.json");
        let Reading::Alerts(alerts) = Grafana.read(body, 0, None).unwrap() else {
            panic!("alerts, not an event")
        };
        assert!(!alerts.alerts.is_empty());
        assert_eq!(
            Grafana.read(b"[1]", 0, None).unwrap_err(),
            "not a Grafana webhook payload: expected a JSON object"
        );
    }
}
