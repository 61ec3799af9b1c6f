//! A PostgreSQL cluster of one's own, started and stopped with `pg_ctl`, for faults a shared
//! server cannot suffer (a restart under load): used by `klaxon bench chaos` and the fault tests.
//! Debian's server binaries are used; as root, they run as the `postgres` user, which initdb and
//! the server require.

use std::path::PathBuf;
use std::process::Command;

pub struct Cluster {
    bin: PathBuf,
    data: PathBuf,
    pub port: u16,
    _dir: tempfile::TempDir,
}

/// A server binary's command, run as `postgres` when we are root.
fn command(bin: &std::path::Path, tool: &str) -> Command {
    let tool = bin.join(tool);
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(tool);
        c
    } else {
        Command::new(tool)
    }
}

/// Runs a server binary; panics when it fails.
fn run(bin: &std::path::Path, tool: &str, args: &[&str]) {
    // Their chatter is not the caller's output; failures still say so on stderr.
    let status = command(bin, tool)
        .args(args)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{tool}: {e}"));
    assert!(status.success(), "{tool} {args:?}: {status}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.trim_ascii() == b"0")
        .unwrap_or(false)
}

impl Cluster {
    /// A new cluster on a free port, running.
    pub fn start() -> Cluster {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL server binaries in /usr/lib/postgresql")
            .filter_map(|e| Some(e.ok()?.path().join("bin")))
            .filter(|b| b.join("pg_ctl").exists())
            .max()
            .expect("pg_ctl under /usr/lib/postgresql/*/bin");
        let dir = tempfile::tempdir().unwrap();
        if is_root() {
            let chown = Command::new("chown")
                .arg("postgres:postgres")
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(chown.success());
        }
        let data = dir.path().join("data");
        let data_arg = data.display().to_string();
        run(
            &bin,
            "initdb",
            &[
                "-D",
                &data_arg,
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        );
        let cluster = Cluster {
            bin,
            data,
            port: free_port(),
            _dir: dir,
        };
        cluster.up();
        cluster
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Starts the server and waits until it accepts connections.
    pub fn up(&self) {
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {} -c fsync=off",
            self.port,
            self._dir.path().display()
        );
        let log = self._dir.path().join("log").display().to_string();
        let data = self.data.display().to_string();
        run(
            &self.bin,
            "pg_ctl",
            &["-D", &data, "-o", &options, "-l", &log, "-w", "start"],
        );
    }

    /// Stops the server the way a restart does: connections are cut, transactions rolled back.
    pub fn down(&self) {
        let data = self.data.display().to_string();
        run(
            &self.bin,
            "pg_ctl",
            &["-D", &data, "-m", "fast", "-w", "stop"],
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data.display().to_string();
        let _ = command(&self.bin, "pg_ctl")
            .args(["-D", &data, "-m", "immediate", "stop"])
            .stdout(std::process::Stdio::null())
            .status();
    }
}
