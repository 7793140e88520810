//! Running one shell command: `sh -c` in the workflow's directory, in a process group of its
//! own so that a timeout or an interrupt kills everything it started.

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// What a command did.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Exit code (`None` when killed by a signal or not started).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Wall time.
    pub duration: Duration,
    /// Why it did not run to an exit code: spawn error, timeout.
    pub failure: Option<Failure>,
}

/// A command that did not finish on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// It could not be started.
    Spawn(String),
    /// It ran past its timeout and its process group was killed.
    Timeout(u64),
}

impl Outcome {
    /// Exit 0.
    pub fn succeeded(&self) -> bool {
        self.failure.is_none() && self.code == Some(0)
    }

    /// A one-line description of how it failed.
    pub fn failure_text(&self) -> (String, &'static str) {
        match &self.failure {
            Some(Failure::Spawn(e)) => (format!("could not start: {e}"), "spawn"),
            Some(Failure::Timeout(ms)) => (
                format!("timed out after {ms} ms; its process group was killed"),
                "timeout",
            ),
            None => match self.code {
                Some(c) => (
                    format!(
                        "exited with code {c}{}",
                        tail(&self.stderr, 300)
                            .map(|t| format!(": {t}"))
                            .unwrap_or_default()
                    ),
                    "exit-code",
                ),
                None => ("killed by a signal".into(), "signal"),
            },
        }
    }
}

/// The last `max` characters of `text` on one line, if it has any content.
pub fn tail(text: &str, max: usize) -> Option<String> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let start = t.char_indices().rev().nth(max).map_or(0, |(i, _)| i);
    Some(t.get(start..).unwrap_or(t).replace('\n', " | "))
}

/// Runs `cmd` with `sh -c` in `dir`, with `env`, `stdin` and an optional timeout.
pub async fn run(
    cmd: &str,
    dir: &Path,
    env: &[(String, String)],
    stdin: Option<String>,
    timeout_ms: Option<u64>,
) -> Outcome {
    let started = Instant::now();
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .current_dir(dir)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Outcome {
                code: None,
                stdout: String::new(),
                stderr: String::new(),
                duration: started.elapsed(),
                failure: Some(Failure::Spawn(e.to_string())),
            }
        }
    };
    let group = child
        .id()
        .and_then(|id| i32::try_from(id).ok())
        .map(Pid::from_raw);
    let _guard = GroupGuard(group);
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // A command that does not read its stdin is not an error.
        let _ = pipe.write_all(input.as_bytes()).await;
        drop(pipe);
    }
    let waited = match timeout_ms {
        Some(ms) => tokio::time::timeout(Duration::from_millis(ms), child.wait_with_output())
            .await
            .map_err(|_| ms),
        None => Ok(child.wait_with_output().await),
    };
    let duration = started.elapsed();
    match waited {
        Ok(Ok(out)) => Outcome {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            duration,
            failure: None,
        },
        Ok(Err(e)) => Outcome {
            code: None,
            stdout: String::new(),
            stderr: e.to_string(),
            duration,
            failure: Some(Failure::Spawn(e.to_string())),
        },
        Err(ms) => Outcome {
            code: None,
            stdout: String::new(),
            stderr: String::new(),
            duration,
            failure: Some(Failure::Timeout(ms)),
        },
    }
}

/// Kills the command's whole process group when the command is done with or abandoned (a
/// timeout, an interrupt dropping the future), so no grandchild outlives it.
struct GroupGuard(Option<Pid>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            // The group may already be gone; that is the common case.
            let _ = killpg(pid, Signal::SIGKILL);
        }
    }
}
