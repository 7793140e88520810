//! Scratch databases for tests that need a real PostgreSQL: each test gets a database of its
//! own on the server named by `RUNLOG_TEST_POSTGRES` (an admin URL, e.g.
//! `postgres://postgres:runlog@127.0.0.1:5432/postgres`; `bash .ci/run` starts a server and sets
//! it), dropped when the test ends. Without it a test says it was skipped and how to run it;
//! with `RUNLOG_REQUIRE_POSTGRES=1` (as in CI) it fails instead.

use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the server tests may create databases on.
pub const ENV: &str = "RUNLOG_TEST_POSTGRES";

/// The variable naming a server that takes only TLS connections (`bash .ci/postgres-tls`
/// makes one: port 5433, `hostssl` only), with its query asking for TLS
/// (`?sslmode=verify-full&sslrootcert=CA`).
pub const TLS_ENV: &str = "RUNLOG_TEST_POSTGRES_TLS";

/// A database of a test's own, dropped (with any connections left) when this is.
#[derive(Debug)]
pub struct Scratch {
    /// Where the database is, for `--store` or [`super::PgLog::connect`].
    pub url: String,
    admin: String,
    name: String,
}

/// A fresh database, or `None` after saying why the test is skipped.
///
/// # Panics
/// When no server is named and `RUNLOG_REQUIRE_POSTGRES` is set, or the server refuses.
pub fn scratch() -> Option<Scratch> {
    scratch_on(
        ENV,
        "apt-get install -y postgresql; pg_ctlcluster 15 main start",
    )
}

/// [`scratch`] on the server of [`TLS_ENV`].
///
/// # Panics
/// As [`scratch`].
pub fn scratch_tls() -> Option<Scratch> {
    scratch_on(
        TLS_ENV,
        "`bash .ci/postgres-tls 15 PASSWORD` makes a TLS-only cluster and prints the URL",
    )
}

#[allow(clippy::panic)]
fn scratch_on(env: &str, how: &str) -> Option<Scratch> {
    let Ok(admin) = std::env::var(env) else {
        let why = format!(
            "no PostgreSQL for this test: set {env} to an admin URL such as \
             postgres://postgres:PASSWORD@127.0.0.1:5432/postgres ({how}; bash .ci/run does it)"
        );
        assert!(
            std::env::var_os("RUNLOG_REQUIRE_POSTGRES").is_none(),
            "{why}"
        );
        eprintln!("SKIPPED: {why}");
        return None;
    };
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "runlog_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    if let Err(e) = admin_statement(
        &admin,
        &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
    )
    .and_then(|()| admin_statement(&admin, &format!("CREATE DATABASE {name}")))
    {
        panic!("cannot create a test database on {env}: {e}");
    }
    let url = with_database(&admin, &name);
    Some(Scratch { url, admin, name })
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = admin_statement(
            &self.admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

/// `url` pointing at database `name` instead.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let root = match base[authority_end..].find('/') {
        Some(i) => &base[..authority_end + i],
        None => base,
    };
    format!("{root}/{name}{query}")
}

/// Runs one statement outside a transaction (CREATE DATABASE cannot run in one), on a thread
/// of its own so that a test inside a runtime may call it.
fn admin_statement(admin: &str, sql: &str) -> Result<(), AdminError> {
    let (admin, sql) = (admin.to_owned(), sql.to_owned());
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async move {
            connect(&admin).await?.batch_execute(&sql).await?;
            Ok(())
        })
    })
    .join()
    .map_err(|_| AdminError::Panicked)?
}

/// A plain client of the server `url` names, connected as the store connects (its `sslmode`
/// and TLS settings), its connection driven on the current runtime: for tests and benches
/// that talk to the server as an administrator or as a bare client would.
///
/// # Errors
/// When the URL cannot be read or the server cannot be reached.
pub async fn connect(url: &str) -> Result<tokio_postgres::Client, AdminError> {
    let (plain, ssl) = super::tls::split(url)?;
    let mut config: tokio_postgres::Config = plain.parse()?;
    config.ssl_mode(ssl.tokio_mode());
    let (client, connection) = config.connect(ssl.connector()?).await?;
    tokio::spawn(connection);
    Ok(client)
}

/// Why a connection or a statement on the admin connection failed.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// No runtime for the statement.
    #[error(transparent)]
    Runtime(#[from] std::io::Error),
    /// The URL or its TLS settings.
    #[error(transparent)]
    Url(#[from] crate::StoreError),
    /// The server refused, or could not be reached.
    #[error(transparent)]
    Postgres(#[from] tokio_postgres::Error),
    /// The thread the statement ran on panicked.
    #[error("the admin connection's thread panicked")]
    Panicked,
}
