//! The configuration as a file (`domain::config`): what the server holds, read into the file's
//! shape for `GET /api/config`, `GET /api/teams/{id}/config` and the team page's "Export as
//! file". People are named by username and nothing secret is included: a webhook channel's URL
//! becomes the name of the environment variable `apply` reads it from.

use crate::{authz, Actor, Core, Result};
use klaxon_domain::channel::{Channel, ChannelKind};
use klaxon_domain::config::rota::runs;
use klaxon_domain::config::{
    AlertSourceSpec, ChannelSpec, ConfigFile, CoverSpec, DeadmanSwitchSpec, EscalationLevel,
    EscalationSpec, EscalationTarget, MaintenanceSpec, MemberSpec, OidcSpec, RotationSpec,
    SettingsSpec, TargetKind, TeamSpec,
};
use klaxon_domain::ids::TeamId;
use klaxon_domain::paging::{EscalationPolicy, Target};
use std::collections::HashMap;

impl Core {
    /// Every team and the settings (an administrator or an instance-scoped service account).
    pub async fn export_config(&self, actor: &Actor) -> Result<ConfigFile> {
        authz::require_instance_config(actor)?;
        let s = self.settings().await?;
        let settings = SettingsSpec {
            signup_mode: Some(s.signup_mode),
            notify_repeat_interval: Some(s.notify_repeat_interval.to_string()),
            stale_after: Some(s.stale_after.to_string()),
            archive_after: Some(s.archive_after.to_string()),
        };
        let mut ids: Vec<(String, i64)> =
            sqlx::query_as("SELECT name, id FROM teams ORDER BY name")
                .fetch_all(&self.db.pool)
                .await?;
        ids.sort();
        let mut teams = Vec::new();
        let names = self.usernames().await?;
        for (_, id) in ids {
            teams.push(self.team_spec(&actor.reading_team(id), id, &names).await?);
        }
        Ok(ConfigFile::new(Some(settings), teams))
    }

    /// One team, as a file of its own (any member).
    pub async fn export_team_config(&self, actor: &Actor, team_id: i64) -> Result<ConfigFile> {
        self.team_access(actor, team_id).await?;
        Ok(ConfigFile::new(
            None,
            vec![
                self.team_spec(actor, team_id, &self.usernames().await?)
                    .await?,
            ],
        ))
    }

    /// Every account's username by id: ladders and rotations name people by id, members or not.
    async fn usernames(&self) -> Result<HashMap<i64, String>> {
        Ok(
            sqlx::query_as::<_, (i64, String)>("SELECT id, username FROM users")
                .fetch_all(&self.db.pool)
                .await?
                .into_iter()
                .collect(),
        )
    }

    async fn team_spec(
        &self,
        actor: &Actor,
        team_id: i64,
        names: &HashMap<i64, String>,
    ) -> Result<TeamSpec> {
        let team = self.get_team(actor, team_id).await?;
        let members = self.list_members(actor, team_id).await?;
        let username = |id: i64| names.get(&id).cloned().unwrap_or_else(|| format!("#{id}"));
        let day = self.oncall_day(actor, team_id).await?;
        let ladder = self.escalation_policy(actor, team_id).await?;
        let mut rotations = Vec::new();
        for r in self.list_rotations(actor, team_id).await? {
            let mut turns = Vec::new();
            for id in &r.user_ids {
                turns.push(username(*id));
            }
            rotations.push(RotationSpec {
                name: r.name,
                members: turns,
                shift_days: r.shift_days,
                start_date: r.start_date,
                fill_days: None,
            });
        }
        // The dates from the team's today on; earlier ones are history.
        let shifts = self
            .list_shifts(actor, team_id, Some(&day.today), None)
            .await?;
        let rota = runs(
            shifts
                .iter()
                .map(|s| (s.date.as_str(), s.username.as_str())),
        );
        let mut alert_sources: Vec<AlertSourceSpec> = self
            .list_integrations(actor, team_id)
            .await?
            .into_iter()
            .map(|i| AlertSourceSpec {
                name: i.name,
                kind: i.kind,
                templates: i.templates,
                // Written only when there are some, so a file without rules stays short.
                rules: Some(i.rules).filter(|r| !r.is_empty()),
            })
            .collect();
        alert_sources.sort_by(|a, b| a.name.cmp(&b.name));
        let switches = file_switches(self.list_switches(actor, team_id).await?);
        let windows = self
            .list_maintenance(actor, team_id)
            .await?
            .into_iter()
            .map(|w| MaintenanceSpec {
                starts_at: w.starts_at.to_rfc3339(),
                ends_at: w.ends_at.to_rfc3339(),
            })
            .collect();
        let channels = channel_specs(
            &team.name,
            self.list_channels(actor, TeamId(team_id)).await?,
        );
        let covers = self
            .list_covers(actor, team_id)
            .await?
            .into_iter()
            .map(|c| CoverSpec {
                username: c.username,
                covering: c.covered_username,
                starts_at: c.starts_at.to_rfc3339(),
                ends_at: c.ends_at.to_rfc3339(),
            })
            .collect();
        let handoff = self.handoff_settings(actor, team_id).await?;
        let mut members: Vec<MemberSpec> = members
            .into_iter()
            .map(|m| MemberSpec {
                username: m.username,
                role: m.role,
            })
            .collect();
        members.sort_by(|a, b| a.username.cmp(&b.username));
        Ok(TeamSpec {
            name: team.name.clone(),
            display_name: Some(team.display_name),
            time_zone: Some(day.time_zone),
            handoff_time: Some(day.handoff_time),
            handoff_notices: Some(handoff.enabled),
            oidc: Some(OidcSpec {
                member_groups: team
                    .oidc
                    .member_groups
                    .iter()
                    .map(|g| g.as_str().to_string())
                    .collect(),
                owner_groups: team
                    .oidc
                    .owner_groups
                    .iter()
                    .map(|g| g.as_str().to_string())
                    .collect(),
            }),
            members: Some(members),
            alert_sources: Some(alert_sources),
            escalation: Some(ladder_spec(ladder, &username)),
            rotations: Some(rotations),
            rota: Some(rota),
            deadman_switches: Some(switches),
            maintenance_windows: Some(windows),
            channels: Some(channels),
            covers: Some(covers),
        })
    }
}

/// A team's ladder in the file's shape, people by username.
fn ladder_spec(ladder: EscalationPolicy, username: &dyn Fn(i64) -> String) -> EscalationSpec {
    let mut levels = Vec::new();
    for level in &ladder.levels {
        let mut targets = Vec::new();
        for t in &level.targets {
            targets.push(match t {
                Target::Oncall => EscalationTarget {
                    kind: TargetKind::Oncall,
                    username: None,
                },
                Target::User { user_id } => EscalationTarget {
                    kind: TargetKind::User,
                    username: Some(username(*user_id)),
                },
            });
        }
        levels.push(EscalationLevel {
            timeout: level.timeout.to_string(),
            targets,
        });
    }
    EscalationSpec {
        levels,
        repeat: ladder.repeat,
        fallback_topic: ladder
            .fallback_topic
            .and_then(|t| t.get().map(String::from)),
        low_urgency: ladder.low_urgency,
    }
}

/// A team's channels in the file's shape: a Matrix room by its id or alias, a webhook's URL (a
/// secret) by the environment variable `apply` reads it from.
fn channel_specs(team: &str, channels: Vec<Channel>) -> Vec<ChannelSpec> {
    channels
        .into_iter()
        .map(|c| {
            let (room, url_from_env) = match c.kind {
                ChannelKind::Matrix => (Some(c.target), None),
                _ => (None, Some(channel_env(team, &c.name))),
            };
            let every = c.events.len() == klaxon_domain::channel::ChannelEvent::ALL.len();
            ChannelSpec {
                name: c.name,
                kind: c.kind,
                room,
                url_from_env,
                events: (!every).then_some(c.events),
                severities: c.severities,
            }
        })
        .collect()
}

/// The environment variable an exported webhook channel's URL is read from:
/// `KLAXON_CHANNEL_{TEAM}_{NAME}`, upper-case, anything but letters and digits as `_`.
pub fn channel_env(team: &str, channel: &str) -> String {
    let part = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_uppercase()
                } else {
                    '_'
                }
            })
            .collect()
    };
    format!("KLAXON_CHANNEL_{}_{}", part(team), part(channel))
}

/// A team's switches as the file has them, by name. A switch fed by pings is not the file's: its
/// URL's key cannot be written in it.
fn file_switches(list: Vec<klaxon_domain::deadman::DeadmanSwitch>) -> Vec<DeadmanSwitchSpec> {
    let mut switches: Vec<DeadmanSwitchSpec> = list
        .into_iter()
        .filter(|s| !s.pings)
        .map(|s| DeadmanSwitchSpec {
            name: s.name,
            matcher: s.matcher,
            timeout: s.timeout.to_string(),
            severity: s.severity,
        })
        .collect();
    switches.sort_by(|a, b| a.name.cmp(&b.name));
    switches
}
