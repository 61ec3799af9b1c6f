//! Statements over many rows: `… WHERE id IN (…)` run over an id list in chunks, and inserts
//! that read their rows from one JSON parameter. Each is written once here, for the notifier,
//! the sweeper, the ladder and intake; the list filters of `incidents::reads` and `stats` inline
//! the caller's team ids (integers read from the database) instead.

use super::{Backend, Db, Tx};
use crate::Result;
use sqlx::any::AnyRow;
use sqlx::{Any, AnyConnection};

/// A value bound ahead of an id list.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Arg<'a> {
    Int(i64),
    MaybeInt(Option<i64>),
    Text(&'a str),
}

impl From<i64> for Arg<'_> {
    fn from(v: i64) -> Self {
        Arg::Int(v)
    }
}

impl From<Option<i64>> for Arg<'_> {
    fn from(v: Option<i64>) -> Self {
        Arg::MaybeInt(v)
    }
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(v: &'a str) -> Self {
        Arg::Text(v)
    }
}

/// Binds `args`, then `ids`, then `pad` more copies of the last id, to a query of either shape.
macro_rules! bind_all {
    ($q:expr, $args:expr, $ids:expr, $pad:expr) => {{
        let mut q = $q;
        for arg in $args {
            q = match *arg {
                Arg::Int(v) => q.bind(v),
                Arg::MaybeInt(v) => q.bind(v),
                Arg::Text(v) => q.bind(v),
            };
        }
        for id in $ids {
            q = q.bind(id);
        }
        if let Some(last) = $ids.last() {
            for _ in 0..$pad {
                q = q.bind(last);
            }
        }
        q
    }};
}

/// One statement of an id list: its text, its ids, whether it is prepared once and kept, and
/// how many copies of the last id pad its list.
struct Chunk<'i, K> {
    sql: String,
    ids: &'i [K],
    kept: bool,
    pad: usize,
}

/// The longest id list padded to a kept shape (`chunks`); a batch of pages is rarely longer.
const KEPT_UP_TO: usize = 64;

/// The chunks `ids` is run in, each with `sql`'s `{ids}` replaced by its parameter list
/// (numbered after the `args`). A one-id statement is common and worth preparing once; longer
/// lists vary in length and would only fill the statement cache, except in a transaction whose
/// plans are kept (`indexed`, see `Db::begin_indexed`): there a list of up to `KEPT_UP_TO` ids
/// is padded to the next power of two with its last id (which `IN` does not count twice), so a
/// statement takes seven shapes, each planned once per connection instead of at every batch.
fn chunks<'i, K>(
    backend: Backend,
    sql: &'i str,
    args: usize,
    ids: &'i [K],
    indexed: bool,
) -> impl Iterator<Item = Chunk<'i, K>> + 'i {
    let size = rows_per_statement(backend, 1).saturating_sub(args).max(1);
    ids.chunks(size).map(move |chunk| {
        let n = chunk.len();
        let shape = match n.next_power_of_two() {
            padded if indexed && padded <= KEPT_UP_TO.min(size) => padded,
            _ => n,
        };
        Chunk {
            sql: sql.replace("{ids}", &list(backend, shape, args + 1)),
            ids: chunk,
            kept: n == 1 || (indexed && shape <= KEPT_UP_TO),
            pad: shape - n,
        }
    })
}

/// An id of an id list: an integer, or text such as an alert's fingerprint.
pub(crate) trait Id: for<'q> sqlx::Encode<'q, Any> + sqlx::Type<Any> + Sync {}
impl<K: for<'q> sqlx::Encode<'q, Any> + sqlx::Type<Any> + Sync> Id for K {}

/// Runs `sql` (a query with `{ids}` where the id list goes) over `ids`, `args` bound first,
/// and returns every chunk's rows.
pub(crate) async fn fetch_in<T>(
    conn: &mut AnyConnection,
    (backend, indexed): (Backend, bool),
    sql: &str,
    args: &[Arg<'_>],
    ids: &[impl Id],
) -> Result<Vec<T>>
where
    T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
{
    let mut rows = Vec::new();
    for c in chunks(backend, sql, args.len(), ids, indexed) {
        let q = bind_all!(
            sqlx::query_as::<_, T>(&c.sql).persistent(c.kept),
            args,
            c.ids,
            c.pad
        );
        rows.extend(q.fetch_all(&mut *conn).await?);
    }
    Ok(rows)
}

/// `fetch_in` for a statement without rows; returns the rows it affected.
pub(crate) async fn execute_in(
    conn: &mut AnyConnection,
    (backend, indexed): (Backend, bool),
    sql: &str,
    args: &[Arg<'_>],
    ids: &[impl Id],
) -> Result<u64> {
    let mut done = 0;
    for c in chunks(backend, sql, args.len(), ids, indexed) {
        let q = bind_all!(sqlx::query(&c.sql).persistent(c.kept), args, c.ids, c.pad);
        done += q.execute(&mut *conn).await?.rows_affected();
    }
    Ok(done)
}

impl Tx {
    /// `fetch_in` inside this transaction.
    pub(crate) async fn fetch_in<T>(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        ids: &[impl Id],
    ) -> Result<Vec<T>>
    where
        T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    {
        let shape = (self.backend, self.indexed);
        fetch_in(self, shape, sql, args, ids).await
    }

    /// `execute_in` inside this transaction.
    pub(crate) async fn execute_in(
        &mut self,
        sql: &str,
        args: &[Arg<'_>],
        ids: &[impl Id],
    ) -> Result<u64> {
        let shape = (self.backend, self.indexed);
        execute_in(self, shape, sql, args, ids).await
    }
}

impl Db {
    /// `fetch_in` outside any transaction (reads only).
    pub(crate) async fn fetch_in<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        ids: &[impl Id],
    ) -> Result<Vec<T>>
    where
        T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.pool.acquire().await?;
        fetch_in(&mut conn, (self.backend, false), sql, args, ids).await
    }

    /// `fetch_in` for a write whose every statement stands alone and finds its rows by id (a
    /// conditional claim, say). On SQLite each commits by itself in the writer's turn, without
    /// `BEGIN` and `COMMIT`; on PostgreSQL they run in a `begin_indexed` transaction, whose
    /// `COMMIT` costs less than planning them at every batch.
    pub(crate) async fn write_in<T>(
        &self,
        sql: &str,
        args: &[Arg<'_>],
        ids: &[impl Id],
    ) -> Result<Vec<T>>
    where
        T: for<'r> sqlx::FromRow<'r, AnyRow> + Send + Unpin,
    {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        if self.backend == Backend::Postgres {
            let mut tx = self.begin_indexed().await?;
            let rows = tx.fetch_in(sql, args, ids).await?;
            tx.commit().await?;
            return Ok(rows);
        }
        let _turn = self.writer_turn().await;
        let mut conn = self.pool.acquire().await?;
        fetch_in(&mut conn, (self.backend, false), sql, args, ids).await
    }
}

/// A column of `insert_rows`: integers, or text.
pub(crate) enum Col {
    Int(&'static str),
    Text(&'static str),
}

/// `INSERT INTO table (columns) SELECT …` that reads its rows from a JSON array of objects bound
/// as `$1`, one object per row with the columns as keys: one parameter however many rows. A
/// `VALUES` list costs PostgreSQL a parse and a bind per value, a third of a batch's insert
/// (`klaxon bench ticks`). Only the function that unnests the array differs by backend.
pub(crate) fn insert_rows(backend: Backend, table: &str, cols: &[Col]) -> String {
    let names: Vec<&str> = cols
        .iter()
        .map(|c| match c {
            Col::Int(n) | Col::Text(n) => *n,
        })
        .collect();
    let names = names.join(", ");
    match backend {
        Backend::Sqlite => format!(
            "INSERT INTO {table} ({names}) SELECT {} FROM json_each($1)",
            sqlite_values(cols, false)
        ),
        // Parsed once into typed columns (`->>` on each would parse each object again).
        Backend::Postgres => format!(
            "INSERT INTO {table} ({names}) SELECT {names} FROM {}",
            postgres_rows("rows", cols)
        ),
    }
}

/// The rows of a JSON array of objects bound as `$1`, as a `FROM` item named `alias` with
/// `cols` as its columns: for statements that join the rows to tables (`insert_rows` is the plain
/// insert).
pub(crate) fn json_rows(backend: Backend, alias: &str, cols: &[Col]) -> String {
    match backend {
        Backend::Sqlite => format!(
            "(SELECT {} FROM json_each($1)) AS {alias}",
            sqlite_values(cols, true)
        ),
        Backend::Postgres => postgres_rows(alias, cols),
    }
}

/// SQLite: each column read from `json_each`'s `value`, named after itself when `named`.
fn sqlite_values(cols: &[Col], named: bool) -> String {
    cols.iter()
        .map(|c| {
            let (n, value) = match c {
                Col::Int(n) => (n, format!("CAST(value ->> '{n}' AS BIGINT)")),
                Col::Text(n) => (n, format!("value ->> '{n}'")),
            };
            if named {
                format!("{value} AS {n}")
            } else {
                value
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// PostgreSQL: the array as a typed record set named `alias`.
fn postgres_rows(alias: &str, cols: &[Col]) -> String {
    let types: Vec<String> = cols
        .iter()
        .map(|c| match c {
            Col::Int(n) => format!("{n} bigint"),
            Col::Text(n) => format!("{n} text"),
        })
        .collect();
    format!(
        "json_to_recordset(CAST($1 AS json)) AS {alias}({})",
        types.join(", ")
    )
}

/// Runs an `insert_rows` statement for `rows`, serialized with the column names as keys.
pub(crate) async fn insert_json<T: serde::Serialize>(
    tx: &mut Tx,
    sql: &str,
    rows: &[T],
) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let json = serde_json::to_string(rows)
        .map_err(|e| crate::Error::Internal(format!("cannot encode rows: {e}")))?;
    sqlx::query(sql).bind(json).execute(&mut **tx).await?;
    Ok(())
}

/// Rows of `cols` parameters per statement on `backend`.
fn rows_per_statement(backend: Backend, cols: usize) -> usize {
    (backend.max_params() / cols.max(1)).max(1)
}

/// `$first, …`: a list of `n` parameters, for `IN (…)`.
fn list(backend: Backend, n: usize, first: usize) -> String {
    (first..first + n)
        .map(|i| backend.param(i))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::Backend::{Postgres, Sqlite};

    #[test]
    fn placeholders_are_numbered_from_first() {
        assert_eq!(super::list(Sqlite, 2, 4), "?4, ?5");
        assert_eq!(super::list(Postgres, 3, 1), "$1, $2, $3");
        assert_eq!(super::rows_per_statement(Postgres, 5), 1_600);
        assert_eq!(super::rows_per_statement(Sqlite, 600), 1);
    }

    #[test]
    fn id_lists_are_chunked_after_the_leading_values() {
        let ids: Vec<i64> = (1..=600).collect();
        let chunks: Vec<_> = super::chunks(Sqlite, "x IN ({ids})", 2, &ids, false).collect();
        assert_eq!(
            chunks.iter().map(|c| c.ids.len()).collect::<Vec<_>>(),
            [248, 248, 104]
        );
        assert!(chunks[0].sql.starts_with("x IN (?3, ?4,"));
        assert!(chunks.iter().all(|c| c.pad == 0 && !c.kept));
        let one: Vec<_> = super::chunks(Postgres, "x IN ({ids})", 1, &ids[..1], false).collect();
        assert_eq!(one[0].sql, "x IN ($2)");
        assert!(one[0].kept, "a one-id statement is prepared once");
    }

    #[test]
    fn in_a_transaction_that_keeps_plans_short_lists_take_few_shapes() {
        let ids: Vec<i64> = (1..=100).collect();
        let shape = |n: usize| {
            let c: Vec<_> = super::chunks(Postgres, "x IN ({ids})", 1, &ids[..n], true).collect();
            (c[0].sql.matches('$').count(), c[0].pad, c[0].kept)
        };
        assert_eq!(shape(1), (1, 0, true));
        assert_eq!(shape(3), (4, 1, true), "padded with the last id");
        assert_eq!(shape(23), (32, 9, true));
        assert_eq!(shape(64), (64, 0, true));
        assert_eq!(
            shape(65),
            (65, 0, false),
            "a long list is planned once, as before"
        );
        let lengths: std::collections::HashSet<_> = (1..=64).map(|n| shape(n).0).collect();
        assert_eq!(lengths.len(), 7);
    }

    #[test]
    fn json_rows_are_unnested_per_backend() {
        use super::Col::{Int, Text};
        assert_eq!(
            super::insert_rows(Sqlite, "t", &[Int("a"), Text("b")]),
            "INSERT INTO t (a, b) SELECT CAST(value ->> 'a' AS BIGINT), value ->> 'b' FROM json_each($1)"
        );
        assert_eq!(
            super::insert_rows(Postgres, "t", &[Int("a"), Text("b")]),
            "INSERT INTO t (a, b) SELECT a, b FROM json_to_recordset(CAST($1 AS json)) AS rows(a bigint, b text)"
        );
        assert_eq!(
            super::json_rows(Sqlite, "e", &[Int("a"), Text("b")]),
            "(SELECT CAST(value ->> 'a' AS BIGINT) AS a, value ->> 'b' AS b FROM json_each($1)) AS e"
        );
        assert_eq!(
            super::json_rows(Postgres, "e", &[Int("a"), Text("b")]),
            "json_to_recordset(CAST($1 AS json)) AS e(a bigint, b text)"
        );
    }
}
