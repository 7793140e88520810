//! The shared repository over the network: `git daemon` on the bridge, and in front of it a
//! plain TCP relay per worker slot (each worker's git reaches its own through `insteadOf`) that
//! sees pushes (`git-receive-pack`) go by, so that a partition can strike in the middle of one.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// `git daemon` serving the bare repositories under its base, pushes allowed; stopped when
/// dropped.
#[derive(Debug)]
pub struct Daemon {
    child: std::sync::Mutex<Child>,
    base: tempfile::TempDir,
    /// Where it listens, on the bridge.
    pub at: SocketAddr,
}

impl Daemon {
    /// Starts it on `host`. `Err` says why it could not.
    pub fn start(host: &str) -> Result<Self, String> {
        let base = tempfile::tempdir().map_err(|e| e.to_string())?;
        let port = TcpListener::bind((host, 0))
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("cannot listen on {host}: {e}"))?
            .port();
        let child = Command::new("git")
            .args([
                "daemon",
                "--reuseaddr",
                "--export-all",
                "--enable=receive-pack",
            ])
            .arg(format!("--base-path={}", base.path().display()))
            .arg(format!("--listen={host}"))
            .arg(format!("--port={port}"))
            .arg(base.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start git daemon: {e}"))?;
        let at: SocketAddr = format!("{host}:{port}")
            .parse()
            .map_err(|e| format!("{e}"))?;
        let up = Instant::now();
        while TcpStream::connect(at).is_err() {
            if up.elapsed() > Duration::from_secs(10) {
                return Err("git daemon did not listen within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(Self {
            child: std::sync::Mutex::new(child),
            base,
            at,
        })
    }

    /// A new, empty bare repository `name`, and a checkout of it at `checkout` (where the
    /// workflow is written, committed and pushed).
    pub fn repository(&self, name: &str, checkout: &Path) -> PathBuf {
        let bare = self.base.path().join(format!("{name}.git"));
        git(
            self.base.path(),
            &["init", "-q", "--bare", "-b", "main", &path(&bare)],
        );
        git(
            checkout.parent().unwrap_or(Path::new("/")),
            &["clone", "-q", &path(&bare), &path(checkout)],
        );
        bare
    }

    /// The URL workers use for `name`.
    pub fn url(&self, name: &str) -> String {
        format!("git://{}/{name}.git", self.at)
    }
}

impl Daemon {
    /// Stops it (again: nothing).
    pub fn stop(&self) {
        let mut child = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}

fn path(p: &Path) -> String {
    p.display().to_string()
}

pub use crate::common::git::git;

type Hook = Box<dyn FnOnce() + Send>;

/// One slot's relay to the daemon.
#[derive(Clone)]
pub struct Relay {
    /// Where it listens.
    pub port: u16,
    on_push: Arc<Mutex<Option<Hook>>>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Relay").field("port", &self.port).finish()
    }
}

impl Relay {
    /// Listens on `host` and passes each connection on to `to` as it is.
    pub fn start(host: &str, to: SocketAddr) -> std::io::Result<Self> {
        let listener = TcpListener::bind((host, 0))?;
        let relay = Self {
            port: listener.local_addr()?.port(),
            on_push: Arc::default(),
        };
        let on_push = relay.on_push.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let on_push = on_push.clone();
                std::thread::spawn(move || pass(client, to, &on_push));
            }
        });
        Ok(relay)
    }

    /// `then` runs, on a thread of its own, as the next push begins.
    pub fn at_next_push(&self, then: impl FnOnce() + Send + 'static) {
        *self.on_push.lock().unwrap_or_else(|p| p.into_inner()) = Some(Box::new(then));
    }

    /// Nothing armed.
    pub fn heal(&self) {
        *self.on_push.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

fn pass(mut client: TcpStream, to: SocketAddr, on_push: &Mutex<Option<Hook>>) {
    let Ok(mut server) = TcpStream::connect(to) else {
        return;
    };
    // The request's first pkt-line names the service: git-receive-pack is a push.
    let mut first = vec![0u8; 4096];
    let n = match client.read(&mut first) {
        Ok(0) | Err(_) => return,
        Ok(n) => n,
    };
    let first = first.get(..n).unwrap_or_default();
    if server.write_all(first).is_err() {
        return;
    }
    let pushes = first.windows(16).any(|w| w == b"git-receive-pack");
    if pushes {
        if let Some(then) = on_push.lock().unwrap_or_else(|p| p.into_inner()).take() {
            std::thread::spawn(then);
        }
    }
    let (Ok(mut back_from), Ok(mut back_to)) = (server.try_clone(), client.try_clone()) else {
        return;
    };
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut back_from, &mut back_to);
        let _ = back_to.shutdown(Shutdown::Write);
    });
    let _ = std::io::copy(&mut client, &mut server);
    let _ = server.shutdown(Shutdown::Write);
}
