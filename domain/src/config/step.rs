//! One step of a plan (`plan`), and how the plan prints it: `+` makes, `~` changes, `-` deletes.

use super::{
    AlertSourceSpec, ChannelSpec, CoverSpec, DeadmanSwitchSpec, EscalationSpec, MaintenanceSpec,
    OidcSpec, RotationSpec, SettingsSpec,
};
use crate::team::Role;
use serde::Serialize;
use std::fmt;

/// One change, with what `apply` needs to make it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Step {
    Settings {
        to: SettingsSpec,
        changes: Vec<FieldChange>,
    },
    CreateTeam {
        team: String,
        display_name: Option<String>,
    },
    RenameTeam {
        team: String,
        from: String,
        to: String,
    },
    OncallDay {
        team: String,
        changes: Vec<FieldChange>,
        time_zone: String,
        handoff_time: String,
    },
    Oidc {
        team: String,
        to: OidcSpec,
    },
    AddMember {
        team: String,
        username: String,
        role: Role,
    },
    SetRole {
        team: String,
        username: String,
        from: Role,
        to: Role,
    },
    CreateAlertSource {
        team: String,
        source: AlertSourceSpec,
    },
    /// A source's templates or routing rules (those in `changes`), replaced.
    ChangeAlertSource {
        team: String,
        source: AlertSourceSpec,
        changes: Vec<FieldChange>,
    },
    CreateSwitch {
        team: String,
        switch: DeadmanSwitchSpec,
    },
    ChangeSwitch {
        team: String,
        switch: DeadmanSwitchSpec,
        changes: Vec<FieldChange>,
    },
    /// Rotations cannot be edited in place: a changed one is deleted and made again.
    CreateRotation {
        team: String,
        rotation: RotationSpec,
    },
    /// Gives `dates` to `username`, or with `None` leaves them to nobody; `replacing` are the
    /// dates among them someone else holds now, emptied first.
    Rota {
        team: String,
        username: Option<String>,
        dates: Vec<String>,
        replacing: Vec<String>,
    },
    Escalation {
        team: String,
        to: EscalationSpec,
        changes: Vec<FieldChange>,
    },
    HandoffNotices {
        team: String,
        to: bool,
    },
    /// `from_now`: the file's start has passed, so the window starts as it is made.
    CreateMaintenance {
        team: String,
        window: MaintenanceSpec,
        from_now: bool,
    },
    /// `from_now`: the file's start has passed, so the cover starts as it is made.
    CreateCover {
        team: String,
        cover: CoverSpec,
        from_now: bool,
    },
    EndCover {
        team: String,
        cover: CoverSpec,
    },
    CreateChannel {
        team: String,
        channel: ChannelSpec,
    },
    ChangeChannel {
        team: String,
        channel: ChannelSpec,
        changes: Vec<FieldChange>,
    },
    DeleteChannel {
        team: String,
        name: String,
    },
    EndMaintenance {
        team: String,
        window: MaintenanceSpec,
    },
    DeleteRotation {
        team: String,
        name: String,
    },
    DeleteSwitch {
        team: String,
        name: String,
    },
    /// Revokes the integration: its webhook URL stops working.
    DeleteAlertSource {
        team: String,
        name: String,
    },
    RemoveMember {
        team: String,
        username: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    pub field: String,
    pub from: String,
    pub to: String,
}

impl fmt::Display for Step {
    /// One line of the plan: `+` makes, `~` changes, `-` deletes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Long by design: one arm per kind of step, each its sentence in the plan.
        use Step::*;
        let changes = |f: &mut fmt::Formatter<'_>, list: &[FieldChange]| {
            for c in list {
                write!(f, "\n    {}: {} → {}", c.field, c.from, c.to)?;
            }
            Ok(())
        };
        match self {
            Settings { changes: c, .. } => {
                write!(f, "~ change settings")?;
                changes(f, c)
            }
            CreateTeam { team, .. } => write!(f, "+ create team {team}"),
            RenameTeam { team, from, to } => write!(
                f,
                "~ change team {team}\n    displayName: {from:?} → {to:?}"
            ),
            OncallDay {
                team, changes: c, ..
            } => {
                write!(f, "~ change team {team}'s on-call day")?;
                changes(f, c)
            }
            Oidc { team, to } => write!(
                f,
                "~ change team {team}'s single sign-on groups\n    members: {:?}, owners: {:?}",
                to.member_groups, to.owner_groups
            ),
            AddMember {
                team,
                username,
                role,
            } => write!(f, "+ add {username} to team {team} as {}", role.as_str()),
            SetRole {
                team,
                username,
                from,
                to,
            } => {
                write!(
                    f,
                    "~ change {username}'s role in team {team}\n    role: {} → {}",
                    from.as_str(),
                    to.as_str()
                )
            }
            CreateAlertSource { team, source } => {
                write!(
                    f,
                    "+ create alert source {team}/{} ({})",
                    source.name,
                    source.kind.as_str()
                )?;
                match source.rules.as_ref().map_or(0, Vec::len) {
                    0 => Ok(()),
                    1 => write!(f, " with 1 routing rule"),
                    n => write!(f, " with {n} routing rules"),
                }
            }
            ChangeAlertSource {
                team,
                source,
                changes: c,
            } => {
                write!(f, "~ change alert source {team}/{}", source.name)?;
                changes(f, c)
            }
            CreateSwitch { team, switch } => {
                write!(f, "+ create dead man's switch {team}/{}", switch.name)
            }
            ChangeSwitch {
                team,
                switch,
                changes: c,
            } => {
                write!(f, "~ change dead man's switch {team}/{}", switch.name)?;
                changes(f, c)
            }
            CreateRotation { team, rotation } => {
                write!(f, "+ create rotation {team}/{}", rotation.name)
            }
            Rota {
                team,
                username,
                dates,
                ..
            } => match username {
                Some(who) => write!(f, "~ rota of team {team}: {who} on {}", runs(dates)),
                None => write!(f, "- rota of team {team}: nobody on {}", runs(dates)),
            },
            Escalation {
                team, changes: c, ..
            } => {
                write!(f, "~ change team {team}'s escalation")?;
                changes(f, c)
            }
            HandoffNotices { team, to } => write!(
                f,
                "~ change team {team}'s hand-off notices\n    handoffNotices: {} → {to}",
                !to
            ),
            CreateMaintenance {
                team,
                window,
                from_now,
            } => {
                write!(
                    f,
                    "+ create maintenance window {team} {} – {}{}",
                    window.starts_at,
                    window.ends_at,
                    began(*from_now)
                )
            }
            CreateCover {
                team,
                cover,
                from_now,
            } => {
                write!(
                    f,
                    "+ create cover {team}: {} {} – {}{}",
                    cover.username,
                    cover.starts_at,
                    cover.ends_at,
                    began(*from_now)
                )
            }
            EndCover { team, cover } => {
                write!(
                    f,
                    "- end cover {team}: {} {} – {}",
                    cover.username, cover.starts_at, cover.ends_at
                )
            }
            CreateChannel { team, channel } => write!(
                f,
                "+ create channel {team}/{} ({})",
                channel.name,
                channel.kind.as_str()
            ),
            ChangeChannel {
                team,
                channel,
                changes: c,
            } => {
                write!(f, "~ change channel {team}/{}", channel.name)?;
                changes(f, c)
            }
            DeleteChannel { team, name } => write!(f, "- delete channel {team}/{name}"),
            EndMaintenance { team, window } => {
                write!(
                    f,
                    "- end maintenance window {team} {} – {}",
                    window.starts_at, window.ends_at
                )
            }
            DeleteRotation { team, name } => write!(f, "- delete rotation {team}/{name}"),
            DeleteSwitch { team, name } => write!(f, "- delete dead man's switch {team}/{name}"),
            DeleteAlertSource { team, name } => write!(
                f,
                "- delete alert source {team}/{name} (its webhook URL stops working)"
            ),
            RemoveMember { team, username } => write!(f, "- remove {username} from team {team}"),
        }
    }
}

/// Dates as their runs, the first few: `2026-12-07 to 2026-12-13, 2026-12-21 (8 dates)`.
fn runs(dates: &[String]) -> String {
    let runs = super::rota::runs(dates.iter().map(|d| (d.as_str(), "")));
    let mut shown: Vec<String> = runs
        .iter()
        .take(3)
        .map(|r| match r.from == r.to {
            true => r.from.clone(),
            false => format!("{} to {}", r.from, r.to),
        })
        .collect();
    if runs.len() > 3 {
        shown.push("…".into());
    }
    format!("{} ({} dates)", shown.join(", "), dates.len())
}

/// What a step's line adds when the file's start has passed.
fn began(from_now: bool) -> &'static str {
    if from_now {
        " (from now: the file's start has passed)"
    } else {
        ""
    }
}
