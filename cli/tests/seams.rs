//! Where the runner, the server and the commands meet, through the real binary: a run the
//! server executes is followed like any other, a hangup never stops a server or its runs, the
//! API's errors speak HTTP, and the CLI's and the API's JSON for one question are one shape.

mod common;

use common::{finish_within, repo, request, runlog, text, wait_for, workflow};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

fn api(store: &Path, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, body) = request(&mut s, method, path, &[], body);
    let json = serde_json::from_str(&body)
        .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {body}"));
    (status, json)
}

fn serve(store: &Path) -> Child {
    common::serve_socket(store)
}

fn signal(child: &Child, sig: nix::sys::signal::Signal) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, sig).unwrap();
}

fn stop(server: Child) {
    signal(&server, nix::sys::signal::Signal::SIGTERM);
    let out = finish_within(server, Duration::from_secs(30), "runlog serve");
    assert!(out.status.success(), "serve: {}", text(&out));
}

fn status_of(store: &Path, run: &str) -> String {
    let (_, board) = api(store, "GET", &format!("/v1/runs/{run}"), "");
    board["status"].as_str().unwrap_or_default().to_owned()
}

/// A workflow whose one task waits for the file `go` beside it.
fn waiting(dir: &Path) -> std::path::PathBuf {
    workflow(
        dir,
        "waits",
        "name = \"waits\"\n[[task]]\nid = \"a\"\nrun = \"while [ ! -e go ]; do sleep 0.05; done\"\nrequires_testing = false\n",
    )
}

fn start_hosted(store: &Path, wf: &Path, run: &str) {
    let body = serde_json::json!({"workflow": wf, "run": run}).to_string();
    let (status, answer) = api(store, "POST", "/v1/runs", &body);
    assert_eq!(status, 201, "{answer}");
    wait_for(|| status_of(store, run) == "running");
}

#[test]
fn a_run_the_server_executes_is_followed_by_log_follow() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = waiting(dir.path());
    let server = serve(&store);
    start_hosted(&store, &wf, "hosted");
    let follower = runlog(&store)
        .args(["--json", "log", "hosted", "--follow"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The follower is following (not printing the history and leaving) before the run ends.
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(dir.path().join("go"), "").unwrap();
    let out = finish_within(follower, Duration::from_secs(30), "log --follow");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !text(&out).contains("not being executed"),
        "the server executes it: {}",
        text(&out)
    );
    let lines = common::followed_from_the_start(&out);
    assert_eq!(
        lines.last().unwrap()["event"]["type"],
        "run-finished",
        "followed to the end: {}",
        text(&out)
    );
    stop(server);
}

#[test]
fn a_hangup_neither_stops_the_server_nor_interrupts_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = waiting(dir.path());
    let server = serve(&store);
    // Before any run is hosted.
    signal(&server, nix::sys::signal::Signal::SIGHUP);
    std::thread::sleep(Duration::from_millis(300));
    let (status, _) = api(&store, "GET", "/v1/runs", "");
    assert_eq!(status, 200, "the server is still up after SIGHUP");
    // With a run hosted.
    start_hosted(&store, &wf, "kept");
    signal(&server, nix::sys::signal::Signal::SIGHUP);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        status_of(&store, "kept"),
        "running",
        "SIGHUP left the run be"
    );
    std::fs::write(dir.path().join("go"), "").unwrap();
    wait_for(|| status_of(&store, "kept") == "finished");
    let (_, board) = api(&store, "GET", "/v1/runs/kept", "");
    assert_eq!(board["board"]["rows"][0]["status"], "done", "{board}");
    stop(server);
}

#[test]
fn api_errors_give_http_hints_and_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::quickstart_in(dir.path());
    // An interrupted run: started through emit, then interrupted.
    let mut emit = runlog(&store)
        .args(["emit", "paused"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let stdin = emit.stdin.as_mut().unwrap();
        writeln!(
            stdin,
            "{{\"command\":\"start-run\",\"run\":\"paused\",\"tasks\":[{{\"id\":\"a\"}}]}}"
        )
        .unwrap();
        writeln!(stdin, "{{\"command\":\"interrupt\",\"reason\":\"test\"}}").unwrap();
    }
    assert!(emit.wait().unwrap().success());
    let server = serve(&store);
    let cases = [
        ("GET", "/v1/runs/nope", "", 404),
        ("GET", "/v1/runs/quickstart?at=9999", "", 400),
        (
            "POST",
            "/v1/runs/quickstart/commands",
            "{\"command\":\"approve\",\"task\":\"nope\",\"by\":\"me\"}",
            409,
        ),
        (
            "POST",
            "/v1/runs/paused/commands",
            "{\"command\":\"start-task\",\"task\":\"a\",\"agent\":null,\"worktree\":null}",
            409,
        ),
        ("POST", "/v1/runs/quickstart/fork", "{\"at\":9999}", 400),
    ];
    for (method, path, body, expected) in cases {
        let (status, err) = api(&store, method, path, body);
        assert_eq!(status, expected, "{method} {path}: {err}");
        let hint = err["hint"].as_str().unwrap_or_default();
        assert!(!hint.is_empty(), "{method} {path} has a hint: {err}");
        assert!(
            !hint.contains("`runlog") && !hint.contains("runlog runs"),
            "{method} {path}: an HTTP client gets no command-line hint: {err}"
        );
    }
    stop(server);
}

#[test]
fn status_json_and_the_apis_board_are_one_shape() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for fixture in ["quickstart", "seed-004-phases"] {
        let out = runlog(&store)
            .arg("import")
            .arg(repo().join(format!("fixtures/runs/{fixture}.jsonl")))
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    let cli = |args: &[&str]| -> serde_json::Value {
        let out = runlog(&store).arg("--json").args(args).output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let cases = [
        (vec!["status", "quickstart"], "/v1/runs/quickstart"),
        (
            vec!["status", "quickstart", "--at", "20"],
            "/v1/runs/quickstart?at=20",
        ),
        (
            vec!["status", "seed-004-phases"],
            "/v1/runs/seed-004-phases",
        ),
    ];
    // Read with the store closed and again through a server: the same answers.
    let from_cli: Vec<serde_json::Value> = cases.iter().map(|(args, _)| cli(args)).collect();
    let server = serve(&store);
    for ((args, path), cli_json) in cases.iter().zip(from_cli) {
        let (status, api_json) = api(&store, "GET", path, "");
        assert_eq!(status, 200, "{api_json}");
        assert_eq!(
            cli_json,
            api_json,
            "`runlog --json {}` and GET {path}",
            args.join(" ")
        );
    }
    stop(server);
}
