//! What the end-to-end test files share: the binary, a store, waiting with a bound, the events
//! a run recorded.
//!
//! `RUNLOG_TEST_BIN=/path/to/runlog` runs the tests against another build (an older commit, to
//! check that a test fails without the fix it comes with).
#![allow(dead_code)]

pub mod browser;
pub mod git;
pub mod provider;
pub mod tls;

use runlog_replay::Replay;
use runlog_store::{EventLog, Log, Options};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `runlog --store STORE`, run from the repository's root, without colour. A PostgreSQL URL
/// as STORE gets a local directory of its own in the temporary directory (not the repository).
pub fn runlog(store: &Path) -> Command {
    let bin = std::env::var_os("RUNLOG_TEST_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_runlog")),
        PathBuf::from,
    );
    let mut c = Command::new(bin);
    c.current_dir(repo())
        .arg("--store")
        .arg(store)
        .env_remove("RUNLOG_STORE")
        // A developer's own OpenTelemetry endpoint is no part of a test.
        .env_remove("RUNLOG_OTLP_ENDPOINT")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        // Nor is a developer's log.
        .env_remove("RUNLOG_LOG")
        .env("NO_COLOR", "1");
    let text = store.to_string_lossy();
    if text.starts_with("postgres://") {
        let hash = blake3::hash(text.as_bytes()).to_hex();
        let local = std::env::temp_dir().join(format!("runlog-shared-{}", &hash.as_str()[..16]));
        c.env("RUNLOG_LOCAL_DIR", local);
    } else {
        c.env_remove("RUNLOG_LOCAL_DIR");
    }
    c
}

/// Stdout and stderr together, for assertion messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The store, once the binary has exited (its lock is gone).
pub fn open(store: &Path) -> Log {
    Log::open(
        store,
        Options {
            create: false,
            ..Options::default()
        },
    )
    .unwrap()
}

/// Polls `ready` until it holds (at most 30 s: a loaded CI machine is slow, not stuck).
pub fn wait_for(ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for the runner"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for a child with a bound: a runner that hangs fails the test instead of hanging it.
pub fn finish_within(mut child: std::process::Child, limit: Duration, what: &str) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("{what}: still running after {limit:?}\n{}", text(&out));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

/// All events of a run with their seqs.
pub fn events(log: &Log, run: &str) -> Vec<(u64, runlog_core::Event)> {
    let head = log.head(run).unwrap().unwrap().seq;
    Replay::new(log).events(run, 1, head).unwrap()
}

/// Writes `toml` as `DIR/NAME.toml` and returns its path.
pub fn workflow(dir: &Path, name: &str, toml: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    path
}

/// A store in `dir` (`dir/store`) holding the recorded quickstart run, imported.
pub fn quickstart_in(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    let out = runlog(&store)
        .arg("import")
        .arg(repo().join("fixtures/runs/quickstart.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    store
}

/// `runlog run WF --run-id RUN --quiet` plus `args`, to its end.
pub fn run(store: &Path, wf: &Path, run: &str, args: &[&str]) -> Output {
    runlog(store)
        .args(["run", wf.to_str().unwrap(), "--run-id", run, "--quiet"])
        .args(args)
        .output()
        .unwrap()
}

/// The JSON lines `runlog --json log RUN --follow` printed, checked to hold each seq once, in
/// order, from 1.
pub fn followed_from_the_start(out: &Output) -> Vec<serde_json::Value> {
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let seqs: Vec<u64> = lines.iter().map(|l| l["seq"].as_u64().unwrap()).collect();
    assert_eq!(
        seqs,
        (1..=seqs.len() as u64).collect::<Vec<_>>(),
        "every event once, in order"
    );
    lines
}

/// Copies a directory tree (file modes kept).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Whether pytest is on PATH; without it a test says SKIPPED and how to get it (a failure
/// when `RUNLOG_REQUIRE_PYTEST` is set, as `.ci/run` sets it).
pub fn pytest_found() -> bool {
    let found = Command::new("pytest")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let why = "pytest is not on PATH (pip install pytest; bash .ci/run installs it)";
        assert!(std::env::var_os("RUNLOG_REQUIRE_PYTEST").is_none(), "{why}");
        eprintln!("SKIPPED: {why}");
    }
    found
}

/// Whether python3 imports statsmodels and scipy, which the experiment tests check figures
/// against; without them a check says SKIPPED and how to get them (a failure when
/// `RUNLOG_REQUIRE_SCIPY` is set, as `.ci/run` sets it).
pub fn scipy_found() -> bool {
    python_imports(
        "import scipy, statsmodels",
        "python3 cannot import statsmodels and scipy (pip install scipy statsmodels; \
         bash .ci/run installs them into its pytest venv)",
        "RUNLOG_REQUIRE_SCIPY",
    )
}

/// Whether python3 imports the official MCP SDK and jsonschema, the MCP tests' client and
/// checker (said as [`scipy_found`] says it, required by `RUNLOG_REQUIRE_MCP`).
pub fn mcp_sdk_found() -> bool {
    python_imports(
        "import mcp, jsonschema",
        "python3 cannot import mcp and jsonschema (pip install mcp==2.3.0 jsonschema==4.26.0; \
         bash .ci/run installs them into its pytest venv)",
        "RUNLOG_REQUIRE_MCP",
    )
}

/// Whether python3 runs `imports`; if not, `why` is said (a failure when `required` is set).
fn python_imports(imports: &str, why: &str, required: &str) -> bool {
    let found = Command::new("python3")
        .args(["-c", imports])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var_os(required).is_none(), "{why}");
        eprintln!("SKIPPED: {why}");
    }
    found
}

/// The marker some run's runner holds while it drives the run (`STORE/runners/RUN`), once it
/// does.
pub fn runner_marker(store: &Path) -> Option<PathBuf> {
    std::fs::read_dir(store.join("runners"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .next()
}

/// Every command that reads a run back, as a person would call them, answers with exit 0 and
/// no panic: `at` is a seq inside the run, `task` one of its tasks.
pub fn every_reader_answers(store: &Path, run: &str, task: &str, at: u64) {
    let (at, earlier) = (at.to_string(), format!("{run}@{at}"));
    let readers: [&[&str]; 16] = [
        &["runs"],
        &["status", run],
        &["status", run, "--at", &at],
        &["show", run, task],
        &["log", run],
        &["--json", "log", run],
        &["replay", run],
        &["stack", run],
        &["stages", run],
        &["audit", run],
        &["--json", "audit", run],
        &["diff", &earlier, run],
        &["verify", run],
        &["digest", run],
        &["export", run],
        &["viz", run],
    ];
    for args in readers {
        let out = runlog(store).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        assert!(!text(&out).contains("panicked"), "{args:?}: {}", text(&out));
    }
}

/// Whether a process is gone (or a zombie nobody reaped yet).
pub fn gone(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .map_or(true, |stat| stat.split_whitespace().nth(2) == Some("Z"))
}

/// `runlog emit RUN` with `lines` on stdin, to its end.
pub fn emit(store: &Path, run: &str, lines: &str) -> Output {
    let mut child = runlog(store)
        .args(["emit", run])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Written from a thread: emit answers each line on stdout while it reads.
    let mut stdin = child.stdin.take().unwrap();
    let lines = lines.to_owned();
    let writer =
        std::thread::spawn(move || std::io::Write::write_all(&mut stdin, lines.as_bytes()));
    let out = child.wait_with_output().unwrap();
    // A command that stops reading early is its own failure, seen in `out`.
    let _ = writer.join();
    out
}

/// One HTTP/1.1 request with `Connection: close`: the status and the body.
pub fn request(
    stream: &mut (impl Read + Write),
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String) {
    let (status, _, body) = exchange(stream, method, path, headers, body);
    (status, body)
}

/// One HTTP/1.1 request with `Connection: close`: the status, the head (lower-cased) and the
/// body.
pub fn exchange(
    stream: &mut (impl Read + Write),
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: runlog\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    // A server refusing a body too large answers and closes before reading it all: the write
    // may fail, the answer is still there.
    let _ = stream.write_all(format!("{head}\r\n{body}").as_bytes());
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let answer = String::from_utf8_lossy(&bytes).into_owned();
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// A DAG of `n` no-op tasks: each waits for up to two of the 16 before it (a fixed, seeded
/// shape), so readiness changes as the run goes, as in a real plan.
pub fn noop_dag(n: usize, jobs: u32) -> String {
    dag(n, jobs, "true", 16)
}

/// A `window` of [`dag`] that is every task before: each task waits for two tasks drawn
/// from all those before it, as a plan whose tasks build on any earlier work.
pub const ALL_BEFORE: usize = usize::MAX;

/// The DAG of [`noop_dag`] whose every task runs `run` and waits for up to two of the `window`
/// tasks before it: the wider the window, the more tasks can run at once (its longest chain is
/// about `n / (window / 3)` tasks).
pub fn dag(n: usize, jobs: u32, run: &str, window: usize) -> String {
    use std::fmt::Write as _;
    let mut toml = format!("name = \"noop\"\n[settings]\njobs = {jobs}\n");
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for i in 0..n {
        let _ = write!(
            toml,
            "[[task]]\nid = \"t{i}\"\nrun = \"{run}\"\nrequires_testing = false\n"
        );
        let span = match window {
            ALL_BEFORE => i,
            _ if i >= window => window,
            _ => 0,
        };
        if span > 0 {
            let a = i - 1 - (next() as usize % span);
            let b = i - 1 - (next() as usize % span);
            let after = if a == b {
                format!("\"t{a}\"")
            } else {
                format!("\"t{a}\", \"t{b}\"")
            };
            let _ = writeln!(toml, "after = [{after}]");
        }
    }
    toml
}

/// `runlog serve` on `store`'s socket alone, once the socket takes connections.
pub fn serve_socket(store: &Path) -> std::process::Child {
    let child = runlog(store)
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| std::os::unix::net::UnixStream::connect(store.join("api.sock")).is_ok());
    child
}

/// `runlog serve --http 127.0.0.1:0` on `store`, with `args`: the server and its view's address
/// (`http://` or `https://`, without the final `/`), once `STORE/view.url` says it.
pub fn serve_http(store: &Path, args: &[&std::ffi::OsStr]) -> (std::process::Child, String) {
    let _ = std::fs::remove_file(store.join("view.url"));
    let child = runlog(store)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| store.join("view.url").exists());
    let url = std::fs::read_to_string(store.join("view.url")).unwrap();
    (child, url.trim().trim_end_matches('/').to_owned())
}

/// Bytes of the files under `dir` (apparent sizes).
pub fn apparent_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => apparent_bytes(&e.path()),
                Ok(_) => e.metadata().map_or(0, |m| m.len()),
                Err(_) => 0,
            })
            .sum()
    })
}

/// The experiment of docs/experiments.md in `dir` (its store at `dir/store`): the release-notes
/// fixture run imported and executed again under the fixture variants `tested` (a test it
/// passes) and `strict` (a test it fails), as `notes-check`. The store.
pub fn notes_experiment(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    copy_tree(&repo().join("fixtures"), &dir.join("fixtures"));
    let imported = runlog(&store)
        .arg("import")
        .arg(repo().join("fixtures/runs/release-notes.jsonl"))
        .output()
        .unwrap();
    assert!(imported.status.success(), "{}", text(&imported));
    let out = runlog(&store)
        .args([
            "experiment",
            "run",
            "notes-check",
            "--runs",
            "release-notes",
        ])
        .args(["--variant", "tested=fixtures/experiments/tested.toml"])
        .args(["--variant", "strict=fixtures/experiments/strict.toml"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    store
}

/// Where the pinned CLIs are (`RUNLOG_AGENT_CLIS`, else the cache `.ci/run` fills); without
/// them a test says SKIPPED and how to get them (a failure when `RUNLOG_REQUIRE_AGENTS` is set,
/// as `.ci/run` sets it).
pub fn agent_clis() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("RUNLOG_AGENT_CLIS").map(PathBuf::from),
        std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".cache/runlog-agents/node_modules/.bin")),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("claude").exists() && d.join("codex").exists());
    if found.is_none() {
        let why = "the real-agent tests need the Claude Code and Codex CLIs \
                   (npm i -E --prefix ~/.cache/runlog-agents @anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0; \
                   bash .ci/run installs them; or point RUNLOG_AGENT_CLIS at their bin directory)";
        assert!(std::env::var_os("RUNLOG_REQUIRE_AGENTS").is_none(), "{why}");
        eprintln!("SKIPPED: {why}");
    }
    found
}

/// Whether `python3` imports the official `openai` and `anthropic` SDKs: without them a test
/// says SKIPPED and how to get them (a failure when `RUNLOG_REQUIRE_AGENTS` is set, as
/// `.ci/run` sets it).
pub fn sdks_found() -> bool {
    let found = std::process::Command::new("python3")
        .args(["-c", "import openai, anthropic"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let why = "the SDK test needs the openai and anthropic Python packages on python3 \
                   (pip install openai==3.57.0 anthropic==2.14.0; bash .ci/run installs them)";
        assert!(std::env::var_os("RUNLOG_REQUIRE_AGENTS").is_none(), "{why}");
        eprintln!("SKIPPED: {why}");
    }
    found
}
