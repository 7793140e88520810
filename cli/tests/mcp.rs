//! runlog as a Model Context Protocol server, asked as agents ask it: JSON-RPC lines over
//! `runlog mcp`'s standard input and output, the official Python SDK (`mcp`) over stdio and over
//! `runlog serve`'s `/mcp` with tokens, and a run's own commands through `RUNLOG_MCP_URL`.

mod common;
use common::{emit, runlog, text};
use serde_json::{json, Value};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The tools that look, then the tools that act, as `tools/list` gives them.
const LOOK: [&str; 11] = [
    "runs",
    "status",
    "log",
    "show",
    "audit",
    "judges",
    "review",
    "diff",
    "cost",
    "experiments",
    "experiment",
];
const ACT: [&str; 8] = [
    "approve", "reject", "reopen", "rollback", "fork", "budget", "rerun", "resume",
];

/// The largest answer a tool gives (`runlog_cli::server::mcp::MAX_ANSWER`), and the room its
/// summary line and the result's envelope take.
const MAX_ANSWER: usize = 64 * 1024;

/// A store holding the recorded quickstart and seed-001 runs.
fn fixtures(dir: &Path) -> PathBuf {
    let store = common::quickstart_in(dir);
    let out = runlog(&store)
        .arg("import")
        .arg(common::repo().join("fixtures/runs/seed-001-eval-gate.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    store
}

/// A `runlog mcp` session: requests written to its standard input, every line of its standard
/// output read as a JSON-RPC message (a line that is not one fails the test).
struct Session {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    next: u64,
}

impl Session {
    fn start(store: &Path, args: &[&str]) -> Self {
        let mut child = runlog(store)
            .arg("mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
            next: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// The answer to request `method` (its `result` or its `error`, whole).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no answer to {method} within 60 s"));
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("stdout holds a line that is no JSON-RPC message ({e}): {line}")
            });
            assert_eq!(message["jsonrpc"], "2.0", "{line}");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// An initialized session asking protocol `version`: the server's `initialize` result.
    fn initialize(&mut self, version: &str) -> Value {
        let answer = self.request(
            "initialize",
            json!({"protocolVersion": version, "capabilities": {},
                   "clientInfo": {"name": "runlog-tests", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer["result"].clone()
    }

    fn call(&mut self, tool: &str, args: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": args}))
    }

    fn tools(&mut self) -> Vec<Value> {
        self.request("tools/list", json!({}))["result"]["tools"]
            .as_array()
            .unwrap()
            .clone()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// What `runlog --json ARGS` printed, as JSON.
fn cli_json(store: &Path, args: &[&str]) -> Value {
    let out = runlog(store).arg("--json").args(args).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn each_tool_that_looks_answers_with_the_view_the_command_prints() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixtures(dir.path());
    let mut s = Session::start(&store, &[]);
    let info = s.initialize("2025-06-18");
    assert_eq!(info["protocolVersion"], "2025-06-18");
    assert_eq!(info["serverInfo"]["name"], "runlog");
    let tools = s.tools();
    let expected: Vec<&str> = LOOK.iter().chain(ACT.iter()).copied().collect();
    assert_eq!(names(&tools), expected);
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        let looks = LOOK.contains(&name);
        assert_eq!(t["annotations"]["readOnlyHint"], looks, "{name}");
        assert_eq!(
            t["annotations"]["destructiveHint"],
            name == "rollback",
            "{name}"
        );
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
        assert_eq!(
            t["outputSchema"]["type"], "object",
            "{name}: {}",
            t["outputSchema"]
        );
    }
    // A task's story: the bytes `runlog show --json` prints, the judge's notes among them.
    let shown = s.call(
        "show",
        json!({"run": "seed-001-eval-gate", "task": "capped"}),
    );
    let result = &shown["result"];
    assert_ne!(result["isError"], true, "{shown}");
    assert_eq!(
        result["structuredContent"],
        cli_json(&store, &["show", "seed-001-eval-gate", "capped"])
    );
    assert!(result["content"][0]["text"]
        .as_str()
        .unwrap()
        .starts_with("task capped of run seed-001-eval-gate: failed"));
    assert!(result["content"][1]["text"]
        .as_str()
        .unwrap()
        .contains("missing error handling for empty input"));
    // The board at a seq, the audit and the cost, as their commands print them.
    let status = s.call("status", json!({"run": "quickstart", "at": 10}));
    assert_eq!(
        status["result"]["structuredContent"],
        cli_json(&store, &["status", "quickstart", "--at", "10"])
    );
    let audit = s.call("audit", json!({"run": "seed-001-eval-gate"}));
    assert_eq!(
        audit["result"]["structuredContent"],
        cli_json(&store, &["audit", "seed-001-eval-gate"])
    );
    // Lists are objects (structured content is one), filtered as asked.
    let runs = s.call("runs", json!({"outcome": "failed"}));
    let listed = &runs["result"]["structuredContent"]["runs"];
    assert_eq!(listed.as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(listed[0]["run"], "seed-001-eval-gate");
    let diff = s.call(
        "diff",
        json!({"left": "quickstart", "right": "seed-001-eval-gate"}),
    );
    assert_ne!(diff["result"]["isError"], true, "{diff}");
}

#[test]
fn bad_calls_get_the_protocols_errors_and_the_server_writes_only_protocol_messages() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixtures(dir.path());
    let mut s = Session::start(&store, &[]);
    // A version it does not know: it answers with one it speaks, as the protocol says.
    let info = s.initialize("1999-01-01");
    let spoken = info["protocolVersion"].as_str().unwrap().to_owned();
    assert_ne!(spoken, "1999-01-01");
    assert!(spoken.starts_with("20"), "{info}");
    let unknown = s.call("delete_everything", json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(unknown["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no tool \"delete_everything\""));
    let wrong_type = s.call("status", json!({"run": 5}));
    assert_eq!(wrong_type["error"]["code"], -32602, "{wrong_type}");
    let unknown_field = s.call("status", json!({"run": "quickstart", "seq": 3}));
    assert_eq!(unknown_field["error"]["code"], -32602, "{unknown_field}");
    // A run that is not there: the tool's own error, which a model reads and acts on.
    let missing = s.call("status", json!({"run": "nightly"}));
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    assert!(missing["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("no run nightly"));
    let no_method = s.request("resources/subscribe", json!({"uri": "x"}));
    assert!(no_method["error"]["code"].is_i64(), "{no_method}");
    // Still serving after all of it.
    let runs = s.call("runs", json!({}));
    assert_eq!(
        runs["result"]["structuredContent"]["runs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn a_read_only_server_lists_and_allows_only_the_tools_that_look() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixtures(dir.path());
    let mut s = Session::start(&store, &["--read-only"]);
    s.initialize("2025-06-18");
    assert_eq!(names(&s.tools()), LOOK);
    let refused = s.call(
        "rollback",
        json!({"run": "quickstart", "to": 5, "reason": "testing"}),
    );
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let head = cli_json(&store, &["status", "quickstart"])["seq"].clone();
    assert_eq!(head, 50, "nothing was recorded");
}

/// A run whose task `a` waits in pending-eval for a person.
fn waiting_run(store: &Path, run: &str) {
    let script = format!(
        "{}\n{}\n{}\n",
        json!({"command": "start-run", "run": run, "workflow": "external",
            "workflow_hash": "0".repeat(64),
            "settings": {"eval_threshold": 0.7, "auto_rescue": false, "max_eval_rescues": 0,
                "max_test_retries": 0, "max_depth": 3, "jobs": 1, "history_warn_events": 100000},
            "tasks": [{"id": "a", "description": "build a", "after": [], "parent": null,
                "files": [], "destructive": null, "run": null, "test": null, "eval": "judge",
                "requires_testing": false, "stage": null,
                "retry": {"limit": {"max": 0}, "budget": {"max_attempts": null, "max_elapsed_ms": null},
                    "delay_ms": 0, "backoff": 1.0, "timeout_ms": null, "circuit_after": 5},
                "checkpoints": []}]}),
        json!({"command": "start-task", "task": "a", "agent": null, "worktree": null}),
        json!({"command": "submit-task", "task": "a", "summary": "built a", "result": null, "duration_ms": 10}),
    );
    let out = emit(store, run, &script);
    assert!(out.status.success(), "{}", text(&out));
}

/// The `attributed` events of `run`: who, and how they were known.
fn attributed(store: &Path, run: &str) -> Vec<(String, String)> {
    common::provider::logged(store, run, &["--kind", "attributed"])
        .iter()
        .map(|e| {
            (
                e["principal"].as_str().unwrap().to_owned(),
                e["via"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn acting_over_stdio_is_recorded_as_the_user_who_started_it_via_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    waiting_run(&store, "w");
    let mut s = Session::start(&store, &[]);
    s.initialize("2025-06-18");
    let approved = s.call("approve", json!({"run": "w", "task": "a"}));
    assert_ne!(approved["result"]["isError"], true, "{approved}");
    let events = approved["result"]["structuredContent"]["events"].to_string();
    assert!(events.contains("task-approved"), "{approved}");
    let head = cli_json(&store, &["status", "w"])["seq"].as_u64().unwrap();
    let rolled = s.call(
        "rollback",
        json!({"run": "w", "to": head - 1, "reason": "approved too soon", "by": "alice"}),
    );
    assert_ne!(rolled["result"]["isError"], true, "{rolled}");
    let by = attributed(&store, "w");
    let user = nix_user();
    assert_eq!(
        by,
        vec![(user.clone(), "mcp".to_owned()), (user, "mcp".to_owned())],
        "each action is the user's who started `runlog mcp`, via mcp"
    );
    let rollbacks = common::provider::logged(&store, "w", &["--kind", "rolled-back"]);
    assert_eq!(rollbacks[0]["reason"], "approved too soon");
    assert_eq!(rollbacks[0]["by"], "alice");
    // A rejected decision is the tool's error, in the rules' words.
    let again = s.call("approve", json!({"run": "w", "task": "nope"}));
    assert_eq!(again["result"]["isError"], true, "{again}");
}

/// The name of the user running the tests, as runlog records it.
fn nix_user() -> String {
    let out = std::process::Command::new("id")
        .arg("-un")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_ten_megabyte_log_is_read_in_pages_each_under_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // 2,500 tasks of 4 KiB descriptions: a log of about 10 MB.
    let tasks: Vec<Value> = (0..2500)
        .map(|i| {
            json!({"id": format!("t{i}"), "description": format!("{i} {}", "x".repeat(4096)),
                "after": [], "parent": null, "files": [], "destructive": null, "run": null,
                "test": null, "eval": null, "requires_testing": false, "stage": null,
                "retry": {"limit": {"max": 0}, "budget": {"max_attempts": null, "max_elapsed_ms": null},
                    "delay_ms": 0, "backoff": 1.0, "timeout_ms": null, "circuit_after": 5},
                "checkpoints": []})
        })
        .collect();
    let start = json!({"command": "start-run", "run": "big", "workflow": "external",
        "workflow_hash": "0".repeat(64),
        "settings": {"eval_threshold": 0.7, "auto_rescue": false, "max_eval_rescues": 0,
            "max_test_retries": 0, "max_depth": 3, "jobs": 1, "history_warn_events": 100000},
        "tasks": tasks});
    let out = emit(&store, "big", &format!("{start}\n"));
    assert!(out.status.success(), "{}", text(&out));
    let head = cli_json(&store, &["status", "big"])["seq"]
        .as_u64()
        .unwrap();
    let mut s = Session::start(&store, &["--read-only"]);
    s.initialize("2025-06-18");
    let (mut from, mut seen, mut pages, mut bytes) = (1u64, Vec::new(), 0, 0usize);
    loop {
        let page = s.call("log", json!({"run": "big", "from": from}));
        let result = &page["result"];
        assert_ne!(result["isError"], true, "{page}");
        let text = result["content"][1]["text"].as_str().unwrap();
        assert!(text.len() <= MAX_ANSWER, "a page of {} bytes", text.len());
        bytes += text.len();
        pages += 1;
        let events = result["structuredContent"]["events"].as_array().unwrap();
        seen.extend(events.iter().map(|e| e["seq"].as_u64().unwrap()));
        match result["structuredContent"]["next"].as_u64() {
            Some(next) => from = next,
            None => break,
        }
        assert!(pages < 1000, "the pages go on");
    }
    eprintln!("a log of {head} events, {bytes} bytes of JSON, read in {pages} pages");
    assert_eq!(
        seen,
        (1..=head).collect::<Vec<_>>(),
        "each event once, in order"
    );
    assert!(bytes > 10_000_000, "the log read was {bytes} bytes");
    // The board of 2,500 such tasks is too large for one answer: the tool says how to ask.
    let board = s.call("status", json!({"run": "big"}));
    assert_eq!(board["result"]["isError"], true);
    let said = board["result"]["content"][0]["text"].as_str().unwrap();
    assert!(said.contains("more than the 64 KiB"), "{said}");
    assert!(said.contains("hint: ask `log`"), "{said}");
}

/// The Python SDK's client script (`tests/mcp/sdk_client.py`).
fn sdk_client() -> PathBuf {
    common::repo().join("cli/tests/mcp/sdk_client.py")
}

#[test]
fn the_official_python_sdk_looks_and_acts_over_stdio_and_over_https_with_tokens() {
    if !common::mcp_sdk_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = fixtures(dir.path());
    waiting_run(&store, "w");
    waiting_run(&store, "v");
    let tokens = dir.path().join("tokens");
    std::fs::write(
        &tokens,
        "reader read reader-0123456789abcdef\nsteerer steer steerer-0123456789abcdef\n",
    )
    .unwrap();
    // Over stdio, as the user who started it.
    let out = std::process::Command::new("python3")
        .arg(sdk_client())
        .args([
            "stdio",
            env!("CARGO_BIN_EXE_runlog"),
            store.to_str().unwrap(),
            "w",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Over HTTPS, each token seeing what its scope allows.
    let ca = common::tls::ca(dir.path(), "team-ca");
    let (cert, key) = common::tls::signed(&ca, dir.path(), "server", &["127.0.0.1"]);
    let (mut server, url) = common::serve_http(
        &store,
        &[
            "--token-file".as_ref(),
            tokens.as_os_str(),
            "--tls-cert".as_ref(),
            cert.as_os_str(),
            "--tls-key".as_ref(),
            key.as_os_str(),
        ],
    );
    assert!(url.starts_with("https://"), "{url}");
    let out = std::process::Command::new("python3")
        .arg(sdk_client())
        .env("RUNLOG_TEST_CA", &ca.cert)
        .args([
            "http",
            &format!("{url}/mcp"),
            "reader-0123456789abcdef",
            "steerer-0123456789abcdef",
            "v",
        ])
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("read token: 11 tools"), "{said}");
    assert!(said.contains("steer token: 17 tools"), "{said}");
    assert_eq!(
        attributed(&store, "w"),
        vec![
            (nix_user(), "mcp".to_owned()),
            (nix_user(), "mcp".to_owned())
        ]
    );
    assert_eq!(
        attributed(&store, "v"),
        vec![
            ("steerer".to_owned(), "mcp".to_owned()),
            ("steerer".to_owned(), "mcp".to_owned())
        ]
    );
    for run in ["w", "v"] {
        let rolled = common::provider::logged(&store, run, &["--kind", "rolled-back"]);
        assert_eq!(rolled.len(), 1, "{run}: {rolled:?}");
    }
}

/// A task's agent that asks runlog about its own task through `RUNLOG_MCP_URL` (Python's
/// standard library, JSON-RPC over HTTP): on its rescue it reads its previous attempt's verdict
/// with `show`, then asks about another run; what it learnt goes to `learnt.json`, and it
/// prints its token (which the run must not record).
const ASKING_AGENT: &str = r#"
import json, os, sys, urllib.error, urllib.request
url, token = os.environ["RUNLOG_MCP_URL"], os.environ["RUNLOG_MCP_TOKEN"]
def rpc(method, params, key=token):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    req = urllib.request.Request(url, data=body, headers={
        "Authorization": "Bearer " + key, "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return {"status": e.code}
print("my token is " + token)
if os.environ["RUNLOG_RESCUE"] == "1":
    rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1"}})
    run, task = os.environ["RUNLOG_RUN"], os.environ["RUNLOG_TASK"]
    learnt = {
        "tools": [t["name"] for t in rpc("tools/list", {})["result"]["tools"]],
        "story": rpc("tools/call", {"name": "show", "arguments": {"run": run, "task": task}}),
        "other": rpc("tools/call", {"name": "status", "arguments": {"run": "quickstart"}}),
        "list": rpc("tools/call", {"name": "runs", "arguments": {}}),
        "forged": rpc("tools/list", {}, key="0" * 32),
        "token": token,
    }
    with open(sys.argv[1], "w") as f:
        json.dump(learnt, f)
print("done")
"#;

#[test]
fn a_rescue_asks_about_its_own_earlier_attempt_through_its_runs_token_and_no_other_run() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::quickstart_in(dir.path());
    std::fs::write(dir.path().join("agent.py"), ASKING_AGENT).unwrap();
    // The judge: a low score with its notes the first time, a pass after.
    std::fs::write(
        dir.path().join("judge.sh"),
        "#!/bin/sh\nif [ \"$RUNLOG_RESCUE\" = 0 ]; then\n  echo '{\"score\": 0.4, \"notes\": \"the parser drops the last line\"}'\nelse\n  echo '{\"score\": 0.9, \"notes\": \"fine\"}'\nfi\n",
    )
    .unwrap();
    let learnt = dir.path().join("learnt.json");
    let wf = common::workflow(
        dir.path(),
        "wf",
        &format!(
            "name = \"asks\"\n[settings]\nworkspace = \"none\"\neval_threshold = 0.7\nmax_eval_rescues = 1\n\
             [[task]]\nid = \"parser\"\nrun = \"python3 agent.py {}\"\neval = \"sh judge.sh\"\nrequires_testing = false\n",
            learnt.display()
        ),
    );
    let out = common::run(&store, &wf, "asks-1", &[]);
    assert!(out.status.success(), "{}", text(&out));
    let learnt: Value = serde_json::from_str(&std::fs::read_to_string(&learnt).unwrap()).unwrap();
    // Only the tools that look at one run are offered to it.
    assert_eq!(
        learnt["tools"],
        json!(["status", "log", "show", "audit", "cost"])
    );
    let story = &learnt["story"]["result"];
    assert_ne!(story["isError"], true, "{learnt}");
    let notes: Vec<&Value> = story["structuredContent"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"]["type"] == "eval-scored")
        .map(|e| &e["event"]["notes"])
        .collect();
    assert_eq!(notes, vec!["the parser drops the last line"]);
    for refused in ["other", "list"] {
        let error = &learnt[refused]["error"];
        assert_eq!(error["code"], -32600, "{refused}: {learnt}");
        assert!(error["message"]
            .as_str()
            .unwrap()
            .contains("valid for run asks-1 only"));
    }
    assert_eq!(learnt["forged"]["status"], 401);
    // The token was printed by the agent; the log holds it replaced.
    let token = learnt["token"].as_str().unwrap();
    let printed = common::provider::logged(&store, "asks-1", &["--kind", "output-recorded"]);
    let printed = serde_json::to_string(&printed).unwrap();
    assert!(printed.contains("my token is"), "{printed}");
    assert!(
        !printed.contains(token),
        "the run's token was recorded: {printed}"
    );
    assert!(
        !common::provider::logged(&store, "asks-1", &["--kind", "secrets-redacted"]).is_empty()
    );
    // Nor does any tool give it out.
    let mut s = Session::start(&store, &["--read-only"]);
    s.initialize("2025-06-18");
    for (tool, args) in [
        ("show", json!({"run": "asks-1", "task": "parser"})),
        ("log", json!({"run": "asks-1"})),
    ] {
        let answer = s.call(tool, args).to_string();
        assert!(answer.contains("my token is"), "{answer}");
        assert!(!answer.contains(token), "{tool} gave the token out");
    }
}

#[test]
fn the_worked_session_in_the_docs_answers_as_printed() {
    let page = std::fs::read_to_string(common::repo().join("docs/mcp.md")).unwrap();
    let session = page
        .split("```mcp-session\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/mcp.md has a worked session");
    // Each call with the lines said of its answer.
    let mut calls: Vec<(String, Value, Vec<String>)> = Vec::new();
    for line in session.lines() {
        if let Some(call) = line.strip_prefix("> ") {
            let (tool, args) = call.split_once(' ').unwrap();
            calls.push((
                tool.to_owned(),
                serde_json::from_str(args).unwrap(),
                Vec::new(),
            ));
        } else if let Some(said) = line.strip_prefix("< ") {
            calls.last_mut().unwrap().2.push(said.to_owned());
        }
    }
    assert!(calls.len() >= 5, "{calls:?}");
    let dir = tempfile::tempdir().unwrap();
    let store = common::quickstart_in(dir.path());
    let mut s = Session::start(&store, &[]);
    s.initialize("2025-06-18");
    for (tool, args, said) in calls {
        let answer = s.call(&tool, args.clone());
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(text, said.join("\n"), "{tool} {args}: {answer}");
    }
}

/// `METHOD PATH` with `body` on the store's API socket: the status and the answer.
fn over_socket(store: &Path, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut s = std::os::unix::net::UnixStream::connect(store.join("api.sock")).unwrap();
    common::request(&mut s, method, path, &[], body)
}

/// A JSON-RPC `tools/list` to `url` with `token`: the HTTP status.
fn listed_with(url: &str, token: &str) -> u16 {
    let address = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut s = std::net::TcpStream::connect(address).unwrap();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let auth = format!("Bearer {token}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    common::request(&mut s, "POST", "/mcp", &headers, &body).0
}

#[test]
fn a_runs_token_works_while_the_server_drives_the_run_and_not_after() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let seen = dir.path().join("seen");
    let release = dir.path().join("release");
    // The task keeps its endpoint and token where the test reads them, then waits to be let go.
    let wf = common::workflow(
        dir.path(),
        "held",
        &format!(
            "name = \"held\"\n[settings]\nworkspace = \"none\"\n[[task]]\nid = \"a\"\nrequires_testing = false\n\
             run = \"printf '%s %s' \\\"$RUNLOG_MCP_URL\\\" \\\"$RUNLOG_MCP_TOKEN\\\" > {}; while [ ! -e {} ]; do sleep 0.05; done\"\n",
            seen.display(),
            release.display()
        ),
    );
    let mut server = common::serve_socket(&store);
    let body = json!({"workflow": wf, "run": "held"}).to_string();
    let (status, answer) = over_socket(&store, "POST", "/v1/runs", &body);
    assert_eq!(status, 201, "{answer}");
    common::wait_for(|| std::fs::read_to_string(&seen).is_ok_and(|s| s.contains(' ')));
    let said = std::fs::read_to_string(&seen).unwrap();
    let (url, token) = said.split_once(' ').unwrap();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    assert_eq!(listed_with(url, token), 200, "while the run is driven");
    assert_eq!(listed_with(url, &"0".repeat(32)), 401);
    std::fs::write(&release, "").unwrap();
    common::wait_for(|| {
        let (_, board) = over_socket(&store, "GET", "/v1/runs/held", "");
        board.contains("\"status\":\"finished\"")
    });
    // The engine is gone with the run's end; its token with it.
    common::wait_for(|| listed_with(url, token) == 401);
    let _ = server.kill();
    let _ = server.wait();
}
