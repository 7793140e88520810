//! Alerts reach people: a local receiver gets a run's failure, a task's wait for review and a
//! budget's 80 % crossing, each signed (the signature checked with Python's `hmac`, not with
//! runlog's own code); a receiver that answers 500 three times and then 200 gets the alert
//! once; a receiver that is down leaves the run's outcome as it was, the failure recorded.

mod common;
use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use common::provider::{logged, serve};
use common::{runlog, text, workflow};
use serde_json::Value;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

const KEY: &str = "the-receivers-shared-key";

/// What a receiver was sent: each request's signature header and body.
type Received = Arc<Mutex<Vec<(Option<String>, Vec<u8>)>>>;

/// A receiver answering 500 to its first `failures` requests, then 200.
fn receiver(failures: usize) -> (String, Received) {
    let received: Received = Arc::default();
    let seen = received.clone();
    let asked = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().route(
        "/hooks/runlog",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let seen = seen.clone();
            let n = asked.fetch_add(1, Ordering::SeqCst);
            async move {
                let signature = headers
                    .get("x-runlog-signature")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                seen.lock().unwrap().push((signature, body.to_vec()));
                if n < failures {
                    StatusCode::INTERNAL_SERVER_ERROR
                } else {
                    StatusCode::OK
                }
            }
        }),
    );
    (format!("{}/hooks/runlog", serve(app)), received)
}

/// Whether `signature` is `sha256=` and the HMAC-SHA256 of `body` with [`KEY`], as Python's
/// standard library computes it.
fn python_says_signed(signature: &str, body: &[u8]) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("body");
    std::fs::write(&file, body).unwrap();
    let check = "import hmac, hashlib, sys\n\
        body = open(sys.argv[1], 'rb').read()\n\
        mac = 'sha256=' + hmac.new(sys.argv[2].encode(), body, hashlib.sha256).hexdigest()\n\
        sys.exit(0 if hmac.compare_digest(mac, sys.argv[3]) else 1)\n";
    std::process::Command::new("python3")
        .args(["-c", check])
        .arg(&file)
        .args([KEY, signature])
        .status()
        .unwrap()
        .success()
}

/// Runs `body` (a workflow whose `[[alerts]]` go to `url`) as run `run`; the store and what
/// `run` said.
fn run_with_alerts(dir: &Path, run: &str, body: &str, url: &str) -> (std::path::PathBuf, String) {
    let alerts = format!(
        "[[alerts]]\nurl = \"{url}\"\nformat = \"json\"\n\
         on = [\"run-failed\", \"waiting\", \"budget\"]\nsecret_env = \"ALERT_KEY\"\n"
    );
    let wf = workflow(dir, run, &format!("name = \"{run}\"\n{body}{alerts}"));
    let store = dir.join("store");
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", run, "--quiet"])
        .env("ALERT_KEY", KEY)
        .output()
        .unwrap();
    (store, text(&out))
}

/// A task that reports spending $0.85 of the run's $1, and one that fails.
const SPEND_AND_FAIL: &str = "[settings]\nworkspace = \"none\"\nmax_cost_usd = 1.0\n\
    [[task]]\nid = \"spend\"\nrequires_testing = false\n\
    run = \"echo '{\\\"usage\\\": {\\\"input_tokens\\\": 10, \\\"output_tokens\\\": 5}, \\\"cost_usd\\\": 0.85, \\\"model\\\": \\\"m\\\"}'\"\n\
    [[task]]\nid = \"broken\"\nrequires_testing = false\nafter = [\"spend\"]\nrun = \"exit 3\"\nretry = { max = 0 }\n";

/// A task whose verdict is held for a person.
const HELD: &str = "[settings]\nworkspace = \"none\"\nreview = \"all\"\n\
    [[task]]\nid = \"judged\"\nrequires_testing = false\nrun = \"true\"\n\
    eval = \"echo '{\\\"score\\\": 0.9}'\"\n";

/// The bodies a receiver got, as JSON, each checked signed.
fn signed_bodies(received: &Received) -> Vec<Value> {
    received
        .lock()
        .unwrap()
        .iter()
        .map(|(signature, body)| {
            let signature = signature.as_deref().expect("a signature header");
            assert!(python_says_signed(signature, body), "{signature}");
            serde_json::from_slice(body).unwrap()
        })
        .collect()
}

#[test]
fn a_receiver_gets_the_failure_the_review_wait_and_the_budget_crossing_signed() {
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = receiver(0);
    let (_, said) = run_with_alerts(dir.path(), "spent", SPEND_AND_FAIL, &url);
    let (store, _) = run_with_alerts(dir.path(), "held", HELD, &url);
    let bodies = signed_bodies(&received);
    let on: Vec<(&str, &str)> = bodies
        .iter()
        .map(|b| (b["run"].as_str().unwrap(), b["on"].as_str().unwrap()))
        .collect();
    assert_eq!(
        on,
        [
            ("spent", "budget"),
            ("spent", "run-failed"),
            ("held", "waiting")
        ],
        "{bodies:?}\n{said}"
    );
    assert_eq!(
        bodies[0]["text"],
        "run spent: the run's cost budget of $1.0000 is 80% spent ($0.8500)"
    );
    assert!(
        bodies[1]["text"]
            .as_str()
            .unwrap()
            .contains("broken failed"),
        "{}",
        bodies[1]
    );
    assert_eq!(bodies[2]["task"], "judged");
    // Each delivery is in the run's history.
    let sent = logged(&store, "held", &["--kind", "alert-sent"]);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        (&sent[0]["on"], &sent[0]["attempts"], &sent[0]["status"]),
        (&Value::from("waiting"), &Value::from(1), &Value::from(200))
    );
    let to = sent[0]["to"].as_str().unwrap();
    assert!(
        to.starts_with("http://127.0.0.1:") && !to.contains("hooks"),
        "{to}"
    );
}

#[test]
fn a_receiver_that_fails_three_times_gets_the_alert_once_it_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = receiver(3);
    let (store, said) = run_with_alerts(dir.path(), "held", HELD, &url);
    let all = received.lock().unwrap().clone();
    assert_eq!(
        all.len(),
        4,
        "three 500s, then the one that was taken: {said}"
    );
    assert!(
        all.windows(2).all(|w| w[0].1 == w[1].1),
        "the same alert each time"
    );
    let sent = logged(&store, "held", &["--kind", "alert-sent"]);
    assert_eq!(
        (&sent[0]["attempts"], &sent[0]["status"], &sent[0]["error"]),
        (&Value::from(4), &Value::from(200), &Value::Null),
        "{sent:?}"
    );
}

#[test]
fn a_receiver_that_is_down_leaves_the_runs_outcome_unchanged_and_the_failure_recorded() {
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/hooks/runlog");
    let (store, said) = run_with_alerts(dir.path(), "held", HELD, &url);
    assert!(
        said.contains("paused"),
        "it waits for review, as without alerts: {said}"
    );
    let sent = logged(&store, "held", &["--kind", "alert-sent"]);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0]["attempts"], 4);
    assert!(
        sent[0]["error"]
            .as_str()
            .unwrap()
            .contains("cannot connect"),
        "{sent:?}"
    );
    let status = runlog(&store)
        .args(["--json", "status", "held"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("pending-eval"),
        "{}",
        text(&status)
    );
}

#[test]
fn alerts_test_sends_one_to_each_receiver_and_says_how_it_went() {
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = receiver(0);
    let wf = workflow(
        dir.path(),
        "wf",
        &format!(
            "name = \"wf\"\n[[task]]\nid = \"a\"\nrun = \"true\"\n\
             [[alerts]]\nurl = \"{url}\"\nformat = \"slack\"\nsecret_env = \"ALERT_KEY\"\n"
        ),
    );
    let out = runlog(&dir.path().join("store"))
        .args(["alerts", "test", wf.to_str().unwrap()])
        .env("ALERT_KEY", KEY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("delivered to http://127.0.0.1:"),
        "{}",
        text(&out)
    );
    let bodies = signed_bodies(&received);
    assert_eq!(bodies.len(), 1);
    assert!(
        bodies[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("runlog test: "),
        "{}",
        bodies[0]
    );
}

/// A workflow whose one task fails and that names no receiver of its own, and a file of
/// `[[alerts]]` sending run failures to `url`, signed with `ALERT_KEY`.
fn failing_without_receivers(dir: &Path, url: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let alerts = dir.join("alerts.toml");
    std::fs::write(
        &alerts,
        format!("[[alerts]]\nurl = \"{url}\"\non = [\"run-failed\"]\nsecret_env = \"ALERT_KEY\"\n"),
    )
    .unwrap();
    let wf = workflow(
        dir,
        "plain",
        "name = \"plain\"\n[settings]\nworkspace = \"none\"\n\
         [[task]]\nid = \"broken\"\nrun = \"exit 3\"\nrequires_testing = false\nretry = { max = 0 }\n",
    );
    (wf, alerts)
}

#[test]
fn a_server_given_alerts_sends_those_of_every_run_it_executes() {
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = receiver(0);
    let (wf, alerts) = failing_without_receivers(dir.path(), &url);
    let store = dir.path().join("store");
    let mut server = runlog(&store)
        .args(["serve", "--alerts"])
        .arg(&alerts)
        .env("ALERT_KEY", KEY)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for(|| store.join("api.sock").exists());
    let body = serde_json::json!({"workflow": wf, "run": "served"}).to_string();
    let mut socket = std::os::unix::net::UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, said) = common::request(&mut socket, "POST", "/v1/runs", &[], &body);
    assert_eq!(status, 201, "{said}");
    common::wait_for(|| !received.lock().unwrap().is_empty());
    let bodies = signed_bodies(&received);
    assert_eq!(
        (&bodies[0]["run"], &bodies[0]["on"]),
        (&Value::from("served"), &Value::from("run-failed"))
    );
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn a_worker_given_alerts_sends_those_of_the_runs_it_works_on() {
    let Some(db) = runlog_store::postgres::scratch::scratch() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (url, received) = receiver(0);
    // Submitted for workers to execute.
    let (wf, alerts) = failing_without_receivers(dir.path(), &url);
    let store = Path::new(&db.url);
    let out = runlog(store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "worked"])
        .arg("--submit-only")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let worker = runlog(store)
        .args(["worker", "--until-idle", "--name", "w1", "--alerts"])
        .arg(&alerts)
        .env("ALERT_KEY", KEY)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::finish_within(worker, std::time::Duration::from_secs(120), "worker");
    assert!(out.status.success(), "{}", text(&out));
    let bodies = signed_bodies(&received);
    assert_eq!(
        (&bodies[0]["run"], &bodies[0]["on"]),
        (&Value::from("worked"), &Value::from("run-failed")),
        "{bodies:?}"
    );
    // Its delivery is recorded in the run, as a workflow's own receivers' are.
    let sent = logged(store, "worked", &["--kind", "alert-sent"]);
    assert_eq!(sent.len(), 1, "{sent:?}");
}
