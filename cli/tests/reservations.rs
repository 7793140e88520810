//! A budget holds while calls are in flight: agents written with the official Anthropic SDK,
//! streaming with a `max_tokens` of 4,096, start their calls together with a cent left, and
//! the provider sees only the calls whose worst case fits beside what is spent and held; the
//! rest wait or are refused, recorded. Checked on every event of the log: spend and the worst
//! cases held never pass the budget. Also across two workers on PostgreSQL sharing one run.

mod common;
use axum::body::{Body, Bytes};
use axum::response::IntoResponse;
use common::provider::{logged, serve, sse};
use common::{runlog, text, workflow};
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

const REAL_KEY: &str = "sk-ant-api03-the-runners-own-key-0123456789";

/// The budget: a cent.
const BUDGET: f64 = 0.01;

/// A streamed answer counting 1,000 input and 100 output tokens, its end a second after its
/// start so that calls started together are in flight together.
async fn streamed(seen: Arc<AtomicUsize>, body: Bytes) -> axum::response::Response {
    seen.fetch_add(1, Ordering::SeqCst);
    let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
    let start = sse(&[json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-scripted",
        "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 1000, "output_tokens": 1}}})]);
    let rest = sse(&[
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "done"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
               "usage": {"output_tokens": 100}}),
        json!({"type": "message_stop"}),
    ]);
    assert_eq!(
        asked["max_tokens"], 4096,
        "the request is passed on as sent"
    );
    let pieces = futures_util::stream::unfold(0, move |n| {
        let (start, rest) = (start.clone(), rest.clone());
        async move {
            match n {
                0 => Some((Ok::<_, std::io::Error>(Bytes::from(start)), 1)),
                1 => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    Some((Ok(Bytes::from(rest)), 2))
                }
                _ => None,
            }
        }
    });
    (
        [("content-type", "text/event-stream")],
        Body::from_stream(pieces),
    )
        .into_response()
}

/// The scripted provider: its address, and how many calls reached it.
fn provider() -> (String, Arc<AtomicUsize>) {
    let seen = Arc::new(AtomicUsize::new(0));
    let counted = seen.clone();
    let app = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(move |body: Bytes| streamed(counted.clone(), body)),
    );
    (serve(app), seen)
}

/// An agent as people write them with the SDK: one streamed call, `max_tokens` 4,096, no
/// retries of its own (a refusal is final for this test). The eight start their calls together:
/// each waits until all are ready.
const AGENT: &str = r#"
import anthropic, os, pathlib, sys, time
client = anthropic.Anthropic(max_retries=0)
ready = pathlib.Path(os.environ["READY_DIR"])
(ready / os.environ["RUNLOG_TASK"]).touch()
deadline = time.time() + 60
while len(list(ready.iterdir())) < 8 and time.time() < deadline:
    time.sleep(0.01)
try:
    with client.messages.stream(model="claude-x", max_tokens=4096,
                                messages=[{"role": "user", "content": "do " + os.environ["RUNLOG_TASK"]}]) as s:
        print("answered:", s.get_final_text())
except anthropic.APIStatusError as e:
    print(f"refused {e.status_code}: {e.message}")
    sys.exit(1)
"#;

/// Eight such agents under one run budget of a cent. At $1 a million input tokens and $0.50
/// output, a call's worst case (its request's bytes and the provider's allowance as input, 4,096
/// output) is about $0.0032 and its answer costs $0.00105: at most three are in flight at once,
/// and seven fit one after another ($0.0063 spent leaves room for one more worst case, $0.00735
/// does not).
fn eight_agents(provider: &str) -> String {
    let mut wf = format!(
        "name = \"cent\"\n[settings]\nworkspace = \"none\"\njobs = 8\nmax_cost_usd = {BUDGET}\n\
         [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n\
         [prices.\"claude-scripted\"]\ninput = 1.0\noutput = 0.5\n"
    );
    for i in 1..=8 {
        wf += &format!(
            "[[task]]\nid = \"agent-{i}\"\nrun = \"python3 agent.py\"\nrequires_testing = false\n\
             retry = {{ max = 0 }}\n"
        );
    }
    wf
}

/// Spend and the worst cases held, event by event: never past the budget. The calls that went
/// (answered), and those refused.
fn held_within_budget(events: &[Value]) -> (usize, usize) {
    let (mut spent, mut held) = (0.0f64, Vec::<(String, u64, f64)>::new());
    let (mut answered, mut refused) = (0, 0);
    for e in events {
        let key = (
            e["task"].as_str().unwrap_or_default().to_owned(),
            e["n"].as_u64().unwrap_or(0),
        );
        match e["type"].as_str() {
            Some("model-call-reserved") => {
                held.push((key.0, key.1, e["cost_usd"].as_f64().unwrap()));
            }
            Some("model-called") => {
                held.retain(|(task, n, _)| (task.as_str(), *n) != (key.0.as_str(), key.1));
                spent += e["cost_usd"].as_f64().unwrap_or(0.0);
                match e["end"]["end"].as_str() {
                    Some("answered") => answered += 1,
                    Some("over-budget") => refused += 1,
                    other => panic!("a call ended {other:?}: {e}"),
                }
            }
            _ => {}
        }
        let holding: f64 = held.iter().map(|(_, _, usd)| usd).sum();
        assert!(
            spent + holding <= BUDGET + 1e-12,
            "${spent} spent and ${holding} held at {e}"
        );
    }
    (answered, refused)
}

#[test]
fn eight_agents_starting_together_with_a_cent_left_spend_no_more_than_the_cent() {
    if !common::sdks_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (provider, seen) = provider();
    std::fs::write(dir.path().join("agent.py"), AGENT).unwrap();
    let wf = workflow(dir.path(), "cent", &eight_agents(&provider));
    let store = dir.path().join("store");
    let ready = dir.path().join("ready");
    std::fs::create_dir(&ready).unwrap();
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "cent", "--quiet"])
        .env("ANTHROPIC_API_KEY", REAL_KEY)
        .env("READY_DIR", &ready)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "one agent is refused: {}",
        text(&out)
    );
    let events = logged(&store, "cent", &[]);
    let (answered, refused) = held_within_budget(&events);
    assert_eq!(
        (seen.load(Ordering::SeqCst), answered, refused),
        (7, 7, 1),
        "the provider saw the seven calls that fit, the eighth was refused and recorded"
    );
    // The refused agent was told why, in the SDK's own error.
    let said: String = events
        .iter()
        .filter(|e| e["type"] == "output-recorded" && e["stream"] == "agent.stdout")
        .map(|e| e["text"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(said.matches("answered: done").count(), 7, "{said}");
    assert!(
        said.contains("refused 402") && said.contains("runlog budget cent --max-cost-usd USD"),
        "{said}"
    );
    // Calls waited: more than three were started, never more than three were in flight.
    let most = most_in_flight(&events);
    assert_eq!(most, 3, "{events:?}");
    // `cost` counts what was spent, within the cent, and, as the run stood while three calls
    // were in flight, what they held.
    let usd = cost(&store, None)["total"]["cost_usd"].as_f64().unwrap();
    assert!((usd - 7.0 * 0.00105).abs() < 1e-9);
    let third = events
        .iter()
        .filter(|e| e["type"] == "model-call-reserved")
        .nth(2)
        .unwrap();
    let seq = logged_seq(&store, "cent", third);
    let then = &cost(&store, Some(seq))["budgets"][0];
    let worst = third["cost_usd"].as_f64().unwrap();
    assert_eq!(then["in_flight"], 3, "{then}");
    assert!(
        (then["held_usd"].as_f64().unwrap() - 3.0 * worst).abs() < 1e-9,
        "{then}"
    );
}

/// `runlog --json cost cent` (at `seq`, if given): its last line.
fn cost(store: &Path, seq: Option<u64>) -> Value {
    let mut cost = runlog(store);
    cost.args(["--json", "cost", "cent"]);
    if let Some(seq) = seq {
        cost.args(["--at", &seq.to_string()]);
    }
    let out = cost.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    serde_json::from_str(&last).unwrap()
}

/// The seq of `event` in `run`'s log (`log --json` prints each event with its seq).
fn logged_seq(store: &Path, run: &str, event: &Value) -> u64 {
    let out = runlog(store).args(["--json", "log", run]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|l| &l["event"] == event)
        .and_then(|l| l["seq"].as_u64())
        .unwrap()
}

/// The most reservations held at once in `events`.
fn most_in_flight(events: &[Value]) -> usize {
    let mut held = 0usize;
    let mut most = 0;
    for e in events {
        match e["type"].as_str() {
            Some("model-call-reserved") => held += 1,
            Some("model-called") if e["end"]["end"] == "answered" => held -= 1,
            _ => {}
        }
        most = most.max(held);
    }
    most
}

/// An agent whose first stream ends early (well short of its 4,096 tokens) and which then
/// calls again.
const TWICE: &str = r#"
import anthropic
client = anthropic.Anthropic(max_retries=0)
for n in (1, 2):
    with client.messages.stream(model="claude-x", max_tokens=4096,
                                messages=[{"role": "user", "content": f"step {n}"}]) as s:
        print(f"call {n}:", s.get_final_text())
"#;

#[test]
fn a_stream_that_ends_early_settles_below_its_worst_case_and_lets_the_next_call_through() {
    if !common::sdks_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (provider, seen) = provider();
    std::fs::write(dir.path().join("agent.py"), TWICE).unwrap();
    // $0.005: one worst case ($0.0032) fits, two do not; once the first settles at $0.00105,
    // $0.00395 is left and the second fits.
    let wf = workflow(
        dir.path(),
        "early",
        &format!(
            "name = \"early\"\n[settings]\nworkspace = \"none\"\nmax_cost_usd = 0.005\n\
             [[task]]\nid = \"a\"\nrun = \"python3 agent.py\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n\
             [prices.\"claude-scripted\"]\ninput = 1.0\noutput = 0.5\n"
        ),
    );
    let store = dir.path().join("store");
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "early", "--quiet"])
        .env("ANTHROPIC_API_KEY", REAL_KEY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    let events = logged(
        &store,
        "early",
        &["--kind", "model-call-reserved", "--kind", "model-called"],
    );
    let order: Vec<(&str, u64)> = events
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["n"].as_u64().unwrap()))
        .collect();
    assert_eq!(
        order,
        [
            ("model-call-reserved", 1),
            ("model-called", 1),
            ("model-call-reserved", 2),
            ("model-called", 2),
        ]
    );
    let worst = events[0]["cost_usd"].as_f64().unwrap();
    let settled = events[1]["cost_usd"].as_f64().unwrap();
    assert!(settled < worst && worst * 2.0 > 0.005, "{worst} {settled}");
    held_within_budget(&events);
}

/// `runlog` on the shared store as host `host` sees it.
fn on_host(url: &str, dir: &Path, host: &str) -> std::process::Command {
    let mut c = runlog(Path::new(url));
    c.env("RUNLOG_LOCAL_DIR", dir.join(host));
    c
}

#[test]
fn two_workers_on_postgresql_share_one_runs_budget_and_never_pass_it_together() {
    let Some(db) = runlog_store::postgres::scratch::scratch() else {
        return;
    };
    if !common::sdks_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (provider, seen) = provider();
    std::fs::write(dir.path().join("agent.py"), AGENT).unwrap();
    let wf = workflow(dir.path(), "cent", &eight_agents(&provider));
    let out = on_host(&db.url, dir.path(), "submitter")
        .args([
            "run",
            wf.to_str().unwrap(),
            "--run-id",
            "cent",
            "--submit-only",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let ready = dir.path().join("ready");
    std::fs::create_dir(&ready).unwrap();
    let workers: Vec<std::process::Child> = ["w1", "w2"]
        .iter()
        .map(|name| {
            on_host(&db.url, dir.path(), name)
                .args(["worker", "--until-idle", "--jobs", "4", "--name", name])
                .env("ANTHROPIC_API_KEY", REAL_KEY)
                .env("READY_DIR", &ready)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let mut by_worker = Vec::new();
    for (i, w) in workers.into_iter().enumerate() {
        let out = common::finish_within(w, Duration::from_secs(180), &format!("worker {i}"));
        by_worker.push(text(&out));
    }
    let events = logged(Path::new(&db.url), "cent", &[]);
    let (answered, refused) = held_within_budget(&events);
    assert_eq!(
        (seen.load(Ordering::SeqCst), answered, refused),
        (7, 7, 1),
        "{by_worker:?}"
    );
    let claimed: std::collections::BTreeSet<&str> = events
        .iter()
        .filter(|e| e["type"] == "worker-claimed")
        .filter_map(|e| e["worker"].as_str())
        .collect();
    assert_eq!(claimed.len(), 2, "both workers ran agents: {claimed:?}");
}
