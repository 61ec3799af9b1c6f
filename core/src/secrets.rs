//! Secrets: random tokens stored only as SHA-256 hashes, passwords as argon2id.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use hmac::{Hmac, Mac};
use rand::distributions::Alphanumeric;
use rand::Rng;
use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// Length of API keys, session tokens and other bearer secrets.
pub const TOKEN_LEN: usize = 64;

/// A fresh 64-character alphanumeric secret (about 380 bits).
pub fn new_token() -> String {
    // The thread's CSPRNG (ChaCha, seeded and reseeded from the OS): drawing each character
    // from OsRng costs a system call per character, which showed in batches of pages.
    rand::thread_rng()
        .sample_iter(&Alphanumeric)
        .take(TOKEN_LEN)
        .map(char::from)
        .collect()
}

/// True when `s` has the shape of a token; anything else is refused before a lookup.
pub fn looks_like_token(s: &str) -> bool {
    s.len() == TOKEN_LEN && s.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// What is stored of a token. Tokens are found by this hash through a unique index, so no
/// secret is ever compared in memory (and no comparison can leak timing).
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// argon2id with the crate's recommended parameters. CPU-heavy: async code goes through `Hasher`.
pub fn hash_password(password: &str) -> String {
    let salt = SaltString::generate(&mut rand::rngs::OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .expect("argon2 hashing with default parameters cannot fail")
}

pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|h| {
            Argon2::default()
                .verify_password(password.as_bytes(), &h)
                .is_ok()
        })
        .unwrap_or(false)
}

/// The argon2 work of one process: a few dedicated threads (one per core, at most 8) and a
/// short queue in front of them. Each hash holds about 19 MiB while it runs, so the threads
/// bound the memory a flood of sign-ins can take (the runtime's blocking pool would run up to
/// 512 at once, and the allocator keeps what each thread used); a caller finding the queue full
/// is told to come back (`Error::Overloaded`, 503 with `Retry-After`) instead of waiting longer.
pub struct Hasher {
    jobs: std::sync::mpsc::SyncSender<Job>,
}

type Job = Box<dyn FnOnce() + Send>;

impl Hasher {
    /// Hashing threads sized to the machine, and a queue of 32 jobs per thread: a waiting job
    /// holds no hashing memory, and the longest wait stays near a second.
    pub fn for_this_machine() -> Hasher {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        Hasher::new(workers, 32 * workers)
    }

    pub fn new(workers: usize, queue: usize) -> Hasher {
        let (jobs, rx) = std::sync::mpsc::sync_channel::<Job>(queue);
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        for n in 0..workers.max(1) {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("klaxon-hash-{n}"))
                .spawn(move || loop {
                    // The lock is held only to take a job; ends when the `Hasher` is dropped.
                    let job = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                })
                .expect("a hashing thread starts");
        }
        Hasher { jobs }
    }

    /// Runs `work` on a hashing thread, or refuses at once when the queue is full.
    async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Result<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.jobs
            .try_send(Box::new(move || {
                let _ = tx.send(work());
            }))
            .map_err(|_| Error::Overloaded {
                retry_after: 1,
                message: "the server is busy checking passwords; try again in a second".into(),
            })?;
        rx.await
            .map_err(|_| Error::Internal("a hashing thread stopped".into()))
    }

    /// Hashes a new password.
    pub async fn hash(&self, password: String) -> Result<String> {
        self.run(move || hash_password(&password)).await
    }

    /// Verifies a password. With no stored hash it still spends the same work, so an unknown
    /// username takes as long to refuse as a wrong password.
    pub async fn verify(&self, password: String, hash: Option<String>) -> Result<bool> {
        self.run(move || match hash {
            Some(h) => verify_password(&password, &h),
            None => {
                let _ = hash_password(&password);
                false
            }
        })
        .await
    }
}

/// `Klaxon-Signature` for `body` sent at `t`: `t=<t>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
pub fn webhook_signature(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_time_dot_body() {
        // RFC 4231 test case 2 ("Jefe"), with the message split as "<t>." + body.
        assert_eq!(
            webhook_signature("Jefe", 0, b"what do ya want for nothing?"),
            "t=0,v1=".to_string()
                + &{
                    let mut mac = Hmac::<Sha256>::new_from_slice(b"Jefe").unwrap();
                    mac.update(b"0.what do ya want for nothing?");
                    hex::encode(mac.finalize().into_bytes())
                }
        );
        let s = webhook_signature("secret", 1_795_305_600, b"{}");
        assert!(s.starts_with("t=1795305600,v1="));
        assert_eq!(s.len(), "t=1795305600,v1=".len() + 64);
    }

    #[test]
    fn tokens_are_64_alphanumeric_and_distinct() {
        let a = new_token();
        assert!(looks_like_token(&a));
        assert_ne!(a, new_token());
        assert!(!looks_like_token(&a[..63]));
        assert!(!looks_like_token(&format!("{}!", &a[..63])));
    }

    #[tokio::test]
    async fn a_full_queue_refuses_at_once_and_the_hasher_recovers() {
        let hasher = std::sync::Arc::new(Hasher::new(1, 1));
        // One running, one queued; of the rest, each is refused without waiting.
        let tries: Vec<_> = (0..8)
            .map(|_| {
                let h = hasher.clone();
                tokio::spawn(async move { h.hash("a password".into()).await })
            })
            .collect();
        let mut refused = 0;
        for t in tries {
            match t.await.unwrap() {
                Ok(hash) => assert!(verify_password("a password", &hash)),
                Err(Error::Overloaded { retry_after, .. }) => {
                    assert_eq!(retry_after, 1);
                    refused += 1;
                }
                Err(e) => panic!("unexpected {e}"),
            }
        }
        assert!(refused >= 1, "a full queue must refuse");
        assert!(hasher.verify("x".into(), None).await.is_ok_and(|ok| !ok));
    }

    #[test]
    fn password_hash_verifies_only_the_password() {
        let h = hash_password("correct horse");
        assert!(h.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &h));
        assert!(!verify_password("wrong horse", &h));
        assert!(!verify_password("x", "not a hash"));
    }
}
