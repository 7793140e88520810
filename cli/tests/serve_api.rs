//! `runlog serve` and its HTTP/JSON API, through the real binary: the Unix socket in the store,
//! TCP with a bearer token, errors as `{error, hint}` with their status codes, commands through
//! the rules, the event stream resumed with `Last-Event-ID`, and the CLI beside the server.

mod common;

use common::{repo, request, runlog, text, wait_for};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

fn over_socket(store: &Path, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, body) = request(&mut s, method, path, &[], body);
    let json = serde_json::from_str(&body)
        .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {body}"));
    (status, json)
}

fn serve(store: &Path, args: &[&str]) -> Child {
    let child = runlog(store)
        .arg("serve")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| store.join("api.sock").exists());
    child
}

/// SIGTERM, as a service manager stops it: it exits 0 and removes its socket.
fn stop(server: Child, store: &Path) {
    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = common::finish_within(server, Duration::from_secs(30), "runlog serve");
    assert!(out.status.success(), "serve: {}", text(&out));
    assert!(!store.join("api.sock").exists(), "the socket is removed");
}

/// A workflow of one task that runs until it is interrupted.
fn waiting_workflow(dir: &Path) -> std::path::PathBuf {
    common::workflow(
        dir,
        "waits",
        "name = \"waits\"\n[[task]]\nid = \"a\"\nrun = \"while true; do sleep 0.05; done\"\nrequires_testing = false\n",
    )
}

fn imported_store(dir: &Path) -> std::path::PathBuf {
    let store = dir.join("store");
    let out = runlog(&store)
        .args(["import"])
        .arg(repo().join("fixtures/runs/quickstart.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    store
}

#[test]
fn the_api_answers_on_the_stores_socket_with_json_and_proper_status_codes() {
    let dir = tempfile::tempdir().unwrap();
    let store = imported_store(dir.path());
    let server = serve(&store, &[]);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(store.join("api.sock"))
            .unwrap()
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "the socket is the owner's alone");

    let (status, runs) = over_socket(&store, "GET", "/v1/runs", "");
    assert_eq!(status, 200);
    assert_eq!(runs[0]["run"], "quickstart");
    let (status, board) = over_socket(&store, "GET", "/v1/runs/quickstart?at=5", "");
    assert_eq!((status, board["seq"].as_u64()), (200, Some(5)));
    let (status, events) = over_socket(
        &store,
        "GET",
        "/v1/runs/quickstart/events?kind=run-finished",
        "",
    );
    assert_eq!(status, 200);
    assert_eq!(events["events"][0]["seq"], 50);
    let (status, audit) = over_socket(&store, "GET", "/v1/runs/quickstart/audit", "");
    assert_eq!(status, 200, "{audit}");

    // Every reader of the CLI has its resource, with the CLI's --json shapes.
    for path in [
        "/v1/runs/quickstart/stack?at=10",
        "/v1/runs/quickstart/stages",
        "/v1/runs/quickstart/digest",
        "/v1/diff?left=quickstart@10&right=quickstart",
    ] {
        let (status, body) = over_socket(&store, "GET", path, "");
        assert_eq!(status, 200, "{path}: {body}");
    }
    let (status, verified) = over_socket(&store, "GET", "/v1/runs/quickstart/verify", "");
    assert_eq!(
        (status, verified["ok"].as_bool()),
        (200, Some(true)),
        "{verified}"
    );
    let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, lines) = request(&mut s, "GET", "/v1/runs/quickstart/export", &[], "");
    assert_eq!(status, 200);
    assert_eq!(lines.lines().count(), 51, "a header and fifty events");

    // Errors: {error, hint} with the status a client acts on.
    let (status, err) = over_socket(&store, "GET", "/v1/runs/nope", "");
    assert_eq!(status, 404);
    assert!(
        err["hint"].as_str().unwrap().contains("GET /v1/runs"),
        "{err}"
    );
    let (status, err) = over_socket(&store, "GET", "/v1/runs/quickstart?at=9999", "");
    assert_eq!(status, 400, "{err}");
    let (status, _) = over_socket(&store, "GET", "/v1/runs/quickstart/events?bogus=1", "");
    assert_eq!(status, 400);
    let (status, _) = over_socket(&store, "GET", "/v1/nothing", "");
    assert_eq!(status, 404);

    // Commands go through the rules, the short start-run included.
    let approve = r#"{"command":"approve","task":"plan","by":"me"}"#;
    let (status, err) = over_socket(&store, "POST", "/v1/runs/quickstart/commands", approve);
    assert_eq!(status, 409, "a done task cannot be approved: {err}");
    let (status, _) = over_socket(&store, "POST", "/v1/runs/x/commands", "not json");
    assert_eq!(status, 400);
    let start =
        r#"{"command":"start-run","run":"api","tasks":[{"id":"a"},{"id":"b","after":["a"]}]}"#;
    let (status, started) = over_socket(&store, "POST", "/v1/runs/api/commands", start);
    assert_eq!(status, 200, "{started}");
    assert_eq!(started["head"], 3);
    let big = format!("{{\"command\":\"{}\"}}", "x".repeat(2 << 20));
    let (status, _) = over_socket(&store, "POST", "/v1/runs/api/commands", &big);
    assert_eq!(status, 413);

    // The CLI works beside the server, through it.
    let out = runlog(&store).args(["status", "api"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("ready"), "{}", text(&out));

    // The OpenAPI document is served.
    let (status, doc) = over_socket(&store, "GET", "/v1/openapi.json", "");
    assert_eq!((status, doc["openapi"].as_str()), (200, Some("3.1.0")));
    stop(server, &store);
}

#[test]
fn the_event_stream_resumes_after_last_event_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = imported_store(dir.path());
    let server = serve(&store, &[]);
    let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s.write_all(
        b"GET /v1/runs/quickstart/stream HTTP/1.1\r\nHost: runlog\r\nLast-Event-ID: 47\r\n\r\n",
    )
    .unwrap();
    let mut got = String::new();
    let mut buf = [0u8; 4096];
    while !got.contains("id: 50") {
        let n = s.read(&mut buf).unwrap();
        assert!(n > 0, "the stream ended early: {got}");
        got.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(got.contains("text/event-stream"), "{got}");
    assert!(!got.contains("id: 47\n"), "it resumed after 47: {got}");
    for seq in 48..=50 {
        assert!(got.contains(&format!("id: {seq}\n")), "{got}");
    }
    assert!(got.contains("event: run-finished"), "{got}");
    drop(s);
    stop(server, &store);
}

#[test]
fn tcp_needs_the_bearer_token_when_one_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let store = imported_store(dir.path());
    // Not loopback and no token: refused before anything listens (even with clear HTTP allowed).
    let out = runlog(&store)
        .args(["serve", "--http", "0.0.0.0:0", "--insecure-http"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--token-file"), "{}", text(&out));

    let token = "s3cret-token-of-some-length-0123456789";
    std::fs::write(dir.path().join("token"), token).unwrap();
    let addr = free_addr();
    let server = serve(
        &store,
        &[
            "--http",
            &addr,
            "--token-file",
            dir.path().join("token").to_str().unwrap(),
        ],
    );
    let ask = |token| over_tcp(&addr, "GET", "/v1/runs", token, "").0;
    assert_eq!(ask(None), 401);
    assert_eq!(ask(Some("wrong")), 401);
    assert_eq!(ask(Some(token)), 200);
    stop(server, &store);
}

/// A loopback address with a port nobody listens on.
fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().to_string()
}

#[test]
fn the_python_example_approves_a_pending_eval_task_through_the_socket() {
    let python = std::process::Command::new("python3")
        .arg("--version")
        .output();
    assert!(
        python.is_ok_and(|o| o.status.success()),
        "this test runs examples/approve_over_socket.py and needs python3 (Debian: apt-get install -y python3; bash .ci/run installs it)"
    );
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let server = serve(&store, &[]);
    let out = std::process::Command::new("python3")
        .arg(repo().join("examples/approve_over_socket.py"))
        .arg(store.join("api.sock"))
        .arg("py")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("publish is now open"), "{}", text(&out));
    let log = runlog(&store).args(["log", "py"]).output().unwrap();
    assert!(text(&log).contains("task-approved"), "{}", text(&log));
    stop(server, &store);
}

/// The run's status as the API reports it.
fn run_status(store: &Path, run: &str) -> String {
    let (_, board) = over_socket(store, "GET", &format!("/v1/runs/{run}"), "");
    board["status"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn runs_started_through_the_api_execute_inside_the_server_and_stop_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let quick = common::workflow(
        dir.path(),
        "quick",
        "name = \"quick\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nrequires_testing = false\n\
         [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"true\"\nrequires_testing = false\n",
    );
    let waits = waiting_workflow(dir.path());
    let store = dir.path().join("store");
    let server = serve(&store, &[]);
    let start = |wf: &Path, run: &str| {
        let body = serde_json::json!({"workflow": wf, "run": run}).to_string();
        over_socket(&store, "POST", "/v1/runs", &body)
    };
    // A run the server executes to its end, nobody attached.
    let (status, started) = start(&quick, "q1");
    assert_eq!(status, 201, "{started}");
    wait_for(|| run_status(&store, "q1") == "finished");
    // The same id again is refused; a missing workflow too.
    assert_eq!(start(&quick, "q1").0, 400);
    assert_eq!(start(&dir.path().join("missing.toml"), "q2").0, 400);
    // An interrupt through the API stops a hosted run as Ctrl-C would.
    assert_eq!(start(&waits, "w1").0, 201);
    wait_for(|| {
        let (_, board) = over_socket(&store, "GET", "/v1/runs/w1", "");
        board["board"]["rows"][0]["status"] == "in-progress"
    });
    // The board of a run the server executes comes from its engine's state: the same board a
    // replay of the log gives.
    let (_, live) = over_socket(&store, "GET", "/v1/runs/w1", "");
    let replayed = runlog(&store)
        .args(["--json", "status", "w1"])
        .output()
        .unwrap();
    let replayed: serde_json::Value = serde_json::from_slice(&replayed.stdout).unwrap();
    assert_eq!(live["seq"], replayed["seq"]);
    assert_eq!(live["board"], replayed["board"]);
    let (status, _) = over_socket(&store, "POST", "/v1/runs/w1/interrupt", "");
    assert_eq!(status, 202);
    wait_for(|| run_status(&store, "w1") == "interrupted");
    let (status, err) = over_socket(&store, "POST", "/v1/runs/q1/interrupt", "");
    assert_eq!(status, 409, "{err}");
    // Stopping the server interrupts what it still executes, and records it.
    assert_eq!(start(&waits, "w2").0, 201);
    stop(server, &store);
    let out = runlog(&store).args(["runs"]).output().unwrap();
    let listed = text(&out);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("w2") && l.contains("interrupted")),
        "{listed}"
    );
}

/// `runlog run WF --run-id RUN` following a run the server executes, sent `signal` once the
/// run is running.
fn follow_then_signal(
    store: &Path,
    wf: &Path,
    run: &str,
    signal: nix::sys::signal::Signal,
) -> std::process::Output {
    let follower = runlog(store)
        .args(["run", wf.to_str().unwrap(), "--run-id", run, "--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| run_status(store, run) == "running");
    // Past submitting: the follower listens for signals once it follows.
    std::thread::sleep(Duration::from_millis(300));
    let pid = nix::unistd::Pid::from_raw(follower.id() as i32);
    nix::sys::signal::kill(pid, signal).unwrap();
    common::finish_within(follower, Duration::from_secs(30), "the follower")
}

#[test]
fn runlog_run_submits_to_a_live_server_and_follows_or_detaches() {
    let dir = tempfile::tempdir().unwrap();
    let quick = common::workflow(
        dir.path(),
        "quick",
        "name = \"quick\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nrequires_testing = false\n",
    );
    let waits = common::workflow(
        dir.path(),
        "waits",
        "name = \"waits\"\n[[task]]\nid = \"a\"\nrun = \"while [ ! -e go ]; do sleep 0.05; done\"\nrequires_testing = false\n",
    );
    let store = dir.path().join("store");
    // Without a server, --detach has nothing to hand the run to.
    let out = runlog(&store)
        .args(["run", quick.to_str().unwrap(), "--detach"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let server = serve(&store, &[]);
    // Followed to its end, with the closing summary and the run's exit code.
    let out = runlog(&store)
        .args(["run", quick.to_str().unwrap(), "--run-id", "f1", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("run f1 succeeded"), "{}", text(&out));
    // Detached: the id at once; the server executes it.
    let out = runlog(&store)
        .args(["run", waits.to_str().unwrap(), "--run-id", "d1", "--detach"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "d1");
    wait_for(|| run_status(&store, "d1") == "running");
    // A follower whose terminal closes stops following; the run goes on.
    let out = follow_then_signal(&store, &waits, "h1", nix::sys::signal::Signal::SIGHUP);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(run_status(&store, "h1"), "running");
    // Ctrl-C in a following terminal interrupts its run through the server.
    let out = follow_then_signal(&store, &waits, "c1", nix::sys::signal::Signal::SIGINT);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out));
    assert_eq!(run_status(&store, "c1"), "interrupted");
    // The rest end when their task does.
    std::fs::write(dir.path().join("go"), "").unwrap();
    wait_for(|| run_status(&store, "d1") == "finished" && run_status(&store, "h1") == "finished");
    stop(server, &store);
}

/// Reads until the server closes the connection; `true` when it did within `limit`.
fn closed_by_the_server(stream: &mut UnixStream, limit: Duration) -> bool {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut sink = [0u8; 1 << 16];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return true,
            Err(_) => return false,
        }
    }
}

#[test]
fn stuck_clients_are_let_go_and_never_hold_up_a_run() {
    let dir = tempfile::tempdir().unwrap();
    // Each task prints 64 KiB: the run's event stream soon outgrows a socket's buffers.
    let mut toml = String::from("name = \"chatty\"\n");
    for i in 0..30 {
        toml.push_str(&format!(
            "[[task]]\nid = \"t{i}\"\nrun = \"head -c 65536 /dev/zero | tr '\\\\0' x\"\nrequires_testing = false\n"
        ));
        if i > 0 {
            toml.push_str(&format!("after = [\"t{}\"]\n", i - 1));
        }
    }
    let chatty = common::workflow(dir.path(), "chatty", &toml);
    let store = dir.path().join("store");
    let server = serve(&store, &["--idle-timeout", "2"]);
    let body = serde_json::json!({"workflow": chatty, "run": "r1"}).to_string();
    assert_eq!(over_socket(&store, "POST", "/v1/runs", &body).0, 201);
    // A client that asks for the run's event stream and never reads it.
    let mut unread = UnixStream::connect(store.join("api.sock")).unwrap();
    unread
        .write_all(b"GET /v1/runs/r1/stream HTTP/1.1\r\nHost: runlog\r\n\r\n")
        .unwrap();
    // More clients than the server takes at once, each stuck in the middle of its request.
    let mut stuck: Vec<UnixStream> = (0..300)
        .map(|_| {
            let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
            s.write_all(b"GET /v1/runs HTTP/1.1\r\nHo").unwrap();
            s
        })
        .collect();
    // The run goes on to its end, and a new client is answered once the stuck ones are let go.
    wait_for(|| run_status(&store, "r1") == "finished");
    let (_, board) = over_socket(&store, "GET", "/v1/runs/r1", "");
    let rows = board["board"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 30);
    assert!(rows.iter().all(|r| r["status"] == "done"), "{board}");
    for s in &mut stuck {
        assert!(
            closed_by_the_server(s, Duration::from_secs(30)),
            "a stuck request stays open"
        );
    }
    assert!(
        closed_by_the_server(&mut unread, Duration::from_secs(30)),
        "the unread event stream stays open"
    );
    stop(server, &store);
}

/// One request over TCP to `addr`, waiting for the server to listen.
fn over_tcp(
    addr: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> (u16, String) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut s = loop {
        match std::net::TcpStream::connect(addr) {
            Ok(s) => break s,
            Err(e) => {
                assert!(
                    std::time::Instant::now() < deadline,
                    "cannot connect to {addr}: {e}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    let bearer = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &str)> = bearer
        .iter()
        .map(|b| ("Authorization", b.as_str()))
        .collect();
    request(&mut s, method, path, &headers, body)
}

#[test]
fn each_tokens_scope_allows_its_requests_and_failed_attempts_are_limited() {
    let dir = tempfile::tempdir().unwrap();
    let store = imported_store(dir.path());
    let wf = common::workflow(
        dir.path(),
        "quick",
        "name = \"quick\"\n[[task]]\nid = \"a\"\nrun = \"true\"\nrequires_testing = false\n",
    );
    let (read, steer, run) = (
        "read-token-0123456789abcdef",
        "steer-token-0123456789abcdef",
        "run-token-0123456789abcdef",
    );
    let file = dir.path().join("tokens");
    std::fs::write(
        &file,
        format!("# who may do what\nci read {read}\nalice steer {steer}\ndeploy run {run}\n"),
    )
    .unwrap();
    let addr = free_addr();
    let server = serve(
        &store,
        &["--http", &addr, "--token-file", file.to_str().unwrap()],
    );
    let approve = r#"{"command":"approve","task":"plan","by":"alice"}"#;
    let start = serde_json::json!({"workflow": wf, "run": "q1"}).to_string();
    let call = |method, path, token, body| over_tcp(&addr, method, path, token, body);
    // Every scope reads.
    for token in [read, steer, run] {
        assert_eq!(call("GET", "/v1/runs", Some(token), "").0, 200);
    }
    // read may not steer or start; steer may steer (the rules answer), not start; run may all.
    let (status, body) = call("POST", "/v1/runs/quickstart/commands", Some(read), approve);
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("the token of ci has the read scope; this needs steer"),
        "{body}"
    );
    assert!(body.contains("\"hint\""), "{body}");
    assert_eq!(
        call("POST", "/v1/runs/quickstart/interrupt", Some(read), "").0,
        403
    );
    assert_eq!(call("POST", "/v1/runs", Some(read), &start).0, 403);
    assert_ne!(
        call("POST", "/v1/runs/quickstart/commands", Some(steer), approve).0,
        403
    );
    let (status, body) = call("POST", "/v1/runs", Some(steer), &start);
    assert_eq!(status, 403, "{body}");
    let (status, body) = call("POST", "/v1/runs", Some(run), &start);
    assert_eq!(status, 201, "{body}");
    // No token or a wrong one: 401, each a failed attempt; past ten from one address within a
    // minute, even a valid token is answered 429 until the minute is over.
    assert_eq!(call("GET", "/v1/runs", None, "").0, 401);
    for _ in 0..9 {
        assert_eq!(
            call("GET", "/v1/runs", Some("guess-0123456789abcdef"), "").0,
            401
        );
    }
    let (status, body) = call("GET", "/v1/runs", Some(read), "");
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("\"hint\""), "{body}");
    // The Unix socket, reachable by the store's owner only, needs no token.
    assert_eq!(over_socket(&store, "GET", "/v1/runs", "").0, 200);
    // No token ever reaches the server's output.
    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = common::finish_within(server, Duration::from_secs(30), "runlog serve");
    let said = text(&out);
    for token in [read, steer, run] {
        assert!(!said.contains(token), "{said}");
    }
}

#[test]
fn floods_of_tasks_streams_runs_and_headers_get_clear_answers() {
    let dir = tempfile::tempdir().unwrap();
    let store = imported_store(dir.path());
    let waits = waiting_workflow(dir.path());
    let server = serve(&store, &["--max-runs", "2"]);
    // A plan of 10,001 tasks in one request: 413, nothing recorded.
    let tasks: Vec<serde_json::Value> = (0..10_001)
        .map(|i| serde_json::json!({"id": format!("t{i}")}))
        .collect();
    let big = serde_json::json!({"command": "start-run", "run": "big", "tasks": tasks});
    let (status, err) = over_socket(&store, "POST", "/v1/runs/big/commands", &big.to_string());
    assert_eq!(status, 413, "{err}");
    assert!(
        err["error"].as_str().unwrap().contains("10001 tasks"),
        "{err}"
    );
    assert!(err["hint"].is_string(), "{err}");
    assert_eq!(over_socket(&store, "GET", "/v1/runs/big", "").0, 404);
    // Event streams: 32 at once per client, the 33rd is 429 until one closes.
    let open_stream = || {
        let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
        s.write_all(b"GET /v1/runs/quickstart/stream HTTP/1.1\r\nHost: runlog\r\n\r\n")
            .unwrap();
        let mut head = [0u8; 12];
        s.read_exact(&mut head).unwrap();
        (String::from_utf8_lossy(&head).into_owned(), s)
    };
    let mut streams: Vec<UnixStream> = (0..32)
        .map(|_| {
            let (head, s) = open_stream();
            assert_eq!(head, "HTTP/1.1 200");
            s
        })
        .collect();
    assert_eq!(open_stream().0, "HTTP/1.1 429");
    drop(streams.pop());
    wait_for(|| open_stream().0 == "HTTP/1.1 200");
    drop(streams);
    // Runs executing at once: --max-runs 2, the third start is 429 until one ends.
    let start = |run: &str| {
        let body = serde_json::json!({"workflow": waits, "run": run}).to_string();
        over_socket(&store, "POST", "/v1/runs", &body)
    };
    assert_eq!(start("w1").0, 201);
    assert_eq!(start("w2").0, 201);
    let (status, err) = start("w3");
    assert_eq!(status, 429, "{err}");
    assert!(
        err["hint"].as_str().unwrap().contains("--max-runs"),
        "{err}"
    );
    assert_eq!(
        over_socket(&store, "POST", "/v1/runs/w1/interrupt", "").0,
        202
    );
    wait_for(|| start("w3").0 == 201);
    // Too many headers: hyper's own 431.
    let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
    let headers: Vec<(String, String)> =
        (0..200).map(|i| (format!("x-h{i}"), "v".into())).collect();
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(request(&mut s, "GET", "/v1/runs", &headers, "").0, 431);
    stop(server, &store);
}

#[test]
fn decisions_record_who_made_them_beside_who_they_claim_to_be() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let me = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .name;
    // Three tasks waiting for a person's decision.
    let mut lines = String::from(
        r#"{"command":"start-run","run":"r","tasks":[{"id":"a","eval":"judge","requires_testing":false},{"id":"b","eval":"judge","requires_testing":false},{"id":"c","eval":"judge","requires_testing":false}]}"#,
    );
    for t in ["a", "b", "c"] {
        lines.push_str(&format!(
            "\n{{\"command\":\"start-task\",\"task\":\"{t}\",\"agent\":null,\"worktree\":null}}\n{{\"command\":\"submit-task\",\"task\":\"{t}\",\"summary\":\"done\",\"result\":null,\"duration_ms\":1}}"
        ));
    }
    let out = common::emit(&store, "r", &lines);
    assert!(out.status.success(), "{}", text(&out));
    // From the command line, claiming to be someone else.
    let out = runlog(&store)
        .args(["approve", "r", "a", "--by", "mallory"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Over TCP with the token named ci, claiming to be alice; over the socket, claiming bob.
    let token = "ci-token-0123456789abcdef";
    std::fs::write(dir.path().join("tokens"), format!("ci steer {token}\n")).unwrap();
    let addr = free_addr();
    let tokens = dir.path().join("tokens");
    let server = serve(
        &store,
        &["--http", &addr, "--token-file", tokens.to_str().unwrap()],
    );
    let approve_b = r#"{"command":"approve","task":"b","by":"alice"}"#;
    let (status, body) = over_tcp(&addr, "POST", "/v1/runs/r/commands", Some(token), approve_b);
    assert_eq!(status, 200, "{body}");
    let reject_c = r#"{"command":"reject","task":"c","by":"bob","reopen":false,"reason":"no"}"#;
    let (status, body) = over_socket(&store, "POST", "/v1/runs/r/commands", reject_c);
    assert_eq!(status, 200, "{body}");
    stop(server, &store);

    let out = runlog(&store)
        .args(["--json", "audit", "r"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // The evals, then the decisions outside the gate.
    let view: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let decisions: Vec<serde_json::Value> = view["audit"]["out_of_gate"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"] == "approved" || d["kind"] == "rejected")
        .cloned()
        .collect();
    let audit = serde_json::Value::from(decisions.clone());
    let who: Vec<(String, String, String, bool)> = decisions
        .iter()
        .map(|d| {
            (
                d["task"].as_str().unwrap().to_owned(),
                d["principal"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                d["principal"]["via"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                d["claim_differs"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        who,
        vec![
            ("a".into(), me.clone(), "os-user".into(), me != "mallory"),
            ("b".into(), "ci".into(), "token".into(), true),
            ("c".into(), me.clone(), "unix-socket".into(), me != "bob"),
        ],
        "{audit}"
    );
    let out = runlog(&store).args(["audit", "r"]).output().unwrap();
    let said = text(&out);
    assert!(
        said.contains(&format!("approved by mallory [recorded: {me} via os-user]")),
        "{said}"
    );
    assert!(
        said.contains("⚑ claimed to be alice, but recorded by ci (token)"),
        "{said}"
    );
    let out = runlog(&store).args(["show", "r", "b"]).output().unwrap();
    let said = text(&out);
    assert!(said.contains("recorded by ci (token)"), "{said}");
}

#[test]
fn forks_and_large_outputs_through_the_api() {
    let dir = tempfile::tempdir().unwrap();
    let big = common::workflow(
        dir.path(),
        "big",
        "name = \"big\"\n[[task]]\nid = \"a\"\nrun = \"head -c 10000 /dev/zero | tr '\\\\0' x\"\nrequires_testing = false\n",
    );
    let store = dir.path().join("store");
    let out = common::run(&store, &big, "big", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let server = serve(&store, &[]);
    // A fork at a seq, named or not; past the head, of an unknown run, or a bad body: refused.
    let (status, made) = over_socket(
        &store,
        "POST",
        "/v1/runs/big/fork",
        r#"{"at": 3, "as": "b2"}"#,
    );
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["run"], "b2");
    assert_eq!(made["at_seq"], 3);
    let (status, made) = over_socket(&store, "POST", "/v1/runs/big/fork", "");
    assert_eq!(status, 201, "{made}");
    assert_eq!(made["run"], "big-fork-1", "{made}");
    assert_eq!(
        over_socket(&store, "POST", "/v1/runs/big/fork", r#"{"at": 999}"#).0,
        400
    );
    assert_eq!(
        over_socket(&store, "POST", "/v1/runs/nope/fork", "{}").0,
        404
    );
    assert_eq!(
        over_socket(&store, "POST", "/v1/runs/big/fork", r#"{"as": "b2"}"#).0,
        409
    );
    assert_eq!(
        over_socket(&store, "POST", "/v1/runs/big/fork", r#"{"at": "x"}"#).0,
        400
    );
    let (_, runs) = over_socket(&store, "GET", "/v1/runs", "");
    let b2 = runs
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["run"] == "b2")
        .unwrap();
    assert_eq!(
        (b2["fork_of"].as_str(), b2["fork_at"].as_u64()),
        (Some("big"), Some(3))
    );
    // The output event holds the beginning and names the blob with all of it.
    let (_, page) = over_socket(
        &store,
        "GET",
        "/v1/runs/big/events?kind=output-recorded",
        "",
    );
    let event = &page["events"][0]["event"];
    assert_eq!(event["bytes"], 10_000);
    let hash = event["blob"].as_str().unwrap();
    let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, whole) = request(&mut s, "GET", &format!("/v1/blobs/{hash}"), &[], "");
    assert_eq!(status, 200);
    assert_eq!(whole, "x".repeat(10_000));
    let (status, err) = over_socket(&store, "GET", "/v1/blobs/not-a-hash", "");
    assert_eq!(status, 400, "{err}");
    let (status, err) = over_socket(&store, "GET", &format!("/v1/blobs/{}", "0".repeat(64)), "");
    assert_eq!(status, 404, "{err}");
    stop(server, &store);
}

#[test]
fn reads_wait_their_turn_while_a_run_executes_and_commands_never_do() {
    let dir = tempfile::tempdir().unwrap();
    let store = imported_store(dir.path());
    let waits = waiting_workflow(dir.path());
    let server = serve(&store, &["--reads-per-second", "4"]);
    // Nothing executes: 40 reads go at once (at 4 a second they would take 6 s past a burst).
    let reader = |reads: usize| {
        let store = store.clone();
        std::thread::spawn(move || {
            for _ in 0..reads {
                assert_eq!(over_socket(&store, "GET", "/v1/runs/quickstart", "").0, 200);
            }
        })
    };
    let unpaced = reader(40);
    std::thread::sleep(Duration::from_secs(2));
    assert!(
        unpaced.is_finished(),
        "no run executes: reads are not paced"
    );
    unpaced.join().unwrap();
    // A run executes: the same 40 reads take their turns, 4 a second after a burst of 16, so
    // they are still going 2 s later; a command meanwhile is answered at once.
    let body = serde_json::json!({"workflow": waits, "run": "w1"}).to_string();
    assert_eq!(over_socket(&store, "POST", "/v1/runs", &body).0, 201);
    let paced = reader(40);
    std::thread::sleep(Duration::from_secs(2));
    assert!(!paced.is_finished(), "reads are paced while a run executes");
    assert_eq!(
        over_socket(&store, "POST", "/v1/runs/w1/interrupt", "").0,
        202
    );
    assert!(
        !paced.is_finished(),
        "the command was answered before the paced reads were done"
    );
    // The run stopped: the rest of the reads go at once.
    paced.join().unwrap();
    wait_for(|| run_status(&store, "w1") == "interrupted");
    stop(server, &store);
}
