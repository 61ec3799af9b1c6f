//! Klaxon from a terminal: `klaxon login` signs in through Klaxon's device flow (approved in a
//! browser signed in by any means) and keeps the session in the user's config directory;
//! `whoami`, `incidents`, `ack` and `logout` use it, so a responder at a laptop can acknowledge
//! without the browser.

use clap::Args;
use klaxon_domain::device::{DeviceSession, DeviceStart};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Args)]
pub struct LoginArgs {
    /// The Klaxon server, e.g. https://klaxon.example.com
    #[arg(long, env = "KLAXON_SERVER")]
    server: String,
}

#[derive(Args)]
pub struct AckArgs {
    /// The incident's number.
    id: i64,
}

/// What `klaxon login` keeps: `$XDG_CONFIG_HOME/klaxon/credentials` (else
/// `~/.config/klaxon/credentials`), readable by its user only.
#[derive(Serialize, Deserialize)]
struct Credentials {
    server: String,
    username: String,
    session_token: String,
}

fn credentials_path() -> Result<PathBuf, String> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .ok_or("neither XDG_CONFIG_HOME nor HOME is set")?;
    Ok(base.join("klaxon").join("credentials"))
}

fn save(c: &Credentials) -> Result<PathBuf, String> {
    let path = credentials_path()?;
    save_to(&path, c)?;
    Ok(path)
}

/// Writes the credentials to a new file of mode 0600 beside `path`, then renames it over
/// `path`: whatever mode an existing file had, the session is never readable by others, not
/// even for a moment, and a crash leaves the old file or the new one whole.
fn save_to(path: &std::path::Path, c: &Credentials) -> Result<(), String> {
    let dir = path.parent().ok_or("no config directory")?;
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text = serde_json::to_string_pretty(c).map_err(|e| e.to_string())?;
    let temp = dir.join(format!(".credentials.{}.tmp", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let _ = std::fs::remove_file(&temp);
    let written = options
        .open(&temp)
        .and_then(|mut file| {
            std::io::Write::write_all(&mut file, text.as_bytes())?;
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot write {}: {e}", path.display()));
    }
    Ok(())
}

fn load() -> Result<Credentials, String> {
    let path = credentials_path()?;
    let text = std::fs::read_to_string(&path)
        .map_err(|_| "not signed in: run `klaxon login --server URL` first".to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("{} is unreadable: {e}", path.display()))
}

/// The command line's client: no redirects, a timeout (`outbound::cli`).
fn client() -> Result<reqwest::Client, String> {
    klaxon_core::outbound::cli::client()
}

/// The answer's JSON (read up to the command line's cap), or its error sentence.
pub(crate) async fn answer(res: reqwest::Response) -> Result<Value, String> {
    let status = res.status();
    let body = klaxon_core::outbound::cli::body(res, "the server").await?;
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if status.is_success() {
        Ok(body)
    } else {
        Err(body["message"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| format!("the server answered {status}")))
    }
}

/// A request as the stored session.
async fn signed_in(method: reqwest::Method, path: &str) -> Result<Value, String> {
    let c = load()?;
    let res = client()?
        .request(method, format!("{}{path}", c.server))
        .header("cookie", format!("klaxon_session={}", c.session_token))
        .send()
        .await
        .map_err(|e| format!("cannot reach {}: {e}", c.server))?;
    if res.status() == reqwest::StatusCode::UNAUTHORIZED {
        return Err("the session has ended: run `klaxon login` again".into());
    }
    answer(res).await
}

pub async fn login(args: LoginArgs) -> Result<(), String> {
    let server = args.server.trim_end_matches('/').to_string();
    let http = client()?;
    let started: DeviceStart = serde_json::from_value(
        answer(
            http.post(format!("{server}/api/oidc/device"))
                .send()
                .await
                .map_err(|e| format!("cannot reach {server}: {e}"))?,
        )
        .await?,
    )
    .map_err(|e| format!("unexpected answer from {server}: {e}"))?;
    // Nothing is opened by itself: the person chooses the browser (or the phone, by the code).
    println!("To sign in, open this address in a browser where you use Klaxon:");
    println!();
    println!("    {}", started.verification_uri_complete);
    println!();
    println!("and check it shows the code {}", started.user_code);
    if let Ok(code) = qrcode::QrCode::new(started.verification_uri_complete.as_bytes()) {
        let qr = code
            .render::<qrcode::render::unicode::Dense1x2>()
            .quiet_zone(true)
            .build();
        println!();
        println!("{qr}");
    }
    let mut interval = started.interval.max(1) as u64;
    let deadline = std::time::Instant::now() + Duration::from_secs(started.expires_in as u64);
    loop {
        // The protocol's own pace: the server tells a faster client to slow down.
        tokio::time::sleep(Duration::from_secs(interval)).await;
        if std::time::Instant::now() > deadline {
            return Err("the code expired before it was approved; run `klaxon login` again".into());
        }
        let res = http
            .post(format!("{server}/api/oidc/device/token"))
            .json(&serde_json::json!({"device_code": started.device_code}))
            .send()
            .await
            .map_err(|e| format!("cannot reach {server}: {e}"))?;
        let status = res.status();
        let body = klaxon_core::outbound::cli::body(res, &server).await?;
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if status.is_success() {
            let session: DeviceSession = serde_json::from_value(body)
                .map_err(|e| format!("unexpected answer from {server}: {e}"))?;
            let path = save(&Credentials {
                server: server.clone(),
                username: session.user.username.clone(),
                session_token: session.session_token,
            })?;
            println!(
                "Signed in as {} (session kept in {}).",
                session.user.username,
                path.display()
            );
            return Ok(());
        }
        match body["error"].as_str() {
            Some("authorization_pending") => {}
            Some("slow_down") => interval += 5,
            Some("access_denied") => return Err("the sign-in was denied in the browser".into()),
            Some("expired_token") => {
                return Err("the code expired; run `klaxon login` again".into())
            }
            _ => {
                return Err(body["message"]
                    .as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("the server answered {status}")))
            }
        }
    }
}

pub async fn logout() -> Result<(), String> {
    let path = credentials_path()?;
    // Ending the session on the server first; the file goes even if the server is unreachable.
    let ended = signed_in(reqwest::Method::POST, "/api/auth/logout").await;
    std::fs::remove_file(&path).map_err(|_| "not signed in".to_string())?;
    match ended {
        Ok(_) => println!("Signed out."),
        Err(e) => println!("Signed out here; the server said: {e}"),
    }
    Ok(())
}

pub async fn whoami() -> Result<(), String> {
    let me = signed_in(reqwest::Method::GET, "/api/me").await?;
    let c = load()?;
    let teams: Vec<String> = me["teams"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| {
                    format!(
                        "{} ({})",
                        t["name"].as_str().unwrap_or("?"),
                        t["role"].as_str().unwrap_or("?")
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    println!("{} at {}", me["username"].as_str().unwrap_or("?"), c.server);
    if !teams.is_empty() {
        println!("teams: {}", teams.join(", "));
    }
    Ok(())
}

pub async fn incidents() -> Result<(), String> {
    let list = signed_in(reqwest::Method::GET, "/api/incidents?state=open").await?;
    let list = list.as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        println!("No open incidents.");
    }
    for i in list {
        println!(
            "{:>6}  {:<12} {:<8}  {}",
            i["id"],
            i["state"].as_str().unwrap_or("?"),
            i["severity"].as_str().unwrap_or("?"),
            i["title"].as_str().unwrap_or("")
        );
    }
    Ok(())
}

pub async fn ack(args: AckArgs) -> Result<(), String> {
    let i = signed_in(
        reqwest::Method::POST,
        &format!("/api/incidents/{}/acknowledge", args.id),
    )
    .await?;
    println!(
        "Incident {} is {}: {}",
        args.id,
        i["state"].as_str().unwrap_or("?"),
        i["title"].as_str().unwrap_or("")
    );
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn an_existing_readable_file_becomes_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("klaxon").join("credentials");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let c = Credentials {
            server: "http://klaxon".into(),
            username: "alice".into(),
            session_token: "t".repeat(64),
        };
        save_to(&path, &c).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the credentials file is {mode:o}");
        let kept: Credentials =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(kept.session_token, c.session_token);
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }
}
