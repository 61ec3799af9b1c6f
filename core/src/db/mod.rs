//! One pool over either backend. SQL is written once (`$1` parameters, Unix-second integers,
//! JSON as text). What differs per backend is kept here and in `batch`: the migrations, the
//! connection settings, how a write transaction starts, the parameter style and count of
//! generated lists, and the function that unnests a JSON array of rows.

mod batch;

pub(crate) use batch::{fetch_in, insert_json, insert_rows, json_rows, Arg, Col};

use crate::Result;
use sqlx::any::AnyPoolOptions;
use sqlx::{AnyPool, Executor};
use std::path::Path;
use std::time::Duration;

/// A write transaction on either backend. On SQLite it also holds this process's writer turn:
/// writers queue on a fair async mutex instead of in SQLite's busy handler, which sleeps in
/// growing steps (up to 100 ms each) and lets a steady stream of writers starve one of them —
/// measured as seconds of page latency under webhook load. The notifier's lane (`paging_lane`)
/// does not queue behind the others: it waits for at most the one transaction being written.
pub struct Tx {
    tx: sqlx::Transaction<'static, sqlx::Any>,
    _turn: Option<tokio::sync::OwnedMutexGuard<()>>,
    pub backend: Backend,
    /// Begun by `begin_indexed` or `read_indexed`: its plans are kept across executions, so its
    /// id lists take a few shapes (`batch::chunks`).
    pub(crate) indexed: bool,
    /// Channel posts were queued in it: the announcer is woken once it commits.
    announced: bool,
    announcer: std::sync::Arc<tokio::sync::Notify>,
}

impl std::ops::Deref for Tx {
    type Target = sqlx::AnyConnection;
    fn deref(&self) -> &sqlx::AnyConnection {
        &self.tx
    }
}

impl std::ops::DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut sqlx::AnyConnection {
        &mut self.tx
    }
}

impl Tx {
    pub async fn commit(self) -> Result<()> {
        self.tx.commit().await?;
        if self.announced {
            self.announcer.notify_one();
        }
        Ok(())
    }

    /// Marks the transaction as having queued channel posts (`announcements`).
    pub(crate) fn announced(&mut self) {
        self.announced = true;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

#[derive(Clone)]
pub struct Db {
    pub pool: AnyPool,
    pub backend: Backend,
    /// SQLite's one writer, taken in turn by this process's write transactions.
    writer: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// Where ordinary writers queue for the writer's turn, one at a time, so the paging lane
    /// (`None` here) finds at most one of them ahead of it.
    queue: Option<std::sync::Arc<tokio::sync::Mutex<()>>>,
    /// The paging lane's own connections: a flood of requests waiting for a connection of
    /// `pool` never holds a page back.
    lane_pool: AnyPool,
    /// What it was opened with; PostgreSQL's `LISTEN` needs a connection of its own.
    pub(crate) url: std::sync::Arc<str>,
    /// Told when a transaction that queued channel posts commits: this replica's announcer
    /// posts them at once instead of at its next tick.
    pub announcer: std::sync::Arc<tokio::sync::Notify>,
}

/// Connections of a replica's main PostgreSQL pool (the paging lane has 2 more). More makes a
/// storm slower, not faster: with 16, 64 webhook senders kept 16 statements running on
/// PostgreSQL's CPUs and the notifier's statements queued behind them, and a page left p50 77–108
/// ms after its webhook (p99 211–254 ms); with 6, p50 26 ms and p99 52–63 ms, intake taking as
/// many alerts a second as before. Requests past the sixth wait in the pool, not in PostgreSQL.
/// Measured with `klaxon bench paging` and `klaxon bench intake` on a 2-core machine.
const PG_CONNECTIONS: u32 = 6;

/// The file a `sqlite:` URL names, unless it is in memory.
fn sqlite_file(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))?;
    let path = rest.split('?').next().unwrap_or("");
    (!path.is_empty() && path != ":memory:").then_some(path)
}

/// The data directory holds the database and nothing for other users: created 0700.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// The SQLite file is created 0600 before SQLite opens it (SQLite would use the umask, often
/// 0644); its journal and WAL files take the database file's mode. An existing file is left as
/// it is.
fn create_private_file(file: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        // A missing folder is SQLite's to report, in its own words.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

impl Db {
    /// `url` selects the backend: `postgres://…` or `sqlite://…`. Without one, a SQLite file
    /// `klaxon.db` in `data_dir` (created with the directory if missing).
    pub async fn connect(url: Option<&str>, data_dir: &Path) -> Result<Db> {
        sqlx::any::install_default_drivers();
        let url = match url {
            Some(u) if !u.is_empty() => u.to_string(),
            _ => {
                create_private_dir(data_dir).map_err(|e| {
                    crate::Error::Internal(format!("cannot create {}: {e}", data_dir.display()))
                })?;
                format!("sqlite://{}?mode=rwc", data_dir.join("klaxon.db").display())
            }
        };
        if let Some(file) = sqlite_file(&url) {
            create_private_file(Path::new(file)).map_err(|e| {
                crate::Error::Internal(format!("cannot create the database file {file}: {e}"))
            })?;
        }
        let backend = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Backend::Postgres
        } else if url.starts_with("sqlite:") {
            Backend::Sqlite
        } else {
            return Err(crate::Error::Invalid(
                "database URL must start with postgres:// or sqlite://".into(),
            ));
        };
        let connections = match backend {
            Backend::Sqlite => 8,
            Backend::Postgres => PG_CONNECTIONS,
        };
        let pool = Self::options(backend, connections).connect(&url).await?;
        if backend == Backend::Sqlite {
            // WAL lets readers proceed during a write; the mode is stored in the file itself.
            pool.execute("PRAGMA journal_mode = WAL").await?;
        }
        Ok(Db {
            pool,
            backend,
            writer: Default::default(),
            queue: Some(Default::default()),
            lane_pool: Self::options(backend, 2).connect_lazy(&url)?,
            url: url.into(),
            announcer: Default::default(),
        })
    }

    /// The same database for the notifier: its own two connections, and on SQLite the next
    /// writer's turn whoever else waits. Paging is a few short transactions per batch; behind
    /// 64 webhook transactions each, a page waited most of a second.
    pub fn paging_lane(&self) -> Db {
        Db {
            pool: self.lane_pool.clone(),
            queue: None,
            ..self.clone()
        }
    }

    fn options(backend: Backend, connections: u32) -> AnyPoolOptions {
        let mut options = AnyPoolOptions::new()
            .acquire_timeout(Duration::from_secs(10))
            .max_connections(connections);
        if backend == Backend::Sqlite {
            // Per-connection pragmas: enforce foreign keys, wait for the writer instead of failing.
            options = options.after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute("PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL;")
                        .await?;
                    Ok(())
                })
            });
        } else {
            // Plan each execution with its parameters: a generic plan cached while a table was
            // small can keep scanning it after it grows (without autovacuum it never heals).
            // No JIT: it pays off for long analytical queries, and here it made a year's report
            // spend a second compiling (`EXPLAIN ANALYZE`: JIT total 1 004 ms of 3 546 ms).
            options = options.after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute("SET plan_cache_mode = force_custom_plan; SET jit = off")
                        .await?;
                    Ok(())
                })
            });
        }
        options
    }

    pub async fn migrate(&self) -> Result<()> {
        match self.backend {
            Backend::Sqlite => {
                sqlx::migrate!("../migrations/sqlite")
                    .run(&self.pool)
                    .await?
            }
            Backend::Postgres => {
                sqlx::migrate!("../migrations/postgres")
                    .run(&self.pool)
                    .await?
            }
        }
        Ok(())
    }

    /// Starts a write transaction. On SQLite it takes the write lock up front (`BEGIN
    /// IMMEDIATE`): a deferred transaction that reads and then writes cannot wait for a
    /// concurrent writer and fails with "database is locked" instead.
    pub async fn begin(&self) -> Result<Tx> {
        let turn = self.writer_turn().await;
        Ok(Tx {
            tx: match self.backend {
                Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
                Backend::Postgres => self.pool.begin().await?,
            },
            _turn: turn,
            backend: self.backend,
            indexed: false,
            announced: false,
            announcer: self.announcer.clone(),
        })
    }

    /// `begin` for a transaction whose every statement finds its rows by an index (intake's:
    /// inserts, lookups by key, and the foreign-key and event triggers they fire). On
    /// PostgreSQL such a transaction keeps each statement's plan across executions instead of
    /// planning every one (`force_custom_plan`, set per connection, cost intake a third of its
    /// rate in planning), and with sequential scans off so no plan made while a table was
    /// small scans it once it has grown. Set in the `BEGIN`'s own round trip, for this
    /// transaction only.
    pub async fn begin_indexed(&self) -> Result<Tx> {
        let turn = self.writer_turn().await;
        Ok(Tx {
            tx: match self.backend {
                Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
                Backend::Postgres => self.pool.begin_with(INDEXED).await?,
            },
            _turn: turn,
            backend: self.backend,
            indexed: true,
            announced: false,
            announcer: self.announcer.clone(),
        })
    }

    /// `begin_indexed` for reads only: on SQLite a deferred transaction, outside the writer's
    /// turn. The notifier reads a batch's incidents, notes and windows so: planned afresh
    /// every pass, those reads were 40 % of its statements' time on PostgreSQL.
    pub async fn read_indexed(&self) -> Result<Tx> {
        Ok(Tx {
            tx: match self.backend {
                Backend::Sqlite => self.pool.begin().await?,
                Backend::Postgres => self.pool.begin_with(INDEXED).await?,
            },
            _turn: None,
            backend: self.backend,
            indexed: true,
            announced: false,
            announcer: self.announcer.clone(),
        })
    }

    /// On SQLite, this process's turn to write (see `Tx`); PostgreSQL has none.
    pub(crate) async fn writer_turn(&self) -> Option<tokio::sync::OwnedMutexGuard<()>> {
        if self.backend != Backend::Sqlite {
            return None;
        }
        let queued = match &self.queue {
            Some(queue) => Some(queue.lock().await),
            None => None,
        };
        let turn = self.writer.clone().lock_owned().await;
        drop(queued);
        Some(turn)
    }

    /// A trivial round trip, for `/healthz`.
    pub async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }
}

/// How `begin_indexed` starts a transaction on PostgreSQL, in one round trip.
const INDEXED: &str = "BEGIN; SET LOCAL plan_cache_mode = auto; SET LOCAL enable_seqscan = off";

impl Backend {
    /// Parameters per statement of a generated `list`. PostgreSQL: one round trip per
    /// statement, so many (its limit is 65 535). SQLite: a few hundred, because sqlx binds each parameter after
    /// asking SQLite its name, which SQLite finds by walking the statement's list, so binding
    /// grows with the square of a statement's parameters.
    fn max_params(self) -> usize {
        match self {
            Backend::Sqlite => 250,
            Backend::Postgres => 8_000,
        }
    }

    /// The `n`th parameter of a generated list. SQLite reads `$n` as a name and, while parsing,
    /// looks every name up among those seen so far (quadratic again); `?n` is a plain number.
    /// The fixed `$n` of the surrounding SQL still match: sqlx binds SQLite's `$n` and `?n` by n.
    pub(crate) fn param(self, n: usize) -> String {
        match self {
            Backend::Sqlite => format!("?{n}"),
            Backend::Postgres => format!("${n}"),
        }
    }
}
