//! The on-call schedule: one member of a team per date of its on-call day (`core::oncall`).

mod covers;
mod day;
mod feed;
mod handoff;
mod log;
mod overview;
mod rota;
mod rotations;
mod swaps;

pub use log::MAX_CHANGES;

use crate::authz;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::calendar::parse_date;
use klaxon_domain::ids::{TeamId, UserId};
use klaxon_domain::rotation::ChangeKind;
use klaxon_domain::schedule::ScheduleEntry;
use log::{log_change, Change};
use serde::Serialize;

use klaxon_domain::calendar::Day;
/// At most a year of dates in one request.
pub use klaxon_domain::calendar::MAX_DATES;

/// `GET /api/schedule/current`: who holds each of the caller's teams today.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CurrentHolder {
    pub team_id: i64,
    pub team_name: String,
    pub date: String,
    pub user_id: i64,
    pub username: String,
    /// Set when they hold it by a partial-day cover (its id); the day's holder is back after.
    pub cover_id: Option<i64>,
}

/// An optional date filter: absent is no bound; present (even empty) must be a date, as the
/// document's `format: date` says.
fn date_param(name: &str, v: Option<&str>) -> Result<Option<String>> {
    v.map(|s| {
        parse_date(s)
            .map(|_| s.to_string())
            .ok_or_else(|| Error::Invalid(format!("{name} must be a date YYYY-MM-DD")))
    })
    .transpose()
}

impl Core {
    /// Gives `user_id` the shifts on `dates`, all or nothing: any date already taken is a 409
    /// and nothing is stored. The user must be a member of the team; so must the caller.
    pub async fn create_shifts(
        &self,
        actor: &Actor,
        team_id: TeamId,
        user_id: UserId,
        dates: &[Day],
    ) -> Result<Vec<ScheduleEntry>> {
        let (TeamId(team_id), UserId(user_id)) = (team_id, user_id);
        let access = self.team_access(actor, team_id).await?;
        authz::require_own_date_or_owner(actor, access, user_id)?;
        if dates.is_empty() || dates.len() > MAX_DATES {
            return Err(Error::Invalid(format!(
                "dates must hold 1 to {MAX_DATES} dates"
            )));
        }
        let mut sorted: Vec<String> = dates.iter().map(Day::to_string).collect();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != dates.len() {
            return Err(Error::Invalid("dates: a date appears twice".into()));
        }
        let username = self
            .member_username(TeamId(team_id), UserId(user_id))
            .await?
            .ok_or_else(|| {
                Error::Invalid("user_id: a shift can only be given to a member of the team".into())
            })?;
        let mut tx = self.db.begin().await?;
        for d in &sorted {
            sqlx::query("INSERT INTO schedule (team_id, date, user_id) VALUES ($1, $2, $3)")
                .bind(team_id)
                .bind(d)
                .bind(user_id)
                .execute(&mut *tx)
                .await
                .map_err(Error::unique(format!(
                    "{d} already has someone on call; nothing was stored"
                )))?;
        }
        let text = match sorted.as_slice() {
            [one] => format!("{} gave {one} to {username}", actor.username),
            [first, .., last] => format!(
                "{} gave {} dates, {first} to {last}, to {username}",
                actor.username,
                sorted.len()
            ),
            [] => unreachable!("dates were checked to be present"),
        };
        log_change(
            &mut tx,
            Change {
                team_id,
                date: &sorted[0],
                kind: ChangeKind::Assigned,
                actor_id: Some(actor.user_id),
                from_user_id: None,
                to_user_id: Some(user_id),
                text: &text,
                at: self.now(),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(sorted
            .into_iter()
            .map(|date| ScheduleEntry {
                team_id,
                date,
                user_id,
                username: username.clone(),
            })
            .collect())
    }

    /// Shifts between `from` and `to`, both inclusive.
    pub async fn list_shifts(
        &self,
        actor: &Actor,
        team_id: i64,
        from: Option<&str>,
        to: Option<&str>,
    ) -> Result<Vec<ScheduleEntry>> {
        self.team_access(actor, team_id).await?;
        let (from, to) = (date_param("from", from)?, date_param("to", to)?);
        let rows: Vec<(String, i64, String)> = sqlx::query_as(
            "SELECT s.date, s.user_id, u.username FROM schedule s JOIN users u ON u.id = s.user_id \
             WHERE s.team_id = $1 AND ($2 IS NULL OR s.date >= $2) AND ($3 IS NULL OR s.date <= $3) ORDER BY s.date",
        )
        .bind(team_id)
        .bind(from)
        .bind(to)
        .fetch_all(&self.db.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(date, user_id, username)| ScheduleEntry {
                team_id,
                date,
                user_id,
                username,
            })
            .collect())
    }

    /// Removes a date: the holder's own, or anyone's for the team's owner; logged.
    pub async fn delete_shift(&self, actor: &Actor, team_id: i64, date: Day) -> Result<()> {
        let access = self.team_access(actor, team_id).await?;
        let date = &date.to_string();
        let mut tx = self.db.begin().await?;
        let held: (i64, String) = sqlx::query_as(
            "SELECT s.user_id, u.username FROM schedule s JOIN users u ON u.id = s.user_id \
             WHERE s.team_id = $1 AND s.date = $2",
        )
        .bind(team_id)
        .bind(date)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(Error::NotFound)?;
        authz::require_own_date_or_owner(actor, access, held.0)?;
        // Deleted only while the same person holds it, so a swap in between is not undone.
        let done =
            sqlx::query("DELETE FROM schedule WHERE team_id = $1 AND date = $2 AND user_id = $3")
                .bind(team_id)
                .bind(date)
                .bind(held.0)
                .execute(&mut *tx)
                .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        log_change(
            &mut tx,
            Change {
                team_id,
                date,
                kind: ChangeKind::Removed,
                actor_id: Some(actor.user_id),
                from_user_id: Some(held.0),
                to_user_id: None,
                text: &format!("{} removed {date} from {}", actor.username, held.1),
                at: self.now(),
            },
        )
        .await?;
        tx.commit().await?;
        Ok(())
    }

    /// Who holds each of the caller's teams' pager now (a cover's person, else the holder of
    /// the team's day in progress), for the teams where someone does.
    pub async fn current_holders(&self, actor: &Actor) -> Result<Vec<CurrentHolder>> {
        let now = self.now();
        let mut out = Vec::new();
        let mut conn = self.db.pool.acquire().await?;
        for team in self.list_teams(actor, None).await? {
            let date = crate::oncall::today(&mut conn, team.id, now).await?;
            let Some(holder) = crate::oncall::holder_at(&mut conn, team.id, now).await? else {
                continue;
            };
            let (username,): (String,) = sqlx::query_as("SELECT username FROM users WHERE id = $1")
                .bind(holder.user_id)
                .fetch_one(&mut *conn)
                .await?;
            out.push(CurrentHolder {
                team_id: team.id,
                team_name: team.name,
                date,
                user_id: holder.user_id,
                username,
                cover_id: holder.cover.map(|c| c.id),
            });
        }
        Ok(out)
    }

    /// The team's schedule as an iCalendar feed: one event per date, at the real instants its
    /// on-call day starts and ends (UTC), with the team's zone named for calendars that show
    /// it.
    pub async fn schedule_ics(&self, actor: &Actor, team_id: i64) -> Result<String> {
        let team = self.get_team(actor, team_id).await?;
        let shifts = self.list_shifts(actor, team_id, None, None).await?;
        let days = {
            let mut conn = self.db.pool.acquire().await?;
            crate::oncall::team_days(&mut conn, team_id).await?
        };
        let utc = |t: i64| {
            klaxon_domain::Timestamp(t)
                .to_rfc3339()
                .replace(['-', ':'], "")
        };
        let stamp = utc(self.now());
        let host = self
            .config
            .public_url
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .to_string();
        let mut out = String::from("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Klaxon//On-call schedule//EN\r\nCALSCALE:GREGORIAN\r\n");
        out.push_str(&format!(
            "X-WR-CALNAME:{} on call\r\nX-WR-TIMEZONE:{}\r\n",
            ics_text(&team.display_name),
            ics_text(days.rule().zone_name())
        ));
        for s in shifts {
            let Ok(date) = s.date.parse::<jiff::civil::Date>() else {
                continue;
            };
            let (start, end) = days.day_bounds(date);
            if start >= end {
                // A date a change of hand-off left without hours.
                continue;
            }
            out.push_str("BEGIN:VEVENT\r\n");
            out.push_str(&format!(
                "UID:{}-{}@{}\r\n",
                team.id,
                s.date.replace('-', ""),
                ics_text(&host)
            ));
            out.push_str(&format!("DTSTAMP:{stamp}\r\n"));
            out.push_str(&format!("DTSTART:{}\r\nDTEND:{}\r\n", utc(start), utc(end)));
            out.push_str(&format!(
                "SUMMARY:On call: {} ({})\r\n",
                ics_text(&s.username),
                ics_text(&team.display_name)
            ));
            out.push_str("END:VEVENT\r\n");
        }
        out.push_str("END:VCALENDAR\r\n");
        Ok(out)
    }
}

/// Escapes iCalendar TEXT values.
fn ics_text(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace(';', "\\;")
        .replace(',', "\\,")
        .replace(['\r', '\n'], " ")
}
