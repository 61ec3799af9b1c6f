//! Team channels: announcements of what happens to a team's incidents, for everyone watching,
//! in a Matrix room, a Slack-format or Teams webhook, or Klaxon's signed webhook.
//!
//! - `crate::announcements` (a room of its own, below `timeline`): an event becomes one outbox
//!   row per channel that hears it, written in the transaction of the event (through `timeline`,
//!   which every change to an incident writes).
//! - `deliver`: every replica's announcer claims due rows, in order per channel, summarises a
//!   storm, sends, and retries with backoff; it runs beside the notifier, never inside its pass,
//!   so a slow chat service cannot hold a page back.
//! - `send` posts an announcement (`roads::announcement`) by the channel's road (`crate::roads`),
//!   which renders it its own way.
//!
//! A webhook's URL is a secret (whoever has it can post to the room): it is stored, used, and
//! never shown back; listings show its origin.

mod deliver;
mod proof;
mod record;
mod send;

use crate::roads::announcement::test_announcement;
use crate::roads::Owner;
use crate::secrets::new_token;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::alerting::Severity;
use klaxon_domain::channel::{
    check_target, join_words, normalize_events, normalize_severities, shown_target, split_words,
    Channel, ChannelChange, ChannelEvent, ChannelKind, ChannelState, NewChannel, NewChannelAnswer,
    MAX_CHANNELS,
};
use klaxon_domain::ids::TeamId;
use klaxon_domain::Timestamp;

pub use deliver::AnnounceReport;

#[derive(sqlx::FromRow)]
struct Row {
    id: i64,
    team_id: i64,
    name: String,
    #[sqlx(try_from = "String")]
    kind: ChannelKind,
    target: String,
    events: String,
    severities: String,
    created_at: i64,
    last_sent_at: Option<i64>,
    failing_since: Option<i64>,
    last_error: Option<String>,
    waiting: i64,
    proof_code: Option<String>,
    room_id: Option<String>,
}

const SELECT: &str = "SELECT c.id, c.team_id, c.name, c.kind, c.target, c.events, c.severities, \
     c.created_at, c.last_sent_at, c.failing_since, c.last_error, c.proof_code, c.room_id, \
     (SELECT COUNT(*) FROM channel_posts p WHERE p.channel_id = c.id AND p.state = 'pending') AS waiting \
     FROM channels c";

impl From<Row> for Channel {
    fn from(r: Row) -> Channel {
        let unproven = r.kind == ChannelKind::Matrix && r.room_id.is_none();
        let state = match (r.failing_since, r.last_sent_at) {
            _ if unproven => ChannelState::Unproven,
            (Some(_), _) => ChannelState::Failing,
            (None, Some(_)) => ChannelState::Ok,
            (None, None) => ChannelState::New,
        };
        Channel {
            id: r.id,
            team_id: r.team_id,
            name: r.name,
            target: shown_target(r.kind, &r.target),
            kind: r.kind,
            events: split_words(&r.events, ChannelEvent::parse),
            severities: split_words(&r.severities, Severity::parse),
            state,
            last_error: r.failing_since.and(r.last_error),
            failing_since: r.failing_since.map(Timestamp),
            last_sent_at: r.last_sent_at.map(Timestamp),
            waiting: r.waiting,
            proof_code: r.proof_code.filter(|_| unproven),
            created_at: Timestamp(r.created_at),
        }
    }
}

impl Core {
    /// Adds a channel to a team (team owner). A signed webhook gets its signing secret here,
    /// shown in this answer only; a Matrix room starts unproven, with its code.
    pub async fn create_channel(
        &self,
        actor: &Actor,
        team_id: TeamId,
        new: NewChannel,
    ) -> Result<NewChannelAnswer> {
        let TeamId(team_id) = team_id;
        self.require_team_owner(actor, team_id).await?;
        let target = self.channel_target(new.kind, &new.target)?;
        let events = normalize_events(new.events).map_err(Error::Invalid)?;
        let severities = normalize_severities(new.severities).map_err(Error::Invalid)?;
        let signed = self
            .roads
            .get(new.kind.as_str())
            .is_some_and(|r| r.info().signed);
        let secret = signed.then(new_token);
        let code = (new.kind == ChannelKind::Matrix).then(proof::new_code);
        let edits = self.channel_edits(new.kind, &target);
        let mut tx = self.db.begin().await?;
        // Holds the team's row, so two additions at once cannot both find room for one.
        sqlx::query("UPDATE teams SET id = id WHERE id = $1")
            .bind(team_id)
            .execute(&mut *tx)
            .await?;
        let (count,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM channels WHERE team_id = $1")
            .bind(team_id)
            .fetch_one(&mut *tx)
            .await?;
        if count >= MAX_CHANNELS as i64 {
            return Err(Error::Invalid(format!(
                "a team has at most {MAX_CHANNELS} channels"
            )));
        }
        let (id,): (i64,) = sqlx::query_as(
            "INSERT INTO channels (team_id, name, kind, target, signing_secret, events, severities, created_at, proof_code, edits) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id",
        )
        .bind(team_id)
        .bind(new.name.as_str())
        .bind(new.kind.as_str())
        .bind(&target)
        .bind(&secret)
        .bind(join_words(&events, ChannelEvent::as_str))
        .bind(join_words(&severities, Severity::as_str))
        .bind(self.now())
        .bind(code)
        .bind(edits)
        .fetch_one(&mut *tx)
        .await?;
        tx.commit().await?;
        Ok(NewChannelAnswer {
            channel: self.channel_row(team_id, id).await?,
            signing_secret: secret,
        })
    }

    /// A team's channels, oldest first (members of the team).
    pub async fn list_channels(&self, actor: &Actor, team_id: TeamId) -> Result<Vec<Channel>> {
        let TeamId(team_id) = team_id;
        self.team_access(actor, team_id).await?;
        let rows: Vec<Row> =
            sqlx::query_as(&format!("{SELECT} WHERE c.team_id = $1 ORDER BY c.id"))
                .bind(team_id)
                .fetch_all(&self.db.pool)
                .await?;
        Ok(rows.into_iter().map(Channel::from).collect())
    }

    /// Renames, retargets or changes what a channel hears (team owner). Posts already queued
    /// go to the new target, except for another Matrix room: it is unproven, with a new code,
    /// and what was queued for the old one is dropped.
    pub async fn update_channel(
        &self,
        actor: &Actor,
        team_id: TeamId,
        id: i64,
        change: ChannelChange,
    ) -> Result<Channel> {
        let TeamId(team_id) = team_id;
        self.require_team_owner(actor, team_id).await?;
        let current = self.channel_row(team_id, id).await?;
        let target = change
            .target
            .map(|t| self.channel_target(current.kind, &t))
            .transpose()?;
        let events = change
            .events
            .map(|e| normalize_events(Some(e)))
            .transpose()
            .map_err(Error::Invalid)?;
        let severities = change
            .severities
            .map(|s| normalize_severities(Some(s)))
            .transpose()
            .map_err(Error::Invalid)?;
        let other_room = current.kind == ChannelKind::Matrix
            && target.as_ref().is_some_and(|t| *t != current.target);
        let mut tx = self.db.begin().await?;
        if other_room {
            proof::unprove(&mut tx, id).await?;
        }
        sqlx::query(
            "UPDATE channels SET name = COALESCE($1, name), target = COALESCE($2, target), \
             events = COALESCE($3, events), severities = COALESCE($4, severities), \
             edits = COALESCE($7, edits) WHERE id = $5 AND team_id = $6",
        )
        .bind(change.name.map(|n| n.into_string()))
        .bind(&target)
        .bind(events.map(|e| join_words(&e, ChannelEvent::as_str)))
        .bind(severities.map(|s| join_words(&s, Severity::as_str)))
        .bind(id)
        .bind(team_id)
        .bind(target.as_ref().map(|t| self.channel_edits(current.kind, t)))
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
        self.channel_row(team_id, id).await
    }

    /// Removes a channel and whatever it had still to send (team owner).
    pub async fn delete_channel(&self, actor: &Actor, team_id: TeamId, id: i64) -> Result<()> {
        let TeamId(team_id) = team_id;
        self.require_team_owner(actor, team_id).await?;
        let done = sqlx::query("DELETE FROM channels WHERE id = $1 AND team_id = $2")
            .bind(id)
            .bind(team_id)
            .execute(&self.db.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(Error::NotFound);
        }
        Ok(())
    }

    /// Posts a test message to the channel now (team owner): 502 with a sentence saying what
    /// failed when it does not get through. The channel's state follows the outcome.
    pub async fn test_channel(&self, actor: &Actor, team_id: TeamId, id: i64) -> Result<()> {
        let TeamId(team_id) = team_id;
        self.require_team_owner(actor, team_id).await?;
        if self.channel_row(team_id, id).await?.state == ChannelState::Unproven {
            return Err(Error::Conflict(proof::PROVE_FIRST.into()));
        }
        self.reserve_test(actor.user_id, &format!("channel:{id}"))
            .await?;
        let target = self.channel_target_of(id).await?;
        let message = test_announcement(target.team_id, &target.team, &self.config.public_url);
        // The outcome is the channel's state too: a test that got through shows it working.
        match self
            .post_to(&target, &message, &format!("test-{}", new_token()), false)
            .await
        {
            Ok(()) => {
                sqlx::query("UPDATE channels SET last_sent_at = $1, failing_since = NULL, last_error = NULL WHERE id = $2")
                    .bind(self.now())
                    .bind(id)
                    .execute(&self.db.pool)
                    .await?;
                Ok(())
            }
            Err(failure) => {
                let sentence = failure.reason;
                sqlx::query("UPDATE channels SET failing_since = COALESCE(failing_since, $1), last_error = $2 WHERE id = $3")
                    .bind(self.now())
                    .bind(&sentence)
                    .bind(id)
                    .execute(&self.db.pool)
                    .await?;
                Err(Error::Upstream(sentence))
            }
        }
    }

    /// Whether the channel's road edits its messages there (`Road::edits`), as stored.
    fn channel_edits(&self, kind: ChannelKind, target: &str) -> i64 {
        let edits = self
            .roads
            .get(kind.as_str())
            .is_some_and(|r| r.edits(target));
        i64::from(edits)
    }

    async fn channel_row(&self, team_id: i64, id: i64) -> Result<Channel> {
        let row: Row = sqlx::query_as(&format!("{SELECT} WHERE c.team_id = $1 AND c.id = $2"))
            .bind(team_id)
            .bind(id)
            .fetch_optional(&self.db.pool)
            .await?
            .ok_or(Error::NotFound)?;
        Ok(row.into())
    }

    /// A target checked for its kind, on a road this install offers. An address written in a
    /// URL is checked now; a name, each time it is called.
    fn channel_target(&self, kind: ChannelKind, target: &str) -> Result<String> {
        let target = check_target(kind, target).map_err(Error::Invalid)?;
        let road = self
            .roads
            .usable(kind.as_str())
            .map_err(|why| Error::Invalid(format!("kind: {why}")))?;
        road.check(self, Owner::Team, &target)
            .map_err(Error::Invalid)
    }
}
