//! Texts: a page's reply code, and what people text back. A code ("a7") names one page's
//! acknowledge token among the texts to that number for a day, so "4 a7" from the number the
//! page went to acts on that page as its person, and the same words from another number act on
//! nothing. STOP and START are the carriers' words, honoured for every road by text.

use super::act::Act;
use crate::db::Tx;
use crate::roads::phone::words::{Reply, ACKNOWLEDGE, HELP};
use crate::roads::{Failure, Page};
use crate::secrets::hash_token;
use crate::{Core, Result};
use rand::Rng;

/// Letters and digits no one misreads (no i, l, o, 0 or 1).
const CODE_LETTERS: &[u8] = b"abcdefghjkmnpqrstuvwxyz";
const CODE_DIGITS: &[u8] = b"23456789";

/// A letter and `digits` digits: 184 codes of two characters, 1 472 of three, 11 776 of four.
fn new_code(digits: usize) -> String {
    let mut rng = rand::thread_rng();
    let mut code = String::new();
    code.push(CODE_LETTERS[rng.gen_range(0..CODE_LETTERS.len())] as char);
    for _ in 0..digits {
        code.push(CODE_DIGITS[rng.gen_range(0..CODE_DIGITS.len())] as char);
    }
    code
}

impl Core {
    /// The reply code of `page`'s text to `number`: the one it had when this is a retry, else a
    /// new one free for that number: two characters while they are easy to find free, then
    /// three, then four (a day of a text a minute, 1 440 codes, fits in four with room).
    pub(crate) async fn reply_code(
        &self,
        tx: &mut Tx,
        number: &str,
        page: &Page,
    ) -> std::result::Result<Option<String>, Failure> {
        let Some(ack) = &page.ack else {
            return Ok(None);
        };
        let db = |e: sqlx::Error| Failure::outage(format!("the database failed: {e}"));
        let hash = hash_token(&ack.token);
        let now = self.now();
        let kept: Option<(String,)> =
            sqlx::query_as("SELECT code FROM phone_replies WHERE number = $1 AND token_hash = $2")
                .bind(number)
                .bind(&hash)
                .fetch_optional(&mut **tx)
                .await
                .map_err(db)?;
        if let Some((code,)) = kept {
            return Ok(Some(code));
        }
        for attempt in 0..16 {
            let code = new_code((1 + attempt / 4).min(3));
            let made = sqlx::query(
                "INSERT INTO phone_replies (number, code, token_hash, expires_at) VALUES ($1, $2, $3, $4) \
                 ON CONFLICT (number, code) DO NOTHING",
            )
            .bind(number)
            .bind(&code)
            .bind(&hash)
            .bind(now + crate::paging::tokens::TOKEN_TTL)
            .execute(&mut **tx)
            .await
            .map_err(db)?;
            if made.rows_affected() == 1 {
                return Ok(Some(code));
            }
        }
        Err(Failure::outage("no reply code is free for this number"))
    }

    /// Whether `number` texted STOP (and not START since).
    pub(crate) async fn texted_stop(&self, number: &str) -> bool {
        sqlx::query_as::<_, (i64,)>("SELECT 1 FROM phone_stops WHERE number = $1")
            .bind(number)
            .fetch_optional(&self.db.pool)
            .await
            .ok()
            .flatten()
            .is_some()
    }

    /// Reads a text from `from` (E.164) and does what it asks; the answer to text back.
    pub(crate) async fn text_received(&self, from: &str, body: &str) -> Result<String> {
        match Reply::read(body) {
            Reply::Stop => {
                sqlx::query(
                    "INSERT INTO phone_stops (number, at) VALUES ($1, $2) ON CONFLICT (number) DO NOTHING",
                )
                .bind(from)
                .bind(self.now())
                .execute(&self.db.pool)
                .await?;
                Ok("Klaxon: no more texts will be sent to this number. Text START to get them again.".into())
            }
            Reply::Start => {
                sqlx::query("DELETE FROM phone_stops WHERE number = $1")
                    .bind(from)
                    .execute(&self.db.pool)
                    .await?;
                Ok("Klaxon: texts to this number start again.".into())
            }
            Reply::Help | Reply::Unknown => Ok(HELP.into()),
            Reply::Act { key, code } => {
                let found: Option<(String,)> = sqlx::query_as(
                    "SELECT token_hash FROM phone_replies WHERE number = $1 AND code = $2 AND expires_at > $3",
                )
                .bind(from)
                .bind(&code)
                .bind(self.now())
                .fetch_optional(&self.db.pool)
                .await?;
                let Some((hash,)) = found else {
                    return Ok(format!(
                        "Klaxon: no page to this number has the code {code}. {HELP}"
                    ));
                };
                let act = if key == ACKNOWLEDGE {
                    Act::Acknowledge
                } else {
                    Act::Resolve
                };
                Ok(format!("Klaxon: {}", self.act_by_token(&hash, act).await?))
            }
        }
    }
}
