//! A real Matrix homeserver: Synapse (PyPI `matrix-synapse`, in the virtualenv
//! `scripts/setup.sh` makes) started by `synapse.py` once per test binary, with a bot whose
//! messages are not rate-limited, a bot left to a low limit, and an admin that makes the people
//! who read the rooms back.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

pub struct Synapse {
    pub url: String,
    admin: String,
    pub bot: String,
    pub bot_user: String,
    /// Bots left to the low message limit, (user id, token): one per test.
    limited: Vec<(String, String)>,
    next_limited: std::sync::atomic::AtomicUsize,
    _child: Mutex<Child>,
}

static SERVER: OnceLock<Synapse> = OnceLock::new();

/// The binary's homeserver, started on first use (about 10 s).
pub fn synapse() -> &'static Synapse {
    SERVER.get_or_init(Synapse::start)
}

/// The Python of Synapse's virtualenv.
fn python() -> String {
    std::env::var("KLAXON_SYNAPSE_PYTHON")
        .unwrap_or_else(|_| "/var/cache/klaxon/synapse/bin/python".into())
}

/// `test_config` with the unlimited bot posting to the homeserver.
pub fn matrix_config() -> klaxon_core::Config {
    with_bot(synapse().bot.clone())
}

/// `test_config` with a rate-limited bot of its own (`Synapse::bot_of` names it).
pub fn limited_matrix_config() -> klaxon_core::Config {
    let s = synapse();
    let n = s
        .next_limited
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let (_, token) = s
        .limited
        .get(n)
        .cloned()
        .expect("a limited bot left (synapse.py makes 6)");
    with_bot(token)
}

fn with_bot(token: String) -> klaxon_core::Config {
    use klaxon_core::roads::matrix::{MatrixAuth, MatrixConfig};
    let mut config = super::test_config();
    config.roads.matrix = Some(MatrixConfig {
        homeserver: synapse().url.clone(),
        auth: MatrixAuth::Token(token),
    });
    config
}

/// A person on the homeserver, not rate-limited: their id and access token.
pub struct Person {
    pub id: String,
    pub token: String,
}

impl Synapse {
    fn start() -> Synapse {
        let dir = tempfile::tempdir().unwrap().keep();
        let port = super::process::free_port();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/synapse.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(python())
            .arg(port.to_string())
            .arg(&dir)
            // Its standard input closes when this process ends, and then it stops Synapse.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs Synapse (scripts/setup.sh installs it)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let ready: Value = serde_json::from_str(&line).unwrap_or_else(|_| {
            panic!("Synapse did not start: {line:?} (log in {})", dir.display())
        });
        assert!(ready["error"].is_null(), "{ready}");
        let text = |k: &str| ready[k].as_str().unwrap().to_string();
        Synapse {
            url: text("url"),
            admin: text("admin"),
            bot: text("bot"),
            bot_user: text("bot_user"),
            limited: ready["limited"]
                .as_array()
                .unwrap()
                .iter()
                .map(|b| {
                    (
                        b["user"].as_str().unwrap().to_string(),
                        b["token"].as_str().unwrap().to_string(),
                    )
                })
                .collect(),
            next_limited: Default::default(),
            _child: Mutex::new(child),
        }
    }

    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> Value {
        let mut req = reqwest::Client::new()
            .request(method, format!("{}{path}", self.url))
            .bearer_auth(token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let res = req.send().await.expect("Synapse answers");
        let status = res.status();
        let body: Value = res.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{path}: {status} {body}");
        body
    }

    /// The user id of the bot a test app's configuration posts as.
    pub fn bot_of(&self, config: &klaxon_core::Config) -> String {
        use klaxon_core::roads::matrix::MatrixAuth;
        let Some(MatrixAuth::Token(token)) = config.roads.matrix.as_ref().map(|m| m.auth.clone())
        else {
            panic!("a Matrix bot with a token")
        };
        if token == self.bot {
            return self.bot_user.clone();
        }
        self.limited
            .iter()
            .find(|(_, t)| *t == token)
            .expect("one of the bots")
            .0
            .clone()
    }

    /// A new person, made by the admin and signed in.
    pub async fn person(&self, name: &str) -> Person {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("@{name}-{}-{n}:localhost", std::process::id());
        let path = format!("/_synapse/admin/v2/users/{}", enc(&id));
        self.call(
            reqwest::Method::PUT,
            &path,
            &self.admin,
            Some(json!({"password": "a long test password"})),
        )
        .await;
        // People post what tests tell them to (codes, replies) without meeting the low limit
        // the limited bots are left to.
        self.call(
            reqwest::Method::POST,
            &format!("/_synapse/admin/v1/users/{}/override_ratelimit", enc(&id)),
            &self.admin,
            Some(json!({"messages_per_second": 0, "burst_count": 0})),
        )
        .await;
        let login = self
            .call(
                reqwest::Method::POST,
                &format!("/_synapse/admin/v1/users/{}/login", enc(&id)),
                &self.admin,
                Some(json!({})),
            )
            .await;
        Person {
            id,
            token: login["access_token"].as_str().unwrap().to_string(),
        }
    }

    /// A private room `owner` makes, inviting `invite`: its id.
    pub async fn room(&self, owner: &Person, invite: &[&str]) -> String {
        let made = self
            .call(
                reqwest::Method::POST,
                "/_matrix/client/v3/createRoom",
                &owner.token,
                Some(json!({"preset": "private_chat", "invite": invite})),
            )
            .await;
        made["room_id"].as_str().unwrap().to_string()
    }

    /// Joins every room `person` is invited to (as a client accepts an invitation): their ids.
    pub async fn accept_invites(&self, person: &Person) -> Vec<String> {
        let sync = self
            .call(
                reqwest::Method::GET,
                "/_matrix/client/v3/sync?timeout=0",
                &person.token,
                None,
            )
            .await;
        let rooms: Vec<String> = sync["rooms"]["invite"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for room in &rooms {
            self.call(
                reqwest::Method::POST,
                &format!("/_matrix/client/v3/join/{}", enc(room)),
                &person.token,
                Some(json!({})),
            )
            .await;
        }
        rooms
    }

    /// The messages `sender` posted in `room`, oldest first, as `reader` reads them back (an
    /// edit of one is not another: `events` has them).
    pub async fn messages(&self, reader: &Person, room: &str, sender: &str) -> Vec<Value> {
        let got = self
            .call(
                reqwest::Method::GET,
                &format!(
                    "/_matrix/client/v3/rooms/{}/messages?dir=b&limit=100",
                    enc(room)
                ),
                &reader.token,
                None,
            )
            .await;
        let mut found: Vec<Value> = got["chunk"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "m.room.message" && e["sender"] == sender)
            .filter(|e| e["content"]["m.relates_to"]["rel_type"] != "m.replace")
            .map(|e| e["content"].clone())
            .collect();
        found.reverse();
        found
    }
}

pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Synapse {
    /// `person` posts `text` in `room`, as a client does.
    pub async fn say(&self, person: &Person, room: &str, text: &str) {
        self.send(
            person,
            room,
            "m.room.message",
            json!({"msgtype": "m.text", "body": text}),
        )
        .await;
    }

    /// `person` sends an event of type `kind` in `room`: its id.
    pub async fn send(&self, person: &Person, room: &str, kind: &str, content: Value) -> String {
        static TXN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = TXN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let sent = self
            .call(
                reqwest::Method::PUT,
                &format!("/_matrix/client/v3/rooms/{}/send/{kind}/say-{n}", enc(room)),
                &person.token,
                Some(content),
            )
            .await;
        sent["event_id"].as_str().unwrap().to_string()
    }

    /// Every message and reaction in `room`, whole (id, sender, content), oldest first, as
    /// `reader` reads them back.
    pub async fn events(&self, reader: &Person, room: &str) -> Vec<Value> {
        let got = self
            .call(
                reqwest::Method::GET,
                &format!(
                    "/_matrix/client/v3/rooms/{}/messages?dir=b&limit=100",
                    enc(room)
                ),
                &reader.token,
                None,
            )
            .await;
        let mut found: Vec<Value> = got["chunk"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["type"] == "m.room.message" || e["type"] == "m.reaction")
            .cloned()
            .collect();
        found.reverse();
        found
    }

    /// Invites `person` to `room` (as its creator `owner`) and has them join it.
    pub async fn bring(&self, owner: &Person, room: &str, person: &Person) {
        self.call(
            reqwest::Method::POST,
            &format!("/_matrix/client/v3/rooms/{}/invite", enc(room)),
            &owner.token,
            Some(json!({"user_id": person.id})),
        )
        .await;
        // Joined by the room's id: a second initial sync of the same person could be answered
        // from Synapse's cache of the first, without the new invitation.
        self.call(
            reqwest::Method::POST,
            &format!("/_matrix/client/v3/join/{}", enc(room)),
            &person.token,
            Some(json!({})),
        )
        .await;
    }
}

/// Proves a new Matrix channel the way a team does: `moderator` posts its code in `room`, and
/// the team's owner has it checked. The channel as it is answered.
pub async fn prove(
    app: &super::TestApp,
    owner: &super::Auth,
    channels_path: &str,
    channel: &Value,
    moderator: &Person,
    room: &str,
) -> Value {
    assert_eq!(channel["state"], "unproven", "{channel}");
    let code = channel["proof_code"].as_str().expect("a code to post");
    synapse()
        .say(moderator, room, &format!("Klaxon may post here: {code}"))
        .await;
    app.post(
        &format!("{channels_path}/{}/verify", channel["id"]),
        owner,
        json!({}),
    )
    .await
    .expect(200)
}
