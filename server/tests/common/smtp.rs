//! A real SMTP server for the email tests: aiosmtpd (PyPI) with STARTTLS and AUTH required, a
//! certificate of its own made with `openssl`, and every accepted message kept to be read back.
//! One server serves a whole test binary; tests tell their messages apart by recipient.

use klaxon_core::roads::email::SmtpConfig;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

pub const USER: &str = "klaxon";
pub const PASSWORD: &str = "mail password";

pub struct Smtp {
    /// STARTTLS.
    pub port: u16,
    /// TLS from the first byte (smtps).
    pub tls_port: u16,
    /// The certificate the server presents, to be trusted (`KLAXON_SMTP_CA`).
    pub ca_pem: Vec<u8>,
    dir: PathBuf,
    _child: Mutex<Child>,
}

static SERVER: OnceLock<Smtp> = OnceLock::new();

/// The binary's SMTP server, started on first use.
pub fn smtp() -> &'static Smtp {
    SERVER.get_or_init(Smtp::start)
}

/// Adds an email method `to` for `user` and verifies it with the code mailed there: its id.
pub async fn verified_email(app: &super::TestApp, user: &(i64, super::Auth), to: &str) -> i64 {
    let path = format!("/api/users/{}/contact-methods", user.0);
    let m = app
        .post(
            &path,
            &user.1,
            serde_json::json!({"name": "Work mail", "kind": "email", "address": to}),
        )
        .await
        .expect(201);
    let message = smtp().wait_for(to, 1).await;
    let at = message.find("verification code is ").unwrap() + 21;
    let code = &message[at..at + 6];
    app.post(
        &format!("{path}/{}/verify", m["id"]),
        &user.1,
        serde_json::json!({ "code": code }),
    )
    .await
    .expect(200);
    m["id"].as_i64().unwrap()
}

/// `test_config` with mail going to the binary's SMTP server.
pub fn mail_config() -> klaxon_core::Config {
    let mut config = super::test_config();
    config.roads.smtp = Some(smtp().config());
    config
}

impl Smtp {
    fn start() -> Smtp {
        // Kept for the life of the test binary.
        let dir = tempfile::tempdir().unwrap().keep();
        let out = dir.join("mail");
        std::fs::create_dir(&out).unwrap();
        let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        let (ca, ca_key) = (dir.join("ca.pem"), dir.join("ca-key.pem"));
        let (csr, ext) = (dir.join("cert.csr"), dir.join("cert.ext"));
        std::fs::write(
            &ext,
            "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
        )
        .unwrap();
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        // A CA of the test's own, and the server's certificate signed by it.
        let steps: [Vec<&std::ffi::OsStr>; 3] = [
            [
                &["req", "-x509", "-days", "2", "-subj", "/CN=Klaxon test CA"][..],
                &ec[..],
            ]
            .concat()
            .into_iter()
            .map(std::ffi::OsStr::new)
            .chain([
                ("-keyout".as_ref()),
                ca_key.as_os_str(),
                "-out".as_ref(),
                ca.as_os_str(),
            ])
            .collect(),
            [&["req", "-subj", "/CN=localhost"][..], &ec[..]]
                .concat()
                .into_iter()
                .map(std::ffi::OsStr::new)
                .chain([
                    "-keyout".as_ref(),
                    key.as_os_str(),
                    "-out".as_ref(),
                    csr.as_os_str(),
                ])
                .collect(),
            ["x509", "-req", "-days", "2", "-CAcreateserial"]
                .into_iter()
                .map(std::ffi::OsStr::new)
                .chain([
                    "-in".as_ref(),
                    csr.as_os_str(),
                    "-CA".as_ref(),
                    ca.as_os_str(),
                    "-CAkey".as_ref(),
                    ca_key.as_os_str(),
                    "-extfile".as_ref(),
                    ext.as_os_str(),
                    "-out".as_ref(),
                    cert.as_os_str(),
                ])
                .collect(),
        ];
        for args in steps {
            let made = Command::new("openssl")
                .args(&args)
                .stderr(Stdio::null())
                .status()
                .expect("openssl makes the SMTP server's certificate");
            assert!(made.success(), "openssl {args:?} failed");
        }
        let free_port = || {
            std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port()
        };
        let (port, tls_port) = (free_port(), free_port());
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/common/smtp.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg(port.to_string())
            .arg(&cert)
            .arg(&key)
            .arg(&out)
            .args([USER, PASSWORD])
            .arg(tls_port.to_string())
            // Its standard input closes when this process ends, and then it stops.
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs aiosmtpd (scripts/setup.sh installs it)");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut ready)
            .unwrap();
        assert_eq!(ready.trim(), "ready", "aiosmtpd did not start");
        Smtp {
            port,
            tls_port,
            ca_pem: std::fs::read(&ca).unwrap(),
            dir: out,
            _child: Mutex::new(child),
        }
    }

    pub fn config(&self) -> SmtpConfig {
        SmtpConfig {
            url: format!(
                "smtp://{USER}:{}@127.0.0.1:{}",
                PASSWORD.replace(' ', "%20"),
                self.port
            ),
            from: "Klaxon <klaxon@example.org>".into(),
            ca_pem: Some(self.ca_pem.clone()),
        }
    }

    /// The messages accepted for `to` so far, oldest first, as raw RFC 5322 text after the
    /// server's `X-Rcpt-To` and `X-Mail-From` lines.
    pub fn messages_to(&self, to: &str) -> Vec<String> {
        let mut found: Vec<(u64, String)> = std::fs::read_dir(&self.dir)
            .unwrap()
            .filter_map(|e| {
                let path = e.ok()?.path();
                let n: u64 = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".eml")?
                    .parse()
                    .ok()?;
                let text = std::fs::read_to_string(&path).ok()?;
                let rcpt = text
                    .lines()
                    .next()?
                    .strip_prefix("X-Rcpt-To: ")?
                    .to_string();
                rcpt.split(", ")
                    .any(|r| r.eq_ignore_ascii_case(to))
                    .then_some((n, text))
            })
            .collect();
        found.sort();
        found.into_iter().map(|(_, t)| t).collect()
    }

    /// Waits (at most 10 s) for the `n`th message to `to`; mail leaves over a real connection.
    pub async fn wait_for(&self, to: &str, n: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let got = self.messages_to(to);
            if got.len() >= n {
                return got[n - 1].clone();
            }
            assert!(Instant::now() < deadline, "no message {n} to {to}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
