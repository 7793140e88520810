//! What an upstream, an agent or a request sends, tried as a hostile user would: a key the
//! upstream echoes, an agent printing its own key, a secret in a request body, in a budget's
//! `by` or a forget's reason, a call too large to pass on. Every secret the runner or the
//! server knows is replaced before it is recorded, every refused call is recorded, and
//! `verify --secrets` finds what was recorded before, wherever it sits.

mod common;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use common::provider::{logged, serve};
use common::{open, runlog, text};
use serde_json::{json, Value};
use std::path::Path;

/// The local provider's key: its variable's name matches none of the redaction patterns.
const LOCAL_KEY: &str = "the-real-local-credential-0123456789";

/// A secret nobody told runlog about, which an agent puts in its request.
const UNKNOWN_SECRET: &str = "hunter2-not-known-to-runlog";

/// An upstream that answers every call 401, echoing the key it was given, as some do.
fn echoing_upstream() -> String {
    serve(axum::Router::new().fallback(|headers: HeaderMap| async move {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let body = json!({"error": {"message": format!("bad key: {auth}"), "type": "invalid_request_error"}});
        (StatusCode::UNAUTHORIZED, axum::Json(body)).into_response()
    }))
}

/// `runlog verify RUN --secrets FILE` with `secrets` (NAME=VALUE lines): its output.
fn verify_secrets(store: &Path, run: &str, secrets: &str) -> std::process::Output {
    let file = store.with_file_name("secrets.txt");
    std::fs::write(&file, secrets).unwrap();
    runlog(store)
        .args(["verify", run, "--secrets", file.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn an_echoed_provider_key_and_a_commands_own_key_are_never_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let big = dir.path().join("big.json");
    // Past the gateway's 32 MiB: refused before it reaches any provider.
    std::fs::write(&big, vec![b' '; 33 * 1024 * 1024]).unwrap();
    let agent = format!(
        "echo \"my own key: $OPENAI_API_KEY\"; \
         curl -s -H \"Authorization: Bearer $OPENAI_API_KEY\" -H 'content-type: application/json' \
           -d '{{\"model\":\"m\",\"messages\":[{{\"role\":\"user\",\"content\":\"the password is {UNKNOWN_SECRET}\"}}]}}' \
           \"$OPENAI_BASE_URL/chat/completions\"; echo; \
         curl -s -o /dev/null -w 'big: %{{http_code}}\\n' -H \"Authorization: Bearer $OPENAI_API_KEY\" \
           -H 'content-type: application/json' --data-binary @{} \"$OPENAI_BASE_URL/chat/completions\"",
        big.display()
    );
    let wf = common::workflow(
        dir.path(),
        "echo",
        &format!(
            "name = \"echo\"\n[[task]]\nid = \"t\"\nrun = {agent:?}\nrequires_testing = false\n\
             [providers.local]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key_env = \"LOCAL_LLM_CRED\"\n",
            echoing_upstream()
        ),
    );
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "echo", "--quiet"])
        .env("LOCAL_LLM_CRED", LOCAL_KEY)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));

    // The upstream's answer, as the agent printed it and as the call kept it, names the key
    // as the provider's; the command's own key is replaced by its shape.
    let printed = runlog(&store).args(["log", "echo"]).output().unwrap();
    let exported = runlog(&store).args(["export", "echo"]).output().unwrap();
    let command_key = regex::Regex::new(r"runlog-[0-9a-f]{32}").unwrap();
    for (what, out) in [("log", &printed), ("export", &exported)] {
        let out = text(out);
        assert!(!out.contains(LOCAL_KEY), "{what}: {out}");
        assert!(!command_key.is_match(&out), "{what}: {out}");
    }
    let stage = logged(&store, "echo", &["--kind", "output-recorded"]);
    let stdout = stage
        .iter()
        .map(|e| e["text"].as_str().unwrap_or(""))
        .collect::<String>();
    assert!(
        stdout.contains("bad key: Bearer [redacted:provider local]"),
        "{stdout}"
    );
    assert!(
        stdout.contains("my own key: [redacted:runlog-command-key]"),
        "{stdout}"
    );
    assert!(stdout.contains("big: 413"), "{stdout}");

    let calls = logged(&store, "echo", &["--kind", "model-called"]);
    assert_eq!(calls.len(), 2, "{calls:?}");
    let log = open(&store);
    let hash = runlog_core::Hash::from_hex(calls[0]["response"]["blob"].as_str().unwrap()).unwrap();
    let answer = runlog_store::EventLog::get_blob(&log, &hash.0)
        .unwrap()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&answer).contains("bad key: Bearer [redacted:provider local]"),
        "{}",
        String::from_utf8_lossy(&answer)
    );
    drop(log);
    // The call refused for its size is recorded with its provider, and says why.
    assert_eq!(
        (
            &calls[1]["provider"],
            &calls[1]["status"],
            &calls[1]["end"]["end"]
        ),
        (&json!("local"), &json!(0), &json!("refused")),
        "{calls:?}"
    );
    assert!(calls[1]["error"].as_str().unwrap().contains("larger than"));

    // verify --secrets: the provider's key is nowhere; the secret nobody named is found in
    // the model call's request, where it is.
    let clean = verify_secrets(&store, "echo", &format!("LOCAL={LOCAL_KEY}\n"));
    assert_eq!(clean.status.code(), Some(0), "{}", text(&clean));
    let found = verify_secrets(&store, "echo", &format!("PW={UNKNOWN_SECRET}\n"));
    assert_eq!(found.status.code(), Some(1), "{}", text(&found));
    assert!(
        text(&found).contains("model-called") && text(&found).contains("PW"),
        "{}",
        text(&found)
    );
}

/// `METHOD PATH` with `body` over the store's API socket: the status and the JSON answer.
fn over_socket(store: &Path, method: &str, path: &str, body: &str) -> (u16, Value) {
    let mut s = std::os::unix::net::UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, body) = common::request(&mut s, method, path, &[], body);
    (status, serde_json::from_str(&body).unwrap_or(Value::Null))
}

#[test]
fn secrets_sent_as_who_or_why_are_replaced_before_they_are_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::quickstart_in(dir.path());
    let password = "db-password-of-the-server-0123";
    let shapes = [
        "sk-proj-abcdefghijklmnopqrstuvwxyz012345",
        "sk-ant-api03-abcdefghijklmnopqrstuvwxyz-0123456789",
        "AKIAABCDEFGHIJKLMNOP",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        password,
    ];
    let server = runlog(&store)
        .arg("serve")
        .env("DB_PASSWORD", password)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for(|| store.join("api.sock").exists());
    for secret in shapes {
        let body = json!({"max_cost_usd": 10.0, "by": format!("ops {secret}")}).to_string();
        let (status, answer) = over_socket(&store, "POST", "/v1/runs/quickstart/budget", &body);
        assert_eq!(status, 200, "{answer}");
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    common::finish_within(server, std::time::Duration::from_secs(30), "runlog serve");
    let file: String = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| format!("S{i}={s}\n"))
        .collect();
    let verified = verify_secrets(&store, "quickstart", &file);
    assert_eq!(verified.status.code(), Some(0), "{}", text(&verified));
    let budgets = logged(&store, "quickstart", &["--kind", "budget-set"]);
    assert_eq!(budgets.len(), 5);
    assert!(budgets
        .iter()
        .all(|b| b["by"].as_str().unwrap().starts_with("ops [redacted:")));

    // A forget's reason goes into the chained register of forgotten runs.
    let reason = format!("leaked {}", shapes[1]);
    let out = runlog(&store)
        .args(["forget", "quickstart", "--reason", &reason])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let verified = runlog(&store).arg("verify").output().unwrap();
    assert!(!text(&verified).contains(shapes[1]), "{}", text(&verified));
    assert!(
        text(&verified).contains("leaked [redacted:anthropic-key]"),
        "{}",
        text(&verified)
    );
}

/// A model name an upstream sends back that would print a forged `run-finished` line and hide
/// the rest of the real one.
const FORGED: &str = "m\r\n    99  12:00:00  run-finished         run finished: succeeded\u{1b}[8m";

#[test]
fn recorded_text_cannot_forge_a_line_or_hide_one_on_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let upstream = serve(axum::Router::new().fallback(|| async {
        axum::Json(json!({"id": "c", "object": "chat.completion", "model": FORGED,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "ok"}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}))
    }));
    let agent = "printf '::message look \\033[31mred\\033[0m\\r\\n'; \
                 curl -s -H \"Authorization: Bearer $OPENAI_API_KEY\" -H 'content-type: application/json' \
                   -d '{\"model\":\"m\",\"messages\":[]}' \"$OPENAI_BASE_URL/chat/completions\" > /dev/null";
    let wf = common::workflow(
        dir.path(),
        "forge",
        &format!(
            "name = \"forge\"\n[[task]]\nid = \"t\"\nrun = {agent:?}\nrequires_testing = false\n\
             [providers.openai]\nkind = \"openai\"\nbase_url = \"{upstream}/v1\"\n"
        ),
    );
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "forge", "--quiet"])
        .env("OPENAI_API_KEY", "sk-proj-the-runners-key-0123456789abcdef")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // What was recorded is kept as it came.
    let calls = logged(&store, "forge", &["--kind", "model-called"]);
    assert_eq!(calls[0]["model"], FORGED);

    for args in [
        vec!["log", "forge"],
        vec!["show", "forge", "t", "--calls"],
        vec!["cost", "forge", "--by", "model"],
        vec!["status", "forge"],
    ] {
        let out = runlog(&store).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        let bad = out
            .stdout
            .iter()
            .find(|b| (**b < 0x20 && **b != b'\n' && **b != b'\t') || **b == 0x7f);
        assert_eq!(
            bad,
            None,
            "{args:?}: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        let shown = String::from_utf8_lossy(&out.stdout);
        if args[0] != "status" {
            assert!(shown.contains("m\\r"), "{args:?}: {shown}");
            assert!(shown.contains("\\u001b[8m"), "{args:?}: {shown}");
        }
        if args[0] == "log" {
            assert!(shown.contains("look \\u001b[31mred\\u001b[0m"), "{shown}");
        }
    }
    // JSON keeps the text as JSON escapes, and parses back to what was recorded.
    let json = runlog(&store)
        .args(["--json", "show", "forge", "t", "--calls"])
        .output()
        .unwrap();
    let value: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["calls"][0]["model"], FORGED);
}

/// What the stream of `quickstart` sends within a second with `Last-Event-ID: id`.
fn streamed_after(store: &Path, id: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::os::unix::net::UnixStream::connect(store.join("api.sock")).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(1)))
        .unwrap();
    write!(
        s,
        "GET /v1/runs/quickstart/stream HTTP/1.1\r\nHost: runlog\r\nLast-Event-ID: {id}\r\n\r\n"
    )
    .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = s.read(&mut buf) {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    String::from_utf8_lossy(&got).into_owned()
}

#[test]
fn every_refusal_of_the_api_says_what_and_how_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let store = common::quickstart_in(dir.path());
    let mut server = runlog(&store)
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for(|| store.join("api.sock").exists());
    let refused = |method: &str, path: &str, body: &str, status: u16, hint: &str| {
        let (got, answer) = over_socket(&store, method, path, body);
        assert_eq!(got, status, "{method} {path}: {answer}");
        assert!(answer["error"].is_string(), "{method} {path}: {answer}");
        let said = answer["hint"].as_str().unwrap_or_default();
        assert!(said.contains(hint), "{method} {path}: {answer}");
    };
    // A budget for a run that does not exist is a 404, as for any resource.
    refused(
        "POST",
        "/v1/runs/nope/budget",
        r#"{"max_cost_usd": 1}"#,
        404,
        "runs",
    );
    // A method a route does not take, and a URI too long, answer in JSON too.
    refused("DELETE", "/v1/runs/quickstart", "", 405, "Allow header");
    let long = format!("/v1/runs/{}", "a".repeat(20_000));
    refused("GET", &long, "", 414, "fewer");
    // The hint names every grouping, `call` too.
    refused(
        "GET",
        "/v1/runs/quickstart/cost?by=nope",
        "",
        400,
        "or call",
    );
    // A Last-Event-ID that is not a seq is refused; the last possible one replays nothing.
    let bad = streamed_after(&store, "x");
    assert!(bad.starts_with("HTTP/1.1 400"), "{bad}");
    assert!(bad.contains("Last-Event-ID is not a seq"), "{bad}");
    let last = streamed_after(&store, &u64::MAX.to_string());
    assert!(last.starts_with("HTTP/1.1 200"), "{last}");
    assert!(!last.contains("id: "), "{last}");
    let from_ten = streamed_after(&store, "10");
    assert!(
        from_ten.contains("id: 11\n") && !from_ten.contains("id: 10\n"),
        "{from_ten}"
    );
    let _ = server.kill();
    let _ = server.wait();
}
