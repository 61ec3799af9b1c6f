//! Web Push's protocol: the message encrypted for the subscription (RFC 8291,
//! `aes128gcm` of RFC 8188), signed for by the install's VAPID key (RFC 8292), and posted to
//! the subscription's push service (RFC 8030) through the address policy for user-given URLs.
//! The key pair is made once per install and kept in the database, so every replica signs
//! with the same key the browsers subscribed with.

use crate::db::Db;
use crate::outbound::Outbound;
use crate::roads::{Failure, Sent};
use crate::Result;
use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes128Gcm, Nonce};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use hkdf::Hkdf;
use p256::ecdsa::signature::Signer;
use p256::ecdsa::{Signature, SigningKey};
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::{PublicKey, SecretKey};
use rand::RngCore;
use ring::agreement;
use sha2::Sha256;

/// How long a push service keeps a page for a phone that is offline (seconds): a page older
/// than an hour is better replaced by the reminder.
pub const TTL: u32 = 3600;
/// The record size written in the header: the whole message is one record under it.
const RECORD_SIZE: u32 = 4096;
/// Push services take at most 4096 bytes of body; the header and tag take 103 of them.
pub const MAX_PLAINTEXT: usize = 3993;

/// How long one signed VAPID header serves a push service (seconds). A JWT is valid 12 hours and
/// RFC 8292 lets one serve many messages: a storm signs once per push service, not per page.
const REUSE_FOR: i64 = 600;
/// Push services whose header is kept; endpoints are user-given, so the set is bounded.
const KEPT_ORIGINS: usize = 256;

/// The install's VAPID key pair.
pub struct Vapid {
    key: SigningKey,
    /// The uncompressed public key, base64url: the app subscribes with it.
    pub public_key: String,
    /// Signed headers by push service origin and contact, with when each was signed.
    signed: std::sync::Mutex<std::collections::HashMap<(String, String), (String, i64)>>,
}

impl Vapid {
    /// The install's key pair: read from the database, or made and stored on first start (a
    /// replica starting at the same moment reads the one that was stored first).
    pub async fn load_or_make(db: &Db, now: i64) -> Result<Vapid> {
        let secret = SecretKey::random(&mut rand::rngs::OsRng);
        let public = encode_point(&secret.public_key());
        sqlx::query(
            "INSERT INTO vapid_keys (id, private_key, public_key, created_at) VALUES (1, $1, $2, $3) \
             ON CONFLICT (id) DO NOTHING",
        )
        .bind(URL_SAFE_NO_PAD.encode(secret.to_bytes()))
        .bind(&public)
        .bind(now)
        .execute(&db.pool)
        .await?;
        let (private,): (String,) =
            sqlx::query_as("SELECT private_key FROM vapid_keys WHERE id = 1")
                .fetch_one(&db.pool)
                .await?;
        Vapid::from_private(&private).map_err(crate::Error::Invalid)
    }

    fn from_private(private: &str) -> std::result::Result<Vapid, String> {
        let bytes = URL_SAFE_NO_PAD
            .decode(private)
            .map_err(|e| format!("the stored VAPID key is not base64url: {e}"))?;
        let secret = SecretKey::from_slice(&bytes)
            .map_err(|_| "the stored VAPID key is not a P-256 key".to_string())?;
        Ok(Vapid {
            public_key: encode_point(&secret.public_key()),
            key: SigningKey::from(secret),
            signed: Default::default(),
        })
    }

    /// The `Authorization` header for a push service at `origin`, signed anew every `REUSE_FOR`.
    fn header(&self, origin: &str, subject: &str, unix_now: i64) -> String {
        let key = (origin.to_string(), subject.to_string());
        let fresh = |signed_at: i64| (0..REUSE_FOR).contains(&(unix_now - signed_at));
        {
            let signed = self.signed.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((header, _)) = signed.get(&key).filter(|(_, at)| fresh(*at)) {
                return header.clone();
            }
        }
        let header = self.authorization(origin, subject, unix_now);
        let mut signed = self.signed.lock().unwrap_or_else(|e| e.into_inner());
        if signed.len() >= KEPT_ORIGINS {
            signed.retain(|_, (_, at)| fresh(*at));
            if signed.len() >= KEPT_ORIGINS {
                signed.clear();
            }
        }
        signed.insert(key, (header.clone(), unix_now));
        header
    }

    /// The `Authorization` header for a push service at `origin`: a JWT valid for 12 hours
    /// (RFC 8292 allows 24), with `sub` the contact the push service may write to.
    fn authorization(&self, origin: &str, subject: &str, unix_now: i64) -> String {
        let header = URL_SAFE_NO_PAD.encode(br#"{"typ":"JWT","alg":"ES256"}"#);
        let claims = serde_json::json!({
            "aud": origin,
            "exp": unix_now + 12 * 3600,
            "sub": subject,
        });
        let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
        let signed = format!("{header}.{claims}");
        let signature: Signature = self.key.sign(signed.as_bytes());
        let jwt = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()));
        format!("vapid t={jwt}, k={}", self.public_key)
    }
}

fn encode_point(key: &PublicKey) -> String {
    URL_SAFE_NO_PAD.encode(key.to_encoded_point(false).as_bytes())
}

/// A subscription as stored: the endpoint and the browser's keys.
pub struct Subscription<'a> {
    pub endpoint: &'a str,
    /// base64url, as the browser gave it.
    pub p256dh: &'a str,
    pub auth: &'a str,
}

/// Encrypts `plaintext` for the browser holding `p256dh`/`auth` (RFC 8291): the body of one
/// `aes128gcm` push message, with its salt and the sender's one-time public key in its header.
pub fn encrypt(
    plaintext: &[u8],
    p256dh: &[u8],
    auth: &[u8],
) -> std::result::Result<Vec<u8>, String> {
    if plaintext.len() > MAX_PLAINTEXT {
        return Err(format!(
            "the message is {} bytes, over {MAX_PLAINTEXT}",
            plaintext.len()
        ));
    }
    // ECDH with a key pair made for this message alone (RFC 8291 §3.1), by ring: a storm
    // encrypts a message per page, and ring's P-256 takes a fraction of the time.
    let rng = ring::rand::SystemRandom::new();
    let as_secret = agreement::EphemeralPrivateKey::generate(&agreement::ECDH_P256, &rng)
        .map_err(|_| "could not make a key pair".to_string())?;
    let as_public = as_secret
        .compute_public_key()
        .map_err(|_| "could not make a key pair".to_string())?;
    let ua_public = agreement::UnparsedPublicKey::new(&agreement::ECDH_P256, p256dh);
    // IKM = HKDF(auth, ecdh_secret, "WebPush: info" || 0 || ua_public || as_public, 32)
    let mut key_info = b"WebPush: info\0".to_vec();
    key_info.extend_from_slice(p256dh);
    key_info.extend_from_slice(as_public.as_ref());
    let mut ikm = [0u8; 32];
    agreement::agree_ephemeral(as_secret, &ua_public, |shared| {
        Hkdf::<Sha256>::new(Some(auth), shared).expand(&key_info, &mut ikm)
    })
    .map_err(|_| "p256dh is not an uncompressed P-256 point".to_string())?
    .map_err(|_| "key derivation failed".to_string())?;

    let mut salt = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut salt);
    let prk = Hkdf::<Sha256>::new(Some(&salt), &ikm);
    let mut cek = [0u8; 16];
    let mut nonce = [0u8; 12];
    prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .and_then(|_| prk.expand(b"Content-Encoding: nonce\0", &mut nonce))
        .map_err(|_| "key derivation failed".to_string())?;

    // One record: the plaintext and the last-record delimiter, no padding.
    let mut record = plaintext.to_vec();
    record.push(2);
    let sealed = Aes128Gcm::new_from_slice(&cek)
        .map_err(|_| "bad content key".to_string())?
        .encrypt(Nonce::from_slice(&nonce), record.as_slice())
        .map_err(|_| "encryption failed".to_string())?;

    let mut body = Vec::with_capacity(86 + sealed.len());
    body.extend_from_slice(&salt);
    body.extend_from_slice(&RECORD_SIZE.to_be_bytes());
    body.push(as_public.as_ref().len() as u8);
    body.extend_from_slice(as_public.as_ref());
    body.extend_from_slice(&sealed);
    Ok(body)
}

/// Posts `payload` to the subscription. 404/410 mean the subscription is gone; another 4xx
/// but 429 is a refusal of this message; 429 carries its `Retry-After`; 5xx and no answer are
/// an outage of that push service.
pub async fn send(
    client: &Outbound,
    vapid: &Vapid,
    subject: &str,
    to: &Subscription<'_>,
    payload: &[u8],
) -> Sent {
    let decode = |what: &str, v: &str| {
        URL_SAFE_NO_PAD
            .decode(v.trim_end_matches('='))
            .map_err(|_| Failure::permanent(format!("the subscription's {what} is not base64url")))
    };
    let body = encrypt(
        payload,
        &decode("p256dh", to.p256dh)?,
        &decode("auth", to.auth)?,
    )
    .map_err(Failure::permanent)?;
    let origin = klaxon_domain::contact::push_origin(to.endpoint).map_err(Failure::permanent)?;
    let unix_now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let req = client
        .request(reqwest::Method::POST, to.endpoint)
        .header("TTL", TTL.to_string())
        .header("Urgency", "high")
        .header(reqwest::header::CONTENT_ENCODING, "aes128gcm")
        .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
        .header(
            reqwest::header::AUTHORIZATION,
            vapid.header(&origin, subject, unix_now),
        )
        .body(body);
    let res = client.send(req).await.map_err(|f| {
        Failure::outage(format!(
            "cannot reach the push service {origin}: it {}",
            f.sentence
        ))
    })?;
    let status = res.status;
    if status.is_success() {
        return Ok(());
    }
    let code = status.as_u16();
    let reason = format!("the push service {origin} answered {code}");
    Err(match code {
        404 | 410 => Failure {
            gone: true,
            ..Failure::permanent(format!("{reason}: the subscription is gone"))
        },
        429 => Failure {
            reason,
            retry_after: res
                .headers
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<i64>().ok())
                .filter(|s| *s >= 0),
            outage: true,
            rate_limited: true,
            ..Failure::default()
        },
        400..=499 => Failure::permanent(reason),
        _ => Failure::outage(reason),
    })
}

/// A browser's side of a subscription, its key pair and auth secret: the benchmark's push
/// service is one.
pub struct Receiver {
    secret: SecretKey,
    auth: [u8; 16],
}

impl Default for Receiver {
    fn default() -> Self {
        let mut auth = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut auth);
        Receiver {
            secret: SecretKey::random(&mut rand::rngs::OsRng),
            auth,
        }
    }
}

impl Receiver {
    /// The subscription's keys as a browser gives them: (`p256dh`, `auth`), base64url.
    pub fn keys(&self) -> (String, String) {
        (
            encode_point(&self.secret.public_key()),
            URL_SAFE_NO_PAD.encode(self.auth),
        )
    }

    /// The plaintext of a message sent to this subscription.
    pub fn open(&self, body: &[u8]) -> std::result::Result<Vec<u8>, String> {
        decrypt(body, &self.secret, &self.auth)
    }
}

/// Decrypts a message as the browser holding `ua_secret` and `auth` would (RFC 8291 from the
/// receiving side): the benchmark's push service reads pages with it. The tests check `encrypt`
/// with it and, independently, with PyPI's `http_ece`.
pub fn decrypt(
    body: &[u8],
    ua_secret: &SecretKey,
    auth: &[u8],
) -> std::result::Result<Vec<u8>, String> {
    let bad = |what: &str| format!("not an aes128gcm message: {what}");
    if body.len() < 21 {
        return Err(bad("too short"));
    }
    let salt = &body[..16];
    let idlen = body[20] as usize;
    let key_id = body.get(21..21 + idlen).ok_or_else(|| bad("key id"))?;
    let as_public = PublicKey::from_sec1_bytes(key_id).map_err(|_| bad("sender key"))?;
    let shared = p256::ecdh::diffie_hellman(ua_secret.to_nonzero_scalar(), as_public.as_affine());
    let mut info = b"WebPush: info\0".to_vec();
    info.extend_from_slice(ua_secret.public_key().to_encoded_point(false).as_bytes());
    info.extend_from_slice(key_id);
    let mut ikm = [0u8; 32];
    Hkdf::<Sha256>::new(Some(auth), shared.raw_secret_bytes())
        .expand(&info, &mut ikm)
        .map_err(|_| bad("key derivation"))?;
    let prk = Hkdf::<Sha256>::new(Some(salt), &ikm);
    let (mut cek, mut nonce) = ([0u8; 16], [0u8; 12]);
    prk.expand(b"Content-Encoding: aes128gcm\0", &mut cek)
        .and_then(|_| prk.expand(b"Content-Encoding: nonce\0", &mut nonce))
        .map_err(|_| bad("key derivation"))?;
    let mut plain = Aes128Gcm::new_from_slice(&cek)
        .map_err(|_| bad("content key"))?
        .decrypt(Nonce::from_slice(&nonce), &body[21 + idlen..])
        .map_err(|_| bad("does not decrypt"))?;
    match plain.pop() {
        Some(2) => Ok(plain),
        _ => Err(bad("no last-record delimiter")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_decrypts_with_the_subscriptions_private_key_and_each_is_fresh() {
        let ua = SecretKey::random(&mut rand::rngs::OsRng);
        let p256dh = ua.public_key().to_encoded_point(false);
        let auth = [7u8; 16];
        let text = br#"{"title":"[CRITICAL] DiskFull"}"#;
        let a = encrypt(text, p256dh.as_bytes(), &auth).unwrap();
        let b = encrypt(text, p256dh.as_bytes(), &auth).unwrap();
        assert_ne!(a, b, "a new salt and key each time");
        assert_eq!(
            u32::from_be_bytes(a[16..20].try_into().unwrap()),
            RECORD_SIZE
        );
        assert_eq!(decrypt(&a, &ua, &auth).unwrap(), text);
        assert!(decrypt(&a, &ua, &[8u8; 16]).is_err(), "another auth secret");
        assert!(encrypt(&[0; MAX_PLAINTEXT + 1], p256dh.as_bytes(), &auth).is_err());
        assert!(encrypt(text, &[4; 65], &auth).is_err());
    }

    #[test]
    fn one_signed_header_serves_a_push_service_for_ten_minutes() {
        let secret = SecretKey::random(&mut rand::rngs::OsRng);
        let vapid = Vapid::from_private(&URL_SAFE_NO_PAD.encode(secret.to_bytes())).unwrap();
        let (a, b, me) = (
            "https://a.push.example",
            "https://b.push.example",
            "mailto:x@y.z",
        );
        let first = vapid.header(a, me, 1000);
        assert_eq!(vapid.header(a, me, 1000 + REUSE_FOR - 1), first);
        assert_ne!(
            vapid.header(b, me, 1001),
            first,
            "each push service its own audience"
        );
        assert_ne!(vapid.header(a, "mailto:other@y.z", 1001), first);
        let later = vapid.header(a, me, 1000 + REUSE_FOR);
        assert_ne!(later, first, "signed anew, valid 12 hours from now");
        assert_eq!(later, vapid.authorization(a, me, 1000 + REUSE_FOR));
        assert_ne!(
            vapid.header(a, me, 999),
            later,
            "a clock set back signs anew"
        );
    }

    #[test]
    fn the_vapid_header_is_a_jwt_the_public_key_verifies() {
        use p256::ecdsa::signature::Verifier;
        let secret = SecretKey::random(&mut rand::rngs::OsRng);
        let vapid = Vapid::from_private(&URL_SAFE_NO_PAD.encode(secret.to_bytes())).unwrap();
        let header = vapid.authorization("https://push.example", "mailto:ops@example.com", 1000);
        let (t, k) = header
            .strip_prefix("vapid t=")
            .unwrap()
            .split_once(", k=")
            .unwrap();
        assert_eq!(k, vapid.public_key);
        let parts: Vec<&str> = t.split('.').collect();
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["aud"], "https://push.example");
        assert_eq!(claims["exp"], 1000 + 12 * 3600);
        let key = p256::ecdsa::VerifyingKey::from_sec1_bytes(&URL_SAFE_NO_PAD.decode(k).unwrap())
            .unwrap();
        let sig = Signature::from_slice(&URL_SAFE_NO_PAD.decode(parts[2]).unwrap()).unwrap();
        key.verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &sig)
            .unwrap();
    }
}
