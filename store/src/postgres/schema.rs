//! The shared store's tables, created on first use and versioned: each migration takes the
//! schema one version further, and a schema newer than this build knows is refused, not used.
//!
//! ```text
//! runlog_schema  (version)                                   one row: the schema in force
//! runlog_runs    (run, num, created_ms, head_seq, head_hash, chain)  one row per run: its
//!                                                             head, moved by compare-and-swap in
//!                                                             each append, and how its records
//!                                                             are chained (1, 2: `Chain::number`)
//! runlog_events  (num, seq, hash, body)                       one row per record, key (num, seq)
//! runlog_blobs   (hash, bytes)                                content-addressed
//! runlog_cache   (key, value)                                 snapshots; never trusted
//! runlog_workers (name, token, host, pid, joined_at, expires_at)  workers' leases
//! ```

use super::Pg;
use crate::error::{Result, StoreError};

/// Each entry takes the schema from its index to its index + 1. Add at the end; never edit one
/// that has shipped (a store made by it exists somewhere).
const MIGRATIONS: &[&str] = &[
    // 0 -> 1: the log.
    "CREATE TABLE runlog_runs (
        run text PRIMARY KEY,
        num bigserial UNIQUE NOT NULL,
        created_ms bigint NOT NULL,
        head_seq bigint NOT NULL,
        head_hash bytea NOT NULL
     );
     CREATE TABLE runlog_events (
        num bigint NOT NULL,
        seq bigint NOT NULL,
        hash bytea NOT NULL,
        body bytea NOT NULL,
        PRIMARY KEY (num, seq)
     );
     CREATE TABLE runlog_blobs (hash bytea PRIMARY KEY, bytes bytea NOT NULL);
     CREATE TABLE runlog_cache (key bytea PRIMARY KEY, value bytea NOT NULL);",
    // 1 -> 2: workers' leases. `token` grows with each joining (the fencing token); a lease is
    // live while `expires_at` is ahead of the server's clock (no host's clock is trusted).
    "CREATE SEQUENCE runlog_fence;
     CREATE TABLE runlog_workers (
        name text PRIMARY KEY,
        token bigint NOT NULL,
        host text NOT NULL,
        pid integer NOT NULL,
        joined_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL
     );",
    // 2 -> 3: how each run's records are chained. Runs made before are of the per-record chain.
    "ALTER TABLE runlog_runs ADD COLUMN chain smallint NOT NULL DEFAULT 1;",
];

/// The newest schema this build knows.
pub const SCHEMA: i32 = MIGRATIONS.len() as i32;

/// Any number, shared by every runlog: the advisory lock that lets one process at a time
/// create or migrate the schema.
const MIGRATION_LOCK: i64 = 0x7275_6e6c_6f67; // "runlog"

/// Brings the database to [`SCHEMA`], or refuses a newer one.
pub(super) async fn prepare(pg: &Pg) -> Result<()> {
    let mut client = pg.client().await?;
    let tx = client
        .transaction()
        .await
        .map_err(|e| pg.error("cannot start the schema check", &e))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(|e| pg.error("cannot lock the schema", &e))?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS runlog_schema (version integer NOT NULL)")
        .await
        .map_err(|e| pg.error("cannot create the schema table", &e))?;
    let found: Option<i32> = tx
        .query_opt("SELECT max(version) FROM runlog_schema", &[])
        .await
        .map_err(|e| pg.error("cannot read the schema version", &e))?
        .and_then(|row| row.get(0));
    let found = found.unwrap_or(0);
    if found > SCHEMA {
        return Err(StoreError::NewerSchema {
            at: pg.at.clone(),
            found,
            supported: SCHEMA,
        });
    }
    for step in MIGRATIONS.iter().skip(found.max(0) as usize) {
        tx.batch_execute(step)
            .await
            .map_err(|e| pg.error("cannot create the tables", &e))?;
    }
    if found < SCHEMA {
        tx.execute("DELETE FROM runlog_schema", &[])
            .await
            .map_err(|e| pg.error("cannot record the schema version", &e))?;
        tx.execute(
            "INSERT INTO runlog_schema (version) VALUES ($1)",
            &[&SCHEMA],
        )
        .await
        .map_err(|e| pg.error("cannot record the schema version", &e))?;
    }
    tx.commit()
        .await
        .map_err(|e| pg.error("cannot commit the schema", &e))
}
