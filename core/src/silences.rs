//! Alertmanager silences made from an incident. The matchers are the labels all of the
//! incident's firing alerts share (never without `alertname`); the silence goes to the
//! Alertmanager of the integration those alerts came through, and only once Alertmanager has
//! accepted it is it recorded on the incident and its timeline.

use crate::outbound::{upstream_error, upstream_status, Answer, Outbound};
use crate::timeline::timeline;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::incident::TimelineKind;
use klaxon_domain::silence::{
    describe, shared_matchers, AlertmanagerAuth, Matcher, Silence, SilencePreview, SILENCE_MAX,
    SILENCE_MIN,
};
use klaxon_domain::{Duration, Timestamp};
use std::collections::BTreeMap;

/// The Alertmanager an integration names.
struct Target {
    integration_id: i64,
    url: String,
    auth: Option<AlertmanagerAuth>,
}

impl Target {
    fn request(
        &self,
        outbound: &Outbound,
        method: reqwest::Method,
        path: &str,
    ) -> reqwest::RequestBuilder {
        let req = outbound.request(method, &format!("{}{path}", self.url));
        match &self.auth {
            Some(AlertmanagerAuth::Basic { username, password }) => {
                req.basic_auth(username, Some(password))
            }
            Some(AlertmanagerAuth::Bearer { token }) => req.bearer_auth(token),
            None => req,
        }
    }

    /// Sends the request under the outbound policy: the answer whatever its status, or the
    /// kind of failure that left it without one.
    async fn send(&self, outbound: &Outbound, req: reqwest::RequestBuilder) -> Result<Answer> {
        outbound
            .send(req)
            .await
            .map_err(|f| upstream_error(&format!("Alertmanager at {}", self.url), f))
    }
}

/// What the incident's alerts say about a silence: the matchers and the Alertmanager, or why
/// there can be none.
struct Plan {
    matchers: std::result::Result<Vec<Matcher>, String>,
    target: Option<Target>,
}

#[derive(sqlx::FromRow)]
struct AlertLabels {
    labels: String,
    status: String,
    integration_id: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct SilenceRow {
    silence_id: Option<String>,
    silence_ends_at: Option<i64>,
    silence_matchers: Option<String>,
    silence_integration_id: Option<i64>,
}

impl Core {
    /// The silence the incident made, while it lasts.
    pub(crate) async fn active_silence(&self, incident_id: i64) -> Result<Option<Silence>> {
        Ok(self.silence_row(incident_id).await?.0)
    }

    async fn silence_row(&self, incident_id: i64) -> Result<(Option<Silence>, Option<i64>)> {
        let r: SilenceRow = sqlx::query_as(
            "SELECT silence_id, silence_ends_at, silence_matchers, silence_integration_id \
             FROM incidents WHERE id = $1",
        )
        .bind(incident_id)
        .fetch_optional(&self.db.pool)
        .await?
        .ok_or(Error::NotFound)?;
        let silence = match (r.silence_id, r.silence_ends_at) {
            (Some(silence_id), Some(ends_at)) if ends_at > self.now() => Some(Silence {
                silence_id,
                ends_at: Timestamp(ends_at),
                matchers: r
                    .silence_matchers
                    .and_then(|m| serde_json::from_str(&m).ok())
                    .unwrap_or_default(),
            }),
            _ => None,
        };
        Ok((silence, r.silence_integration_id))
    }

    async fn alertmanager_of(&self, integration_id: i64) -> Result<Option<Target>> {
        let row: Option<(Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT alertmanager_url, alertmanager_auth FROM integrations WHERE id = $1",
        )
        .bind(integration_id)
        .fetch_optional(&self.db.pool)
        .await?;
        let Some((Some(url), auth)) = row else {
            return Ok(None);
        };
        let auth = auth
            .map(|a| serde_json::from_str(&a))
            .transpose()
            .map_err(|e| Error::Internal(format!("stored Alertmanager credentials: {e}")))?;
        Ok(Some(Target {
            integration_id,
            url,
            auth,
        }))
    }

    /// Firing alerts decide; an incident with none firing (it may flap back) uses all of them.
    /// The Alertmanager is the one named by the latest of those alerts' integrations.
    async fn silence_plan(&self, incident_id: i64) -> Result<Plan> {
        let rows: Vec<AlertLabels> = sqlx::query_as(
            "SELECT labels, status, integration_id FROM alerts WHERE incident_id = $1 ORDER BY id",
        )
        .bind(incident_id)
        .fetch_all(&self.db.pool)
        .await?;
        let firing: Vec<&AlertLabels> = rows.iter().filter(|r| r.status == "firing").collect();
        let chosen: Vec<&AlertLabels> = if firing.is_empty() {
            rows.iter().collect()
        } else {
            firing
        };
        let labels: Vec<BTreeMap<String, String>> = chosen
            .iter()
            .map(|r| serde_json::from_str(&r.labels).unwrap_or_default())
            .collect();
        let mut target = None;
        for integration_id in chosen.iter().rev().filter_map(|r| r.integration_id) {
            if let Some(t) = self.alertmanager_of(integration_id).await? {
                target = Some(t);
                break;
            }
        }
        Ok(Plan {
            matchers: shared_matchers(&labels),
            target,
        })
    }

    /// What a silence made now would match, and the one in force. Any member of the team.
    pub async fn silence_preview(&self, actor: &Actor, incident_id: i64) -> Result<SilencePreview> {
        self.incident(actor, incident_id).await?;
        self.preview_silence_of(incident_id).await
    }

    pub(crate) async fn preview_silence_of(&self, incident_id: i64) -> Result<SilencePreview> {
        let plan = self.silence_plan(incident_id).await?;
        let active = self.active_silence(incident_id).await?;
        Ok(preview(plan, active))
    }

    /// Silences the incident's alerts for `duration` through Alertmanager. A silence in force
    /// is replaced (Alertmanager updates it in place). Nothing is recorded unless
    /// Alertmanager accepted it.
    pub async fn silence_incident(
        &self,
        actor: &Actor,
        incident_id: i64,
        duration: Duration,
    ) -> Result<Silence> {
        if duration < SILENCE_MIN || duration > SILENCE_MAX {
            return Err(Error::Invalid(format!(
                "duration must be between {SILENCE_MIN} and {SILENCE_MAX}"
            )));
        }
        let incident = self.incident(actor, incident_id).await?;
        let plan = self.silence_plan(incident_id).await?;
        let target = plan.target.ok_or_else(no_alertmanager)?;
        let matchers = plan.matchers.map_err(Error::Invalid)?;
        let (active, _) = self.silence_row(incident_id).await?;
        let now = self.now();
        let ends_at = now + duration.as_secs();
        let mut body = serde_json::json!({
            "matchers": matchers.iter().map(|m| serde_json::json!({
                "name": m.name, "value": m.value, "isRegex": false, "isEqual": true,
            })).collect::<Vec<_>>(),
            "startsAt": Timestamp(now).to_rfc3339(),
            "endsAt": Timestamp(ends_at).to_rfc3339(),
            "createdBy": actor.username,
            "comment": format!("Klaxon incident #{incident_id}: {}", incident.title),
        });
        if let Some(a) = &active {
            body["id"] = serde_json::json!(a.silence_id);
        }
        let res = target
            .send(
                &self.outbound,
                target
                    .request(&self.outbound, reqwest::Method::POST, "/api/v2/silences")
                    .json(&body),
            )
            .await?;
        if !res.status.is_success() {
            return Err(upstream_status("Alertmanager", res.status));
        }
        let answer: serde_json::Value = res.json().unwrap_or_default();
        let silence_id = answer["silenceID"]
            .as_str()
            .filter(|id| is_silence_id(id))
            .ok_or_else(|| Error::Upstream("Alertmanager answered without a silence id".into()))?
            .to_string();
        let silence = Silence {
            silence_id,
            ends_at: Timestamp(ends_at),
            matchers,
        };
        let mut tx = self.db.begin().await?;
        sqlx::query(
            "UPDATE incidents SET silence_id = $1, silence_ends_at = $2, silence_matchers = $3, \
             silence_integration_id = $4 WHERE id = $5",
        )
        .bind(&silence.silence_id)
        .bind(ends_at)
        .bind(serde_json::to_string(&silence.matchers).map_err(|e| Error::Internal(e.to_string()))?)
        .bind(target.integration_id)
        .bind(incident_id)
        .execute(&mut *tx)
        .await?;
        timeline(
            &mut tx,
            incident_id,
            now,
            TimelineKind::Silenced,
            Some(actor.user_id),
            &format!(
                "alerts silenced in Alertmanager for {duration} until {}: {} (silence {})",
                Timestamp(ends_at).to_rfc3339(),
                describe(&silence.matchers),
                silence.silence_id
            ),
        )
        .await?;
        tx.commit().await?;
        Ok(silence)
    }

    /// Expires the incident's silence now. 409 when none is in force; a silence Alertmanager
    /// no longer knows (404) is gone already and is cleared here too.
    pub async fn expire_silence(&self, actor: &Actor, incident_id: i64) -> Result<()> {
        self.incident(actor, incident_id).await?;
        let (active, integration_id) = self.silence_row(incident_id).await?;
        let active =
            active.ok_or_else(|| Error::Conflict("the incident has no silence in force".into()))?;
        let target = match integration_id {
            Some(id) => self.alertmanager_of(id).await?,
            None => None,
        }
        .ok_or_else(|| {
            Error::Conflict(
                "the integration that made this silence no longer names an Alertmanager; \
                 expire the silence in Alertmanager"
                    .into(),
            )
        })?;
        let path = format!("/api/v2/silence/{}", active.silence_id);
        let res = target
            .send(
                &self.outbound,
                target.request(&self.outbound, reqwest::Method::DELETE, &path),
            )
            .await?;
        // 404: Alertmanager no longer knows it (its state was lost); it silences nothing.
        if !res.status.is_success() && res.status != reqwest::StatusCode::NOT_FOUND {
            return Err(upstream_status("Alertmanager", res.status));
        }
        let now = self.now();
        let mut tx = self.db.begin().await?;
        sqlx::query("UPDATE incidents SET silence_ends_at = $1 WHERE id = $2")
            .bind(now)
            .bind(incident_id)
            .execute(&mut *tx)
            .await?;
        timeline(
            &mut tx,
            incident_id,
            now,
            TimelineKind::Unsilenced,
            Some(actor.user_id),
            &format!("silence {} expired early", active.silence_id),
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }
}

fn no_alertmanager() -> Error {
    Error::Invalid(
        "the incident's integration names no Alertmanager; a team owner can set its URL on \
         the team page"
            .into(),
    )
}

fn preview(plan: Plan, active: Option<Silence>) -> SilencePreview {
    let unavailable = match (&plan.target, &plan.matchers) {
        (None, _) => Some(no_alertmanager().to_string()),
        (Some(_), Err(why)) => Some(why.clone()),
        _ => None,
    };
    SilencePreview {
        matchers: plan.matchers.unwrap_or_default(),
        unavailable,
        active,
    }
}

/// Alertmanager's ids are UUIDs; anything else is not put in a URL path.
fn is_silence_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}
