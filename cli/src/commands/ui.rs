//! `runlog ui [--open] [--port PORT]`: the address of the store's web view, starting a server
//! for it when none serves the store.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::render;
use crate::server::ui::address_file;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Arguments of `runlog ui`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Open the address in the desktop's browser (xdg-open) as well as printing it.
    #[arg(long)]
    open: bool,
    /// The loopback port of a server this starts (0: any free port).
    #[arg(long, value_name = "PORT", default_value_t = 7700)]
    port: u16,
}

/// How long a server this starts has to bind its address.
const START_TIME: Duration = Duration::from_secs(20);

/// The view's address if a server answers on it.
fn answering(store: &Path) -> Option<String> {
    let url = std::fs::read_to_string(address_file(store)).ok()?;
    let url = url.trim().to_owned();
    let addr = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?
        .trim_end_matches('/');
    let addr: std::net::SocketAddr = addr.parse().ok()?;
    std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
    Some(url)
}

/// Prints the view's address; starts `runlog serve --http 127.0.0.1:PORT` in the background
/// (its output in STORE/serve.log) when no server serves the store.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let (url, started) = match answering(&ctx.store) {
        Some(url) => (url, None),
        None if crate::client::Server::find(&ctx.store).is_some() => {
            return Err(CliError::input(
                "a runlog serve owns this store without an HTTP address, so there is no view to open",
            )
            .with_hint(
                "stop it (Ctrl-C or SIGTERM) and run `runlog ui`, or restart it with --http 127.0.0.1:7700",
            ))
        }
        None => start(ctx, a.port)?,
    };
    if ctx.json {
        render::json(&serde_json::json!({"url": url, "started_pid": started}))?;
    } else {
        match started {
            Some(pid) => outln!(
                "started runlog serve (pid {pid}, log {}); stop it with `kill {pid}`",
                ctx.store.join("serve.log").display()
            ),
            None => outln!("a runlog serve already serves this store"),
        }
        outln!("the web view: {url}");
    }
    if a.open {
        let opened = std::process::Command::new("xdg-open")
            .arg(&url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if !opened.is_ok_and(|s| s.success()) {
            errln!("could not open a browser (xdg-open); open {url} yourself");
        }
    }
    Ok(())
}

/// Starts the server, detached from this terminal, and waits for its address.
fn start(ctx: &Ctx, port: u16) -> Result<(String, Option<u32>)> {
    // The server creates the store if needed; its directory must exist for the log.
    std::fs::create_dir_all(&ctx.store)
        .map_err(|e| CliError::failed(format!("cannot create {}: {e}", ctx.store.display())))?;
    let log_path = ctx.store.join("serve.log");
    let log = std::fs::File::create(&log_path)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", log_path.display())))?;
    let err = log
        .try_clone()
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", log_path.display())))?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find the runlog binary: {e}")))?;
    let _ = std::fs::remove_file(address_file(&ctx.store));
    let mut command = std::process::Command::new(exe);
    match &ctx.shared {
        // In its environment, not on its command line, where `ps` would show the password.
        Some(url) => command
            .env("RUNLOG_STORE", url)
            .env("RUNLOG_LOCAL_DIR", &ctx.store),
        None => command.arg("--store").arg(&ctx.store),
    };
    let mut child = command
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        // Its own process group: Ctrl-C in this terminal later does not stop it.
        .process_group(0)
        .spawn()
        .map_err(|e| CliError::failed(format!("cannot start runlog serve: {e}")))?;
    let began = Instant::now();
    while began.elapsed() < START_TIME {
        if let Some(url) = answering(&ctx.store) {
            return Ok((url, Some(child.id())));
        }
        if let Ok(Some(status)) = child.try_wait() {
            let said = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Err(CliError::failed(format!(
                "runlog serve stopped at once ({status}): {}",
                said.trim()
            ))
            .with_hint(format!(
                "another program may hold port {port}: pass --port with a free one (0: any)"
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    Err(CliError::failed(format!(
        "runlog serve did not start serving within {} s (its log: {})",
        START_TIME.as_secs(),
        log_path.display()
    )))
}
