//! Each integration key may send `KLAXON_INTAKE_RATE` requests a minute (ten minutes' worth at
//! once): past it every intake road answers 429 with `Retry-After`, changing nothing, and other
//! keys go on.

use crate::common::{self, Payload, TestApp};
use klaxon_core::Config;
use reqwest::Method;
use serde_json::json;

/// Ten minutes' worth of two a minute.
const BURST: u32 = 20;

fn two_a_minute() -> Config {
    Config {
        intake_per_minute: 2,
        ..common::test_config()
    }
}

/// Posts `body` to `path` with `headers`; the status and the `Retry-After` header.
async fn post(
    app: &TestApp,
    path: &str,
    headers: &[(&str, &str)],
    body: &serde_json::Value,
) -> (u16, Option<String>) {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(headers);
    let res = app
        .raw(Method::POST, path, &all, serde_json::to_vec(body).unwrap())
        .await;
    let wait = res
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .map(String::from);
    (res.status.as_u16(), wait)
}

both_with!(
    a_key_past_its_rate_waits_and_other_keys_go_on,
    two_a_minute(),
    |app| {
        let admin = app.bootstrap().await;
        let team = app.team(&admin, "web").await;
        let make = |kind: &'static str| {
            let (app, admin) = (&app, &admin);
            async move {
                app.post(
                    &format!("/api/teams/{team}/integrations"),
                    admin,
                    json!({"name": kind, "kind": kind}),
                )
                .await
                .expect(201)["key"]
                    .as_str()
                    .unwrap()
                    .to_string()
            }
        };
        let (webhook, pagerduty, opsgenie) = (
            make("alertmanager").await,
            make("pagerduty").await,
            make("opsgenie").await,
        );
        let payload = |group: &str| {
            Payload::new(group)
                .alert(group, "firing", 0, None, json!({}))
                .json()
        };
        let hook = format!("/api/alertmanager/webhook/{webhook}");
        // Ten minutes' worth at once: twenty.
        for n in 0..BURST {
            let group = format!("g{n}");
            assert_eq!(post(&app, &hook, &[], &payload(&group)).await.0, 200);
        }
        let (status, wait) = post(&app, &hook, &[], &payload("late")).await;
        assert_eq!(status, 429);
        assert_eq!(wait.as_deref(), Some("30"), "one more every 30 seconds");
        let count = BURST as usize;
        assert_eq!(
            app.incidents(&admin, team).await.len(),
            count,
            "the refused alert changed nothing"
        );

        // The other keys are not held by the first.
        let event = |key: &str, n: u32| {
            json!({"routing_key": key, "event_action": "trigger", "dedup_key": format!("k{n}"),
            "payload": {"summary": format!("pd {n}"), "source": "h", "severity": "info"}})
        };
        for n in 0..BURST {
            assert_eq!(
                post(&app, "/v2/enqueue", &[], &event(&pagerduty, n))
                    .await
                    .0,
                202
            );
        }
        let (status, wait) = post(&app, "/v2/enqueue", &[], &event(&pagerduty, BURST)).await;
        assert_eq!((status, wait.as_deref()), (429, Some("30")));
        let genie = format!("GenieKey {opsgenie}");
        let alert = json!({"message": "og"});
        for _ in 0..BURST {
            assert_eq!(
                post(&app, "/v2/alerts", &[("authorization", &genie)], &alert)
                    .await
                    .0,
                202
            );
        }
        let (status, wait) = post(&app, "/v2/alerts", &[("authorization", &genie)], &alert).await;
        assert_eq!((status, wait.as_deref()), (429, Some("30")));
        assert_eq!(app.incidents(&admin, team).await.len(), 3 * count);

        // A heartbeat URL is counted alike.
        let switch = app
            .post(
                &format!("/api/teams/{team}/deadman/switches"),
                &admin,
                json!({"name": "backup", "pings": true, "timeout": "1h"}),
            )
            .await
            .expect(201);
        let url = switch["ping_url"].as_str().unwrap();
        let beat = url[url.find("/api/heartbeat/").unwrap()..].to_string();
        for _ in 0..BURST {
            assert_eq!(post(&app, &beat, &[], &json!({})).await.0, 200);
        }
        let (status, wait) = post(&app, &beat, &[], &json!({})).await;
        assert_eq!((status, wait.as_deref()), (429, Some("30")));

        // Half a minute on, one more goes.
        app.clock.advance(30);
        assert_eq!(post(&app, &hook, &[], &payload("late")).await.0, 200);
        assert_eq!(post(&app, &hook, &[], &payload("later")).await.0, 429);
        assert_eq!(app.incidents(&admin, team).await.len(), 3 * count + 1);
    }
);
