//! Secrets: random tokens stored only as SHA-256 hashes, passwords as argon2id.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use rand::distributions::Alphanumeric;
use rand::Rng;
use sha2::{Digest, Sha256};

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

/// argon2id with the crate's recommended parameters. CPU-heavy: call from `spawn_blocking`.
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

/// Hashes off the async runtime.
pub async fn hash_password_async(password: String) -> String {
    tokio::task::spawn_blocking(move || hash_password(&password))
        .await
        .expect("hashing task panicked")
}

/// Verifies off the async runtime. With no stored hash it still spends the same work, so
/// an unknown username takes as long to refuse as a wrong password.
pub async fn verify_password_async(password: String, hash: Option<String>) -> bool {
    tokio::task::spawn_blocking(move || match hash {
        Some(h) => verify_password(&password, &h),
        None => {
            let _ = hash_password(&password);
            false
        }
    })
    .await
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_64_alphanumeric_and_distinct() {
        let a = new_token();
        assert!(looks_like_token(&a));
        assert_ne!(a, new_token());
        assert!(!looks_like_token(&a[..63]));
        assert!(!looks_like_token(&format!("{}!", &a[..63])));
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
