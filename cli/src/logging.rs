//! The log: what the engine, the store's owner, leases, group commit, git and the server do,
//! to standard error. Off unless asked for: `--debug` (runlog's own crates at `debug`), or
//! `RUNLOG_LOG` with `tracing`'s filters (`debug`, `runlog_store=trace,runlog_runner=debug`).

use tracing_subscriber::EnvFilter;

/// What `--debug` turns on.
const DEBUG: &str = "runlog_cli=debug,runlog_runner=debug,runlog_replay=debug,runlog_store=debug";

/// Starts the log, if asked for: `filter` is `RUNLOG_LOG`'s value. A filter that does not
/// parse is said once and the log stays off (the command itself goes on).
pub fn start(debug: bool, filter: Option<&str>) {
    let filter = match (filter.filter(|f| !f.trim().is_empty()), debug) {
        (Some(f), _) => f,
        (None, true) => DEBUG,
        (None, false) => return,
    };
    match EnvFilter::try_new(filter) {
        Ok(filter) => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .try_init();
        }
        Err(e) => errln!("note: RUNLOG_LOG={filter:?} is not a log filter ({e}); no log"),
    }
}
