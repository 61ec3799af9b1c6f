//! What the phone providers send back: a call's keypresses, texts people send, and reports
//! that a call or a text did not reach its person. Each request is checked as its platform
//! documents before anything is read from it (`twilio`: `X-Twilio-Signature` over the public
//! URL and the form; `gateway`: HMAC-SHA256 over the body and a timestamp within five minutes);
//! one that fails changes nothing, is logged, and is answered 403. A person is acted for only
//! through a delivery's own token (`act`), which a text's reply code stands for (`texts`).

mod act;
mod gateway;
mod status;
mod texts;
mod twilio;
mod voice;

pub use act::Act;
pub use gateway::GATEWAY_PATH;
pub use twilio::Twilio;

use crate::{Core, Error, Result};

/// A form as a provider posted it, in order.
pub type Form = Vec<(String, String)>;

/// Reads a form body (`application/x-www-form-urlencoded`), as Twilio posts it.
pub fn form(body: &[u8]) -> Form {
    url::form_urlencoded::parse(body).into_owned().collect()
}

/// The value of `name` in `form`.
fn field<'a>(form: &'a Form, name: &str) -> Option<&'a str> {
    form.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The answer to a callback whose check failed, after it is logged.
fn refused(provider: &str, what: &str) -> Error {
    tracing::warn!(
        provider,
        what,
        "a phone callback failed its signature check; ignored"
    );
    Error::Forbidden(format!(
        "the request is not signed by this install's {provider} credentials"
    ))
}

impl Core {
    /// True the first time `provider` reports event `id` (a message's or an event's id);
    /// false for a replay, which is not acted on again. A day of ids is kept (the sweeper
    /// forgets older ones).
    async fn first_report(&self, provider: &str, id: &str) -> Result<bool> {
        let now = self.now();
        let done = sqlx::query(
            "INSERT INTO phone_seen (provider, event_id, at) VALUES ($1, $2, $3) \
             ON CONFLICT (provider, event_id) DO NOTHING",
        )
        .bind(provider)
        .bind(id.chars().take(200).collect::<String>())
        .bind(now)
        .execute(&self.db.pool)
        .await?;
        Ok(done.rows_affected() == 1)
    }
}
