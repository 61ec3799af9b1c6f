//! Proving a Matrix room. The install's one bot can post in any room it can join, so naming a
//! room proves nothing: a new Matrix channel hears nothing until a moderator or administrator
//! of the room posts the channel's one-time code there and a team owner asks Klaxon to check.
//! The room the code was read in is then the channel's (by id: an alias can later be moved to
//! another room), and a room is one channel of one team.

use crate::db::Tx;
use crate::roads::matrix::ProofFailure;
use crate::{Actor, Core, Error, Result};
use klaxon_domain::channel::{Channel, ChannelKind, ChannelState};
use klaxon_domain::ids::TeamId;
use rand::Rng;

/// Why a channel cannot be tested yet.
pub(super) const PROVE_FIRST: &str =
    "this Matrix room is not proven yet: post the channel's code in the room, then check it";

/// A fresh one-time code, easy to type on a phone: `klaxon-` and two groups of four letters
/// and digits that cannot be mistaken for one another.
pub(super) fn new_code() -> String {
    const ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";
    let mut rng = rand::thread_rng();
    let mut group = || -> String {
        (0..4)
            .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char)
            .collect()
    };
    format!("klaxon-{}-{}", group(), group())
}

/// Makes a channel unproven again, with a new code, and drops what it had still to send.
pub(super) async fn unprove(tx: &mut Tx, id: i64) -> Result<()> {
    sqlx::query(
        "UPDATE channels SET proof_code = $1, room_id = NULL, proven_at = NULL WHERE id = $2",
    )
    .bind(new_code())
    .bind(id)
    .execute(&mut **tx)
    .await?;
    sqlx::query("DELETE FROM channel_posts WHERE channel_id = $1 AND state = 'pending'")
        .bind(id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

impl Core {
    /// Checks a Matrix channel's room for its code (team owner): the channel, proven, when a
    /// moderator or administrator of the room posted it there; 409 with what to do when not.
    /// A proven channel is answered as it is. Each check counts as a test of the channel.
    pub async fn prove_channel(&self, actor: &Actor, team_id: TeamId, id: i64) -> Result<Channel> {
        let TeamId(team) = team_id;
        self.require_team_owner(actor, team).await?;
        let channel = self.channel_row(team, id).await?;
        if channel.kind != ChannelKind::Matrix {
            return Err(Error::Invalid(
                "only a Matrix room is proven: a webhook's URL is its proof".into(),
            ));
        }
        if channel.state != ChannelState::Unproven {
            return Ok(channel);
        }
        let Some(bot) = self.roads.matrix_bot() else {
            return Err(Error::Invalid(
                "kind: no Matrix homeserver is configured (KLAXON_MATRIX_HOMESERVER)".into(),
            ));
        };
        let code = channel.proof_code.clone().unwrap_or_default();
        self.reserve_test(actor.user_id, &format!("channel:{id}"))
            .await?;
        let room_id = match bot.prove_room(&channel.target, &code).await {
            Ok(room_id) => room_id,
            Err(ProofFailure::NotYet(why)) => return Err(Error::Conflict(why)),
            Err(ProofFailure::Unreachable(why)) => return Err(Error::Upstream(why)),
        };
        // The code must still be the channel's: a retarget while the bot read the room made a
        // new one, and this proof was for the old room.
        let done = sqlx::query(
            "UPDATE channels SET room_id = $1, proven_at = $2, proof_code = NULL \
             WHERE id = $3 AND team_id = $4 AND proof_code = $5",
        )
        .bind(&room_id)
        .bind(self.now())
        .bind(id)
        .bind(team)
        .bind(&code)
        .execute(&self.db.pool)
        .await
        .map_err(Error::unique(format!(
            "{} is already another channel's: a room announces for one channel of one team",
            channel.target
        )))?;
        if done.rows_affected() == 0 {
            return Err(Error::Conflict(
                "the channel changed while its room was checked: check it again".into(),
            ));
        }
        self.channel_row(team, id).await
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn codes_are_fresh_and_typeable() {
        let a = super::new_code();
        assert_eq!(a.len(), "klaxon-abcd-efgh".len());
        assert!(a.starts_with("klaxon-"));
        assert!(!a[7..].contains(['0', 'o', '1', 'l', 'i']), "{a}");
        assert_ne!(a, super::new_code());
    }
}
