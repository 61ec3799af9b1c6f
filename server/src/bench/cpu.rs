//! The processor time a storm took, read from Linux's `/proc`: this process's (the server with
//! its notifier, the senders and the stand-in services, which share the machine's cores), and,
//! when the database is PostgreSQL on this machine, its processes'. A ratio of intake rates
//! says that paging costs; these say where.

use std::time::Duration;

/// Processor time used so far.
#[derive(Clone, Copy)]
pub(super) struct Cpu {
    pub own: Duration,
    /// PostgreSQL's processes, when they run on this machine.
    pub database: Option<Duration>,
}

impl Cpu {
    /// Now, on Linux; `None` elsewhere. `database_url` is the run's PostgreSQL, if any.
    pub fn now(database_url: Option<&str>) -> Option<Cpu> {
        let own = used(std::path::Path::new("/proc/self"))?.1;
        let database = database_url.filter(|u| local(u)).map(|_| postgres());
        Some(Cpu { own, database })
    }

    /// The time used between `earlier` and `self`.
    pub fn since(self, earlier: Cpu) -> Cpu {
        Cpu {
            own: self.own.saturating_sub(earlier.own),
            database: self
                .database
                .zip(earlier.database)
                .map(|(a, b)| a.saturating_sub(b)),
        }
    }

    pub fn add(&mut self, other: Cpu) {
        self.own += other.own;
        self.database = match (self.database, other.database) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// "0.51 ms here, 1.05 ms in PostgreSQL" per webhook of `webhooks`.
    pub fn per(&self, webhooks: usize) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3 / webhooks.max(1) as f64;
        match self.database {
            Some(db) => format!(
                "{:.2} ms here, {:.2} ms in PostgreSQL",
                ms(self.own),
                ms(db)
            ),
            None => format!("{:.2} ms here", ms(self.own)),
        }
    }
}

/// Whether the URL names this machine (its processes are then visible here).
fn local(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.rsplit_once('@').map_or(rest, |(_, h)| h);
    ["127.0.0.1", "localhost", "[::1]", "/"]
        .iter()
        .any(|l| host.starts_with(l))
}

/// The processor time of every process named `postgres` (the server and its backends).
fn postgres() -> Duration {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Duration::ZERO;
    };
    dir.flatten()
        .filter_map(|e| used(&e.path()))
        .filter(|(name, _)| name == "postgres")
        .map(|(_, t)| t)
        .sum()
}

/// A process's name and its user and system time (`/proc/PID/stat`, fields 14 and 15, in
/// clock ticks of 1/100 s, which Linux fixes for this file).
fn used(proc_dir: &std::path::Path) -> Option<(String, Duration)> {
    let stat = std::fs::read_to_string(proc_dir.join("stat")).ok()?;
    let (head, rest) = stat.rsplit_once(')')?;
    let name = head.split_once('(')?.1.to_string();
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i)?.parse::<u64>().ok();
    let total = ticks(11)? + ticks(12)?;
    Some((name, Duration::from_millis(total * 10)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_database_on_this_machine_is_measured() {
        assert!(super::local("postgres://postgres@127.0.0.1:5432/postgres"));
        assert!(super::local("postgresql://localhost/x"));
        assert!(!super::local("postgres://u:p@db.example:5432/x"));
    }
}
