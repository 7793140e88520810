//! A PostgreSQL server of the harness's own (initdb in a temporary directory, on a port of
//! its own on loopback), so that it can be restarted in the middle of appends without touching
//! any other test's server.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The server, stopped when dropped.
#[derive(Debug)]
pub struct Server {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// Its port on 127.0.0.1.
    pub port: u16,
}

/// The newest PostgreSQL's programs (Debian's layout), if installed.
fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop()
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// `program args` as the postgres user (the server refuses to run as root).
fn as_postgres(program: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("runuser")
        .args(["-u", "postgres", "--"])
        .arg(program)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} {}: {}{}",
            program.display(),
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

impl Server {
    /// A new cluster, started. `Err` says what is missing.
    pub fn start() -> Result<Self, String> {
        let bin = bin_dir().ok_or("no PostgreSQL under /usr/lib/postgresql")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let user = nix::unistd::User::from_name("postgres")
            .ok()
            .flatten()
            .ok_or("no postgres user")?;
        nix::unistd::chown(dir.path(), Some(user.uid), Some(user.gid))
            .map_err(|e| format!("cannot hand the cluster's directory over: {e}"))?;
        let data = dir.path().join("data");
        as_postgres(
            &bin.join("initdb"),
            &[
                "-D",
                path(&data),
                "-A",
                "trust",
                "-U",
                "postgres",
                "--no-sync",
            ],
        )?;
        let server = Self {
            port: free_port()?,
            bin,
            dir,
        };
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=300",
            server.port,
            path(server.dir.path())
        );
        let log = server.dir.path().join("server.log");
        as_postgres(
            &server.bin.join("pg_ctl"),
            &[
                "-D",
                path(&data),
                "-l",
                path(&log),
                "-w",
                "-o",
                &options,
                "start",
            ],
        )?;
        Ok(server)
    }

    /// The URL of database `db` through `host:port` (a proxy), without TLS.
    pub fn url(&self, host: &str, port: u16, db: &str) -> String {
        format!("postgres://postgres@{host}:{port}/{db}?sslmode=disable")
    }

    /// A new database.
    pub fn create(&self, db: &str) -> Result<(), String> {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", path(self.dir.path()), "-p", &self.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-qc"])
            .arg(format!("CREATE DATABASE {db}"))
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// Restarts the server: `immediate` is a crash (no checkpoint, every session cut), else a
    /// fast shutdown (transactions rolled back, sessions ended).
    pub fn restart(&self, immediate: bool) -> Result<(), String> {
        let mode = if immediate { "immediate" } else { "fast" };
        let data = self.dir.path().join("data");
        // The log again: without it the server's output would hold pg_ctl's pipe open.
        let log = self.dir.path().join("server.log");
        as_postgres(
            &self.bin.join("pg_ctl"),
            &[
                "-D",
                path(&data),
                "-l",
                path(&log),
                "-m",
                mode,
                "-w",
                "restart",
            ],
        )
    }
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap_or_default()
}

impl Server {
    /// Stops the server (again: nothing).
    pub fn stop(&self) {
        let data = self.dir.path().join("data");
        let _ = as_postgres(
            &self.bin.join("pg_ctl"),
            &["-D", path(&data), "-m", "immediate", "-w", "stop"],
        );
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}
