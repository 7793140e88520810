//! The shared store: the same log in PostgreSQL, for runs and workers on many hosts.
//!
//! Same records as the sled store (the bodies byte for byte, per-run gapless seqs, the blake3
//! chain from the run's genesis hash), one row per record. An append locks the run's head row,
//! compares its seq with the expected one (a stale one is the same typed
//! [`StoreError::Conflict`]), inserts the rows, moves the head and notifies, all committed
//! together: so any number of processes on any hosts append to one run safely. It is one
//! statement when this process left the head where it is ([`quick`]), else a transaction that
//! reads the head first ([`batch`]). A connection lost mid-append is settled
//! by reading the log again, never by guessing (see [`PgLog::append`]). Subscriptions use
//! LISTEN/NOTIFY only to wake up and read by seq ([`follow`]), so a missed notification loses
//! nothing.
//!
//! [`crate::EventLog`] is synchronous and the callers may be inside a tokio runtime of their own,
//! so the log drives tokio-postgres on a runtime it owns and waits for answers on a channel.

mod acks;
mod append;
mod batch;
mod follow;
mod lease;
mod quick;
mod schema;
#[cfg(feature = "testkit")]
pub mod scratch;
pub mod tls;
#[cfg(feature = "testkit")]
pub mod wire;

pub use lease::host_name;
pub use schema::SCHEMA;

use crate::blocks::{self, Blocks, Chain, Linker};
use crate::error::{Damage, Result, StoreError};
use crate::log::EventLog;
use crate::types::{Durability, Head, Record, RecordRef, RunMeta, VerifyReport};
use crossbeam_channel::Receiver;
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use std::collections::HashMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_postgres::types::ToSql;
use tokio_postgres::Row as PgRow;

/// Records read per round trip by a scan.
const SCAN_BATCH: i64 = 8_192;
/// Connections a process keeps open to the server.
const POOL_SIZE: usize = 16;
/// How long to wait for a connection before saying the server cannot be reached.
const CONNECT_WAIT: Duration = Duration::from_secs(10);
/// How long the server lets a session sit in a transaction without a word from its client
/// before ending it. runlog's transactions send their statements back to back, so a session
/// idle this long is a client whose host is gone or whose process is frozen; until it ends,
/// it holds the heads it locked and every append to those runs waits.
const IDLE_IN_TRANSACTION_MS: u32 = 2_000;
/// How long a connection's unacknowledged data may wait before the client gives it up: a
/// partitioned connection is noticed in seconds rather than TCP's quarter of an hour.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether a text names a PostgreSQL store rather than a directory.
pub fn is_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// What the async side needs: the pool and how to name the server in messages.
pub(crate) struct Pg {
    pool: Pool,
    config: tokio_postgres::Config,
    /// How connections are encrypted and checked (`sslmode`).
    connector: tokio_postgres_rustls::MakeRustlsConnect,
    /// The `sslmode` in force, named in connection errors with the fix.
    mode: tls::Mode,
    /// The server as `postgres://user@host:port/db`, never with its password.
    pub(crate) at: String,
}

impl std::fmt::Debug for Pg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pg")
            .field("at", &self.at)
            .finish_non_exhaustive()
    }
}

impl Pg {
    async fn client(&self) -> Result<deadpool_postgres::Client> {
        self.pool.get().await.map_err(|e| {
            // deadpool's message stops at "error performing TLS handshake": the why is below.
            let mut why = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(s) = source {
                let said = s.to_string();
                if !why.ends_with(&said) {
                    why = format!("{why}: {said}");
                }
                source = s.source();
            }
            let (why, refused) = tls::explained(self.mode, why);
            StoreError::Postgres {
                at: self.at.clone(),
                what: "cannot connect",
                why,
                // A certificate refused is not a server away: trying again changes nothing.
                lost: !refused,
            }
        })
    }

    fn error(&self, what: &'static str, e: &tokio_postgres::Error) -> StoreError {
        StoreError::Postgres {
            at: self.at.clone(),
            what,
            why: describe(e),
            lost: lost(e),
        }
    }
}

/// The server's message when it sent one (tokio-postgres says only "db error" otherwise).
fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

/// Sessions and connections that went silent are ended in seconds on both sides, unless the
/// URL says otherwise (`options=-c idle_in_transaction_session_timeout=…`, `keepalives_idle`,
/// `tcp_user_timeout`).
fn quick_to_notice_the_dead(config: &mut tokio_postgres::Config, url: &str) {
    let options = config.get_options().unwrap_or_default().to_owned();
    if !options.contains("idle_in_transaction_session_timeout") {
        let idle = format!("-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}");
        config.options(format!("{options} {idle}").trim());
    }
    if !url.contains("keepalives_idle") {
        config
            .keepalives(true)
            .keepalives_idle(Duration::from_secs(5))
            .keepalives_interval(Duration::from_secs(1))
            .keepalives_retries(3);
    }
    if !url.contains("tcp_user_timeout") {
        config.tcp_user_timeout(TCP_USER_TIMEOUT);
    }
}

/// Each prepared statement is planned once per session, unless the URL says otherwise
/// (`options=-c plan_cache_mode=…`). An append's statement takes arrays whose lengths a custom
/// plan would look at: with it the server planned the statement again at every append, which
/// cost a lone producer a third of its appends a second (the shared bench). runlog's
/// statements look rows up by key and by seq range, which a generic plan serves as well.
fn planned_once(config: &mut tokio_postgres::Config) {
    let options = config.get_options().unwrap_or_default().to_owned();
    if !options.contains("plan_cache_mode") {
        config.options(format!("{options} -c plan_cache_mode=force_generic_plan").trim());
    }
}

/// Whether the connection went away (the server stopped, or ended this session): the statement
/// may or may not have been applied.
fn lost(e: &tokio_postgres::Error) -> bool {
    use tokio_postgres::error::SqlState;
    e.is_closed()
        || e.code().is_some_and(|c| {
            [
                SqlState::ADMIN_SHUTDOWN,
                SqlState::CRASH_SHUTDOWN,
                SqlState::CANNOT_CONNECT_NOW,
                SqlState::CONNECTION_FAILURE,
                SqlState::CONNECTION_EXCEPTION,
            ]
            .contains(c)
        })
        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// The log in PostgreSQL.
#[derive(Debug)]
pub struct PgLog {
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
    pg: Arc<Pg>,
    /// Run ids to their numbers and chains, which never change once a run exists.
    nums: Mutex<HashMap<String, (i64, Chain)>>,
    follow: follow::Follow,
    held: lease::Held,
    /// The fault tests' record of acknowledged appends (off unless they turn it on).
    acks: acks::Acks,
    /// Where appends wait for the next group commit.
    batcher: batch::Batcher,
    /// The URL as given, password included: only for the environment of runlog's own child
    /// processes (a sub-project's run), never for messages.
    url: String,
}

impl PgLog {
    /// Connects to the server at `url` (`postgres://user:password@host:port/db`), creating the
    /// schema on first use.
    pub fn connect(url: &str) -> Result<Self> {
        let (plain, ssl) = tls::split(url)?;
        let connector = ssl.connector()?;
        let mut config = tokio_postgres::Config::from_str(&plain).map_err(|e| {
            StoreError::Invalid(format!(
                "{} is not a PostgreSQL URL: {e}",
                without_password(url)
            ))
        })?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_WAIT);
        }
        quick_to_notice_the_dead(&mut config, &plain);
        planned_once(&mut config);
        config.application_name("runlog");
        config.ssl_mode(ssl.tokio_mode());
        // As libpq does: a URL without a password takes PGPASSWORD's.
        if config.get_password().is_none() {
            if let Some(password) = std::env::var_os("PGPASSWORD") {
                config.password(password.as_encoded_bytes());
            }
        }
        let at = name_server(&config);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("runlog-postgres")
            .enable_all()
            .build()
            .map_err(|source| StoreError::Io {
                what: "cannot start the PostgreSQL client runtime for",
                path: at.clone().into(),
                cause: source,
            })?;
        let manager = Manager::from_config(
            config.clone(),
            connector.clone(),
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_WAIT))
            .create_timeout(Some(CONNECT_WAIT))
            .build()
            .map_err(|e| StoreError::Invalid(format!("cannot set up connections: {e}")))?;
        let pg = Arc::new(Pg {
            pool,
            config,
            connector,
            mode: ssl.mode,
            at,
        });
        let log = Self {
            handle: runtime.handle().clone(),
            batcher: batch::Batcher::start(runtime.handle(), pg.clone()),
            runtime: Some(runtime),
            pg,
            nums: Mutex::new(HashMap::new()),
            follow: follow::Follow::default(),
            held: lease::Held::default(),
            acks: acks::Acks::default(),
            url: url.to_owned(),
        };
        log.call(|pg| async move { schema::prepare(&pg).await })?;
        Ok(log)
    }

    /// The server, without its password.
    pub fn at(&self) -> &str {
        &self.pg.at
    }

    /// The URL as given, password included: for the environment of runlog's own child
    /// processes only (never a message or a command line).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Runs `work` on the log's runtime and waits for it: callable from any thread, inside a
    /// runtime or not.
    fn call<T, F>(&self, work: impl FnOnce(Arc<Pg>) -> F) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job = work(self.pg.clone());
        self.handle.spawn(async move {
            let _ = tx.send(job.await);
        });
        rx.recv().map_err(|_| StoreError::Closed)?
    }

    /// Like [`Self::call`] for statements that may safely run again: a lost connection is
    /// retried on a new one a few times before it is reported.
    fn read<T, F>(&self, work: impl Fn(Arc<Pg>) -> F) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = Result<T>> + Send + 'static,
    {
        let mut tries = 0;
        loop {
            match self.call(&work) {
                Err(StoreError::Postgres { lost: true, .. }) if tries < append::RETRIES => {
                    tries += 1;
                    std::thread::sleep(append::backoff(tries));
                }
                other => return other,
            }
        }
    }

    /// The run's number, if it exists.
    fn num(&self, run: &str) -> Result<Option<i64>> {
        Ok(self.run_of(run)?.map(|(num, _)| num))
    }

    /// The run's number and chain.
    fn run_of(&self, run: &str) -> Result<Option<(i64, Chain)>> {
        if let Some(n) = self.nums.lock().unwrap_or_else(|p| p.into_inner()).get(run) {
            return Ok(Some(*n));
        }
        let owned = run.to_owned();
        let found = self.read(|pg| {
            let run = owned.clone();
            async move { num_of(&pg, &run).await }
        })?;
        if let Some(n) = found {
            self.nums
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(run.to_owned(), n);
        }
        Ok(found)
    }

    /// The run's number and chain, and `from` made at least 1, for a read of `from..=to`;
    /// `None` when there is nothing to read.
    fn range_of(&self, run: &str, from: u64, to: u64) -> Result<Option<(i64, Chain, u64)>> {
        let from = from.max(1);
        if from > to {
            return Ok(None);
        }
        Ok(self.run_of(run)?.map(|(num, chain)| (num, chain, from)))
    }

    /// Hands the rows of run `num` from `start` to `to`, read a batch at a time, to `take` until
    /// it says stop; whether it read them all.
    fn each_row(
        &self,
        num: i64,
        start: u64,
        to: u64,
        take: &mut dyn FnMut(Row) -> Result<bool>,
    ) -> Result<bool> {
        let mut next = start;
        while next <= to {
            let batch =
                self.read(|pg| async move { rows(&pg, num, next, to, SCAN_BATCH).await })?;
            let full = batch.len() as i64 == SCAN_BATCH;
            for row in batch {
                next = row.0 + 1;
                if !take(row)? {
                    return Ok(false);
                }
            }
            if !full {
                break;
            }
        }
        Ok(true)
    }

    /// Removes runs for good: their events in batches of 5,000 rows (one short
    /// transaction each, so appends to other runs never wait long), then their row, their
    /// snapshots and `blobs` (those only their records named). PostgreSQL gives the space back
    /// to its tables at the next `VACUUM` (autovacuum does it), to the disk only with
    /// `VACUUM FULL`.
    pub fn forget(&self, runs: &[String], blobs: &[[u8; 32]]) -> Result<crate::Forgot> {
        let mut forgot = crate::Forgot::default();
        for run in runs {
            let Some(num) = self.num(run)? else { continue };
            loop {
                let gone = self.query(
                    "cannot delete a forgotten run's events",
                    "DELETE FROM runlog_events WHERE ctid IN \
                     (SELECT ctid FROM runlog_events WHERE num = $1 LIMIT 5000) RETURNING seq",
                    vec![Box::new(num)],
                )?;
                if gone.is_empty() {
                    break;
                }
                forgot.frames += gone.len() as u64;
            }
            self.query(
                "cannot delete a forgotten run",
                "DELETE FROM runlog_runs WHERE run = $1 RETURNING num",
                vec![Box::new(run.clone())],
            )?;
            let prefix = crate::forget::snapshot_prefix(run);
            let removed = self.query(
                "cannot delete a forgotten run's snapshots",
                "DELETE FROM runlog_cache WHERE substring(key from 1 for octet_length($1::bytea)) = $1::bytea RETURNING octet_length(key)::bigint",
                vec![Box::new(prefix.clone())],
            )?;
            forgot.snapshots += removed
                .iter()
                .filter(|r| {
                    let len = usize::try_from(r.get::<_, i64>(0)).unwrap_or(0);
                    crate::forget::is_snapshot_key(&prefix, len)
                })
                .count() as u64;
            self.nums
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(run);
            forgot.runs.push(run.clone());
        }
        let hashes: Vec<Vec<u8>> = blobs.iter().map(|b| b.to_vec()).collect();
        if !hashes.is_empty() {
            let gone = self.query(
                "cannot delete a forgotten run's blobs",
                "DELETE FROM runlog_blobs WHERE hash = ANY($1) RETURNING 1",
                vec![Box::new(hashes)],
            )?;
            forgot.blobs = gone.len() as u64;
        }
        Ok(forgot)
    }

    /// Runs one statement that may safely run again (see [`Self::read`]); its rows.
    fn query(
        &self,
        what: &'static str,
        sql: &'static str,
        params: Vec<Param>,
    ) -> Result<Vec<PgRow>> {
        let params = Arc::new(params);
        self.read(|pg| {
            let params = params.clone();
            async move {
                let refs: Vec<&(dyn ToSql + Sync)> =
                    params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect();
                query_on(&pg, what, sql, &refs).await
            }
        })
    }
}

impl Drop for PgLog {
    fn drop(&mut self) {
        // Not `drop(runtime)`: that blocks, and panics when this runs inside another runtime.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// `postgres://user@host:port/db` from a parsed config: what messages name.
fn name_server(config: &tokio_postgres::Config) -> String {
    use tokio_postgres::config::Host;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config
        .get_user()
        .map(|u| format!("{u}@"))
        .unwrap_or_default();
    let db = config.get_dbname().unwrap_or("");
    format!("postgres://{user}{host}:{port}/{db}")
}

/// A URL without its password: what messages and other processes' command lines may show.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "the store URL".into();
    };
    match rest.split_once('@') {
        Some((cred, host)) => {
            let user = cred.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}")
        }
        None => url.to_owned(),
    }
}

/// A statement's parameter, owned, for statements that may be run again on a new connection.
type Param = Box<dyn ToSql + Send + Sync>;

/// One statement's rows (prepared once per connection).
async fn query_on(
    pg: &Pg,
    what: &'static str,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<PgRow>> {
    let client = pg.client().await?;
    let statement = client
        .prepare_cached(sql)
        .await
        .map_err(|e| pg.error(what, &e))?;
    client
        .query(&statement, params)
        .await
        .map_err(|e| pg.error(what, &e))
}

/// The number of a run, if it exists.
async fn num_of(pg: &Pg, run: &str) -> Result<Option<(i64, Chain)>> {
    let found = query_on(
        pg,
        "cannot look the run up",
        "SELECT num, chain FROM runlog_runs WHERE run = $1",
        &[&run],
    )
    .await?;
    found
        .first()
        .map(|r| Ok((r.get::<_, i64>(0), chain_of(run, r.get::<_, i16>(1))?)))
        .transpose()
}

/// The chain a run's `chain` column names.
fn chain_of(run: &str, n: i16) -> Result<Chain> {
    u32::try_from(n)
        .ok()
        .and_then(Chain::from_number)
        .ok_or_else(|| StoreError::Damaged {
            run: run.to_owned(),
            damage: Damage::corrupt(1, format!("the run's chain is {n}, which no runlog knows")),
        })
}

/// A row of `runlog_events`.
type Row = (u64, [u8; 32], Vec<u8>);

/// Rows of run `num` with seq in `from..=to`, at most `limit`, oldest first.
async fn rows(pg: &Pg, num: i64, from: u64, to: u64, limit: i64) -> Result<Vec<Row>> {
    let found = query_on(
        pg,
        "cannot read the run",
        "SELECT seq, hash, body FROM runlog_events
         WHERE num = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq LIMIT $4",
        &[&num, &to_i64(from), &to_i64(to), &limit],
    )
    .await?;
    found.iter().map(|r| row_of(num, r)).collect()
}

/// A row of `runlog_events` as read: (seq, hash, body).
fn row_of(num: i64, r: &PgRow) -> Result<Row> {
    let seq: i64 = r.get(0);
    let hash: Vec<u8> = r.get(1);
    let hash = <[u8; 32]>::try_from(hash.as_slice()).map_err(|_| StoreError::Damaged {
        run: format!("#{num}"),
        damage: Damage::corrupt(seq as u64, "a stored hash is not 32 bytes"),
    })?;
    Ok((seq as u64, hash, r.get(2)))
}

fn to_i64(seq: u64) -> i64 {
    i64::try_from(seq).unwrap_or(i64::MAX)
}

/// Where a read that checks a run's records from `from` on starts: the record before it, whose
/// stored hash the chain goes on from, or for the blocked chain the last record of the block
/// before (0: the run's genesis).
fn check_from(chain: Chain, from: u64) -> u64 {
    match chain {
        Chain::PerRecord => from.max(1) - 1,
        Chain::Blocked => blocks::block_first(from.max(1)) - 1,
    }
}

/// Checks a run's rows, read in order from [`check_from`]: each follows the one before in the
/// chain and carries the hash its body gives.
struct Rows<'r> {
    run: &'r str,
    chain: Chain,
    next: u64,
    linker: Option<Linker>,
    /// A seq and the hash a reader holds there (a subscriber's): the log must agree.
    holds: Option<(u64, [u8; 32])>,
}

impl<'r> Rows<'r> {
    fn new(run: &'r str, chain: Chain, start: u64) -> Self {
        Self {
            run,
            chain,
            next: start.max(1),
            linker: (start == 0).then(|| Linker::genesis(chain, run)),
            holds: None,
        }
    }

    /// The chain after the last row taken.
    fn linker(self) -> Option<Linker> {
        self.linker
    }

    /// Takes the next row: its chain hash once checked, `None` for the row the chain starts
    /// from (taken as stored).
    fn take(&mut self, row: &Row) -> Result<Option<[u8; 32]>> {
        let (seq, stored, body) = row;
        let damaged = |at: u64, why: String| StoreError::Damaged {
            run: self.run.to_owned(),
            damage: Damage::corrupt(at, why),
        };
        if *seq != self.next {
            return Err(damaged(self.next, format!("seq {} is missing", self.next)));
        }
        self.next += 1;
        let hash = match self.linker.as_mut() {
            None => {
                self.linker = Some(match self.chain {
                    Chain::PerRecord => Linker::PerRecord(*stored),
                    Chain::Blocked => {
                        Linker::Blocked(Box::new(Blocks::at_block_end(*seq, *stored)))
                    }
                });
                None
            }
            Some(linker) => {
                let hash = linker.push(body);
                if &hash != stored {
                    return Err(damaged(
                        *seq,
                        "the body does not match its chain hash".into(),
                    ));
                }
                Some(hash)
            }
        };
        if let Some((at, held)) = self.holds {
            if at == *seq && held != *stored {
                return Err(damaged(
                    *seq,
                    "the log's chain no longer holds this record".into(),
                ));
            }
        }
        Ok(hash)
    }
}

/// Checks a blocked run's rows a block at a time, read in order from [`check_from`]: the
/// forms of a block's rows taken in together and checked against the stored hash of the last
/// row taken, before any of them is handed on. What a fold reads, without working out each
/// row's own hash (unless a block does not match: then each, to name the row).
struct BlockRows<'r> {
    run: &'r str,
    next: u64,
    chain: Option<Blocks>,
    forms: Vec<u8>,
    rows: Vec<Row>,
}

impl<'r> BlockRows<'r> {
    fn new(run: &'r str, start: u64) -> Self {
        Self {
            run,
            next: start.max(1),
            chain: (start == 0).then(|| Blocks::genesis(run)),
            forms: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// Takes the next row; gives back a block's rows once the block is whole and checked.
    fn take(&mut self, row: Row) -> Result<Option<Vec<Row>>> {
        if row.0 != self.next {
            return Err(self.damaged(self.next, format!("seq {} is missing", self.next)));
        }
        self.next += 1;
        if self.chain.is_none() {
            // The row the chain starts from, taken as stored.
            self.chain = Some(Blocks::at_block_end(row.0, row.1));
            return Ok(None);
        }
        self.forms.extend(blocks::form(&row.2));
        let ends_block = row.0 % blocks::BLOCK == 0;
        self.rows.push(row);
        if ends_block {
            return self.finish().map(Some);
        }
        Ok(None)
    }

    /// The rows taken since the last block was checked, checked.
    fn finish(&mut self) -> Result<Vec<Row>> {
        let rows = std::mem::take(&mut self.rows);
        let (Some(chain), Some(last)) = (self.chain.as_mut(), rows.last()) else {
            return Ok(rows);
        };
        let before = chain.clone();
        if chain.absorb(&self.forms, rows.len() as u64) != last.1 {
            let mut each = before;
            let bad = rows
                .iter()
                .find(|(_, stored, body)| each.push(body) != *stored)
                .map_or(last.0, |r| r.0);
            return Err(self.damaged(bad, "the body does not match its chain hash".into()));
        }
        self.forms.clear();
        Ok(rows)
    }

    fn damaged(&self, seq: u64, why: String) -> StoreError {
        StoreError::Damaged {
            run: self.run.to_owned(),
            damage: Damage::corrupt(seq, why),
        }
    }
}

impl EventLog for PgLog {
    fn append(&self, run: &str, expected: Option<u64>, bodies: Vec<Vec<u8>>) -> Result<Head> {
        let count = bodies.len();
        let head = append::append(self, run, expected, Chain::Blocked, bodies)?;
        self.acks.saw(run, count, &head);
        Ok(head)
    }

    fn create(&self, run: &str, chain: Chain, bodies: Vec<Vec<u8>>) -> Result<Head> {
        let count = bodies.len();
        let head = append::append(self, run, Some(0), chain, bodies)?;
        self.acks.saw(run, count, &head);
        Ok(head)
    }

    fn chain(&self, run: &str) -> Result<Option<Chain>> {
        match self.head(run)? {
            Some(_) => Ok(self.run_of(run)?.map(|(_, chain)| chain)),
            None => Ok(None),
        }
    }

    fn head(&self, run: &str) -> Result<Option<Head>> {
        let found = self.query(
            "cannot read the run's head",
            "SELECT head_seq, head_hash FROM runlog_runs WHERE run = $1",
            vec![Box::new(run.to_owned())],
        )?;
        Ok(found.first().and_then(|r| head_of(r.get(0), r.get(1))))
    }

    fn runs(&self) -> Result<Vec<RunMeta>> {
        let found = self.query(
            "cannot list the runs",
            "SELECT run, created_ms, head_seq, head_hash FROM runlog_runs",
            Vec::new(),
        )?;
        let mut runs: Vec<RunMeta> = found
            .iter()
            .map(|r| RunMeta {
                run: r.get(0),
                created_ms: r.get::<_, i64>(1).max(0) as u64,
                head: head_of(r.get(2), r.get(3)),
            })
            .collect();
        // Byte order, as the sled store lists them (the server's collation may differ).
        runs.sort_by(|a, b| a.run.cmp(&b.run));
        Ok(runs)
    }

    fn scan(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(RecordRef<'_>) -> Result<bool>,
    ) -> Result<()> {
        let Some((num, chain, from)) = self.range_of(run, from, to)? else {
            return Ok(());
        };
        let start = check_from(chain, from);
        let mut checker = Rows::new(run, chain, start);
        self.each_row(
            num,
            start,
            to,
            &mut |row| match checker.take(&row)?.filter(|_| row.0 >= from) {
                Some(hash) => f(RecordRef {
                    seq: row.0,
                    body: &row.2,
                    hash: &hash,
                }),
                None => Ok(true),
            },
        )
        .map(|_| ())
    }

    fn scan_bodies(
        &self,
        run: &str,
        from: u64,
        to: u64,
        f: &mut dyn FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let Some((num, chain, from)) = self.range_of(run, from, to)? else {
            return Ok(());
        };
        if chain == Chain::PerRecord {
            return self.scan(run, from, to, &mut |r| f(r.seq, r.body));
        }
        let start = check_from(chain, from);
        let mut blocks = BlockRows::new(run, start);
        let mut hand_on = |rows: Vec<Row>| -> Result<bool> {
            for (seq, _, body) in rows.iter().filter(|(seq, _, _)| *seq >= from) {
                if !f(*seq, body)? {
                    return Ok(false);
                }
            }
            Ok(true)
        };
        let read_to_end = self.each_row(num, start, to, &mut |row| match blocks.take(row)? {
            Some(checked) => hand_on(checked),
            None => Ok(true),
        })?;
        if read_to_end {
            hand_on(blocks.finish()?)?;
        }
        Ok(())
    }

    fn subscribe(&self, run: Option<&str>) -> Receiver<Record> {
        follow::subscribe(self, run)
    }

    fn verify(&self, run: &str) -> Result<VerifyReport> {
        let head = self.head(run)?;
        let mut report = VerifyReport {
            run: run.to_owned(),
            verified: 0,
            head,
            damage: None,
        };
        let mut last = None;
        // Up to the head read above: records past it were appended since, in the transaction
        // that moved the head on.
        let to = head.map_or(0, |h| h.seq);
        match self.scan(run, 1, to, &mut |r| {
            last = Some(Head {
                seq: r.seq,
                hash: *r.hash,
            });
            Ok(true)
        }) {
            Ok(()) => {}
            Err(StoreError::Damaged { damage, .. }) => {
                report.verified = damage.seq.saturating_sub(1);
                report.damage = Some(damage);
                return Ok(report);
            }
            Err(e) => return Err(e),
        }
        report.verified = last.map_or(0, |h| h.seq);
        if last != head {
            let at = head.map_or(1, |h| h.seq.min(report.verified + 1));
            report.damage = Some(Damage::corrupt(
                at,
                format!(
                    "the run's head says seq {} but its records end at seq {}",
                    head.map_or(0, |h| h.seq),
                    report.verified
                ),
            ));
        } else if let Some(num) = self.num(run)? {
            // A record past that head is an append made since only if the head, read after
            // it, has moved on to it (records and head move in one transaction).
            let past = self.read(|pg| async move { rows(&pg, num, to + 1, u64::MAX, 1).await })?;
            if let Some((seq, _, _)) = past.first() {
                let now = self.head(run)?.map_or(0, |h| h.seq);
                if now < *seq {
                    report.damage = Some(Damage::corrupt(
                        *seq,
                        format!("records go on at seq {seq}, past the run's head at seq {now}"),
                    ));
                }
            }
        }
        Ok(report)
    }

    fn sync(&self) -> Result<()> {
        // Every append is a committed transaction: durable once acknowledged.
        Ok(())
    }

    fn put_blob(&self, bytes: &[u8]) -> Result<[u8; 32]> {
        let hash = *blake3::hash(bytes).as_bytes();
        self.query(
            "cannot store a blob",
            "INSERT INTO runlog_blobs (hash, bytes) VALUES ($1, $2) ON CONFLICT (hash) DO NOTHING",
            vec![Box::new(hash.to_vec()), Box::new(bytes.to_vec())],
        )?;
        Ok(hash)
    }

    fn get_blob(&self, hash: &[u8; 32]) -> Result<Option<Vec<u8>>> {
        let found = self.query(
            "cannot read a blob",
            "SELECT bytes FROM runlog_blobs WHERE hash = $1",
            vec![Box::new(hash.to_vec())],
        )?;
        match found.first().map(|r| r.get::<_, Vec<u8>>(0)) {
            Some(bytes) if blake3::hash(&bytes).as_bytes() != hash => Err(StoreError::Damaged {
                run: "blobs".into(),
                damage: Damage::corrupt(0, "a blob does not match its hash"),
            }),
            other => Ok(other),
        }
    }

    fn cache_put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.query(
            "cannot write the cache",
            "INSERT INTO runlog_cache (key, value) VALUES ($1, $2)
             ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
            vec![Box::new(key.to_vec()), Box::new(value.to_vec())],
        )?;
        Ok(())
    }

    fn cache_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let found = self.query(
            "cannot read the cache",
            "SELECT value FROM runlog_cache WHERE key = $1",
            vec![Box::new(key.to_vec())],
        )?;
        Ok(found.first().map(|r| r.get(0)))
    }

    fn cache_keys(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        let found = self.query(
            "cannot list the cache",
            "SELECT key FROM runlog_cache WHERE key >= $1 ORDER BY key",
            vec![Box::new(prefix.to_vec())],
        )?;
        Ok(found
            .iter()
            .map(|r| r.get::<_, Vec<u8>>(0))
            .take_while(|k| k.starts_with(prefix))
            .collect())
    }

    fn size_bytes(&self) -> Result<u64> {
        let found = self.query(
            "cannot measure the tables",
            "SELECT COALESCE(sum(pg_total_relation_size(t::regclass)), 0)::bigint
             FROM unnest(ARRAY['runlog_runs', 'runlog_events', 'runlog_blobs',
                               'runlog_cache']) AS t",
            Vec::new(),
        )?;
        Ok(found
            .first()
            .map_or(0, |r| r.get::<_, i64>(0).max(0) as u64))
    }

    fn durability(&self) -> Durability {
        Durability::Durable
    }
}

/// A head from a runs row (a run whose head seq is 0 has no records yet).
fn head_of(seq: i64, hash: Vec<u8>) -> Option<Head> {
    let hash = <[u8; 32]>::try_from(hash.as_slice()).ok()?;
    (seq > 0).then_some(Head {
        seq: seq as u64,
        hash,
    })
}
