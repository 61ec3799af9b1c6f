//! Limited attempts, counted in the database so every replica counts alike: password sign-in
//! (10 per username and 50 per address per 15 minutes, even the right password is refused past
//! them), sign-ups, device sign-ins, unknown device codes and single sign-ons per address.
//!
//! Each attempt is reserved before the work it guards (an argon2 hash, a row) by one
//! conditional upsert on its (kind, subject) counter row, which both counts and decides: two
//! concurrent attempts serialize on that row on PostgreSQL as on SQLite, so a burst cannot pass
//! a check made before any of it was counted. A sign-in that turns out right gives its
//! reservation back (`give_back`), so only failures use up the limit.

use crate::{Core, Error, Result};

pub const WINDOW: i64 = 15 * 60;
pub const PER_USERNAME: i64 = 10;
pub const PER_ADDRESS: i64 = 50;
/// Sign-up attempts per address per `WINDOW`: a room of people joining through one office
/// network fits; a script creating accounts (each an argon2 hash) does not.
pub const SIGNUPS_PER_ADDRESS: i64 = 50;
/// Single sign-ons started per address per `WINDOW`: each leaves a row until it is used or
/// expires, so a script cannot fill the table; an office behind one address still fits.
pub const SSO_STARTS_PER_ADDRESS: i64 = 100;
/// Device sign-ins started per address per `WINDOW`: a person signs in a few terminals a day.
pub const DEVICE_STARTS_PER_ADDRESS: i64 = 30;
/// Polls with unknown device codes per address per `WINDOW`: a client that lost its code stops
/// soon; a guesser stops here.
pub const UNKNOWN_DEVICE_CODES_PER_ADDRESS: i64 = 30;

/// Verification codes mailed for one person's addresses per `WINDOW`, and to one address from
/// anyone: adding and removing an address again cannot make Klaxon mail a stranger over and over.
pub const CODE_MAILS_PER_USER: i64 = 10;
pub const CODE_MAILS_PER_ADDRESS: i64 = 3;

/// Test sends (a test page, a contact method's test, a channel's test) per person and per
/// target per `WINDOW`: enough to set a phone up and try it again; not enough to flood a topic,
/// a room or a mailbox through the install's shared token, quota or bot, nor to hold outbound
/// connections by the hundred against a destination that never answers.
pub const TESTS_PER_PERSON: i64 = 20;
pub const TESTS_PER_TARGET: i64 = 5;

/// Wrong chat link codes typed by one chat account per `WINDOW`: a typo or two; not a guesser's
/// way through a million six-digit codes.
pub const LINK_CODES_PER_ACCOUNT: i64 = 5;

/// What is counted, each with its limit per `WINDOW`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// Password checks of one username (sign-in, current password, device approval).
    PasswordOfUsername,
    /// Password checks from one address.
    PasswordFromAddress,
    /// Sign-ups (`SIGNUPS_PER_ADDRESS`).
    Signup,
    /// Device sign-ins started (`DEVICE_STARTS_PER_ADDRESS`).
    DeviceStart,
    /// Polls with a device code that does not exist (`UNKNOWN_DEVICE_CODES_PER_ADDRESS`).
    UnknownDeviceCode,
    /// Single sign-ons started (`SSO_STARTS_PER_ADDRESS`).
    SsoStart,
    /// Verification codes mailed for one person (`CODE_MAILS_PER_USER`).
    CodeMailForUser,
    /// Verification codes mailed to one address (`CODE_MAILS_PER_ADDRESS`).
    CodeMailToAddress,
    /// Test sends by one person (`TESTS_PER_PERSON`).
    TestByPerson,
    /// Test sends to one target (`TESTS_PER_TARGET`).
    TestToTarget,
    /// Wrong link codes from one chat account (`LINK_CODES_PER_ACCOUNT`).
    ChatLinkCode,
}

impl Attempt {
    fn word(self) -> &'static str {
        match self {
            Attempt::PasswordOfUsername => "password_username",
            Attempt::PasswordFromAddress => "password_address",
            Attempt::Signup => "signup",
            Attempt::DeviceStart => "device_start",
            Attempt::UnknownDeviceCode => "unknown_device_code",
            Attempt::SsoStart => "sso_start",
            Attempt::CodeMailForUser => "code_mail_user",
            Attempt::CodeMailToAddress => "code_mail_address",
            Attempt::TestByPerson => "test_person",
            Attempt::TestToTarget => "test_target",
            Attempt::ChatLinkCode => "chat_link_code",
        }
    }

    fn limit(self) -> i64 {
        match self {
            Attempt::PasswordOfUsername => PER_USERNAME,
            Attempt::PasswordFromAddress => PER_ADDRESS,
            Attempt::Signup => SIGNUPS_PER_ADDRESS,
            Attempt::DeviceStart => DEVICE_STARTS_PER_ADDRESS,
            Attempt::UnknownDeviceCode => UNKNOWN_DEVICE_CODES_PER_ADDRESS,
            Attempt::SsoStart => SSO_STARTS_PER_ADDRESS,
            Attempt::CodeMailForUser => CODE_MAILS_PER_USER,
            Attempt::CodeMailToAddress => CODE_MAILS_PER_ADDRESS,
            Attempt::TestByPerson => TESTS_PER_PERSON,
            Attempt::TestToTarget => TESTS_PER_TARGET,
            Attempt::ChatLinkCode => LINK_CODES_PER_ACCOUNT,
        }
    }

    /// The refusal's sentence, given the minutes to wait.
    fn refusal(self, minutes: i64) -> String {
        let what = match self {
            Attempt::PasswordOfUsername => "failed sign-ins for this username",
            Attempt::PasswordFromAddress => "failed sign-ins from this address",
            Attempt::Signup => "sign-ups from this address",
            Attempt::DeviceStart => "terminal sign-ins from this address",
            Attempt::UnknownDeviceCode => "unknown device codes from this address",
            Attempt::SsoStart => "single sign-ons from this address",
            Attempt::CodeMailForUser => "verification codes mailed for this person",
            Attempt::CodeMailToAddress => "verification codes mailed to this address",
            Attempt::TestByPerson => "test messages sent by this person",
            Attempt::TestToTarget => "test messages sent to this destination",
            Attempt::ChatLinkCode => "wrong link codes from this chat account",
        };
        format!("too many {what}; try again in {minutes} minutes")
    }
}

/// An attempt counted in its window; `give_back` returns it.
#[derive(Debug, Clone)]
pub(crate) struct Reserved {
    kind: Attempt,
    subject: String,
    window_start: i64,
}

/// A password check's two reservations: its username's and its address's.
#[derive(Debug, Clone)]
pub(crate) struct PasswordAttempt(Reserved, Reserved);

impl Core {
    /// Counts a test send by `person` to `target` (a topic, an address, a URL, a channel), or
    /// refuses it (`TESTS_PER_PERSON`, `TESTS_PER_TARGET`). The target is counted by its hash:
    /// a URL can hold a credential.
    pub(crate) async fn reserve_test(&self, person: i64, target: &str) -> Result<()> {
        let by = self
            .reserve(Attempt::TestByPerson, &person.to_string())
            .await?;
        let to = self
            .reserve(Attempt::TestToTarget, &crate::secrets::hash_token(target))
            .await;
        if to.is_err() {
            // Not sent: it does not count against the person.
            self.give_back(&by).await?;
        }
        to.map(drop)
    }

    /// Counts one attempt of `kind` by `subject`, or refuses it with `RateLimited` when the
    /// window's limit is used up. Counting and deciding are one statement.
    pub(crate) async fn reserve(&self, kind: Attempt, subject: &str) -> Result<Reserved> {
        let now = self.now();
        let expired = now - WINDOW;
        let counted: Option<(i64,)> = sqlx::query_as(
            "INSERT INTO attempt_counts (kind, subject, window_start, attempts) VALUES ($1, $2, $3, 1) \
             ON CONFLICT (kind, subject) DO UPDATE SET \
               window_start = CASE WHEN attempt_counts.window_start <= $4 THEN $3 ELSE attempt_counts.window_start END, \
               attempts = CASE WHEN attempt_counts.window_start <= $4 THEN 1 ELSE attempt_counts.attempts + 1 END \
             WHERE attempt_counts.window_start <= $4 OR attempt_counts.attempts < $5 \
             RETURNING window_start",
        )
        .bind(kind.word())
        .bind(subject)
        .bind(now)
        .bind(expired)
        .bind(kind.limit())
        .fetch_optional(&self.db.pool)
        .await?;
        if let Some((window_start,)) = counted {
            return Ok(Reserved {
                kind,
                subject: subject.to_string(),
                window_start,
            });
        }
        let (window_start,): (i64,) = sqlx::query_as(
            "SELECT window_start FROM attempt_counts WHERE kind = $1 AND subject = $2",
        )
        .bind(kind.word())
        .bind(subject)
        .fetch_optional(&self.db.pool)
        .await?
        .unwrap_or((now,));
        let retry_after = (window_start + WINDOW - now).max(1);
        Err(Error::RateLimited {
            retry_after,
            message: kind.refusal((retry_after + 59) / 60),
        })
    }

    /// Gives a reserved attempt back (it turned out not to count), unless its window has ended.
    pub(crate) async fn give_back(&self, reserved: &Reserved) -> Result<()> {
        sqlx::query(
            "UPDATE attempt_counts SET attempts = attempts - 1 \
             WHERE kind = $1 AND subject = $2 AND window_start = $3 AND attempts > 0",
        )
        .bind(reserved.kind.word())
        .bind(&reserved.subject)
        .bind(reserved.window_start)
        .execute(&self.db.pool)
        .await?;
        Ok(())
    }

    /// Reserves a password check of `username` from `address`, before any hashing: refused
    /// while either is over its limit.
    pub(crate) async fn reserve_password_check(
        &self,
        username: &str,
        address: &str,
    ) -> Result<PasswordAttempt> {
        let user = self
            .reserve(Attempt::PasswordOfUsername, &username.to_lowercase())
            .await?;
        match self.reserve(Attempt::PasswordFromAddress, address).await {
            Ok(from) => Ok(PasswordAttempt(user, from)),
            Err(e) => {
                self.give_back(&user).await?;
                Err(e)
            }
        }
    }

    /// The password was right: the check does not count against either limit.
    pub(crate) async fn password_check_passed(&self, attempt: &PasswordAttempt) -> Result<()> {
        self.give_back(&attempt.0).await?;
        self.give_back(&attempt.1).await
    }

    /// Forgets counters whose window has ended (the sweeper's pass calls it).
    pub async fn forget_old_attempts(&self) -> Result<()> {
        sqlx::query("DELETE FROM attempt_counts WHERE window_start <= $1")
            .bind(self.now() - WINDOW)
            .execute(&self.db.pool)
            .await?;
        Ok(())
    }
}
