//! What the model gateway adds on the path a real run takes: a task's command (a Python client
//! on one kept-alive connection, TCP_NODELAY, as SDKs hold theirs) makes sequential
//! non-streamed calls with a 10 KB answer through `runlog run`'s gateway to a scripted provider
//! here, each call recorded durably (the engine's step, its blobs, the budgets' refresh) before
//! its answer ends; against the same client calling the provider directly. Measured twice: a
//! run without a budget, and one under a budget, where each call's worst case is reserved by
//! the engine before it leaves.
//!
//! `cargo bench -p runlog-cli --bench gateway_run` (about a minute); `RUNLOG_BENCH_CALLS`
//! (500). Prints its goals: added p50 ≤ 0.5 ms and p99 ≤ 2 ms. Asserts nothing about time.
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::path::Path;

/// The client: `N` calls on one connection, each timed; their latencies in ms as JSON.
const CLIENT: &str = r#"
import http.client, json, os, socket, sys, time, urllib.parse
base = urllib.parse.urlparse(os.environ["ANTHROPIC_BASE_URL"])
conn = http.client.HTTPConnection(base.hostname, base.port)
conn.connect()
conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
           "content-type": "application/json"}
took = []
for n in range(int(os.environ["CALLS"])):
    body = json.dumps({"model": "claude-x", "max_tokens": 256,
                       "messages": [{"role": "user", "content": f"call {n}"}]})
    start = time.perf_counter()
    conn.request("POST", base.path.rstrip("/") + "/v1/messages", body, headers)
    answer = conn.getresponse().read()
    took.append((time.perf_counter() - start) * 1000)
    assert len(answer) > 10_000, answer[:200]
with open(os.environ["OUT"], "w") as f:
    json.dump(took, f)
"#;

/// The scripted provider: every call answered with a 10 KB message.
fn provider() -> String {
    let filler = "x".repeat(10_000);
    let answer = serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-scripted",
        "content": [{"type": "text", "text": filler}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 200}
    })
    .to_string();
    let app = axum::Router::new().route(
        "/v1/messages",
        // The body is read, so that the connection is kept for the next call.
        axum::routing::post(move |_asked: axum::body::Bytes| {
            let answer = answer.clone();
            async move {
                axum::response::IntoResponse::into_response((
                    [("content-type", "application/json")],
                    answer,
                ))
            }
        }),
    );
    common::provider::serve(app)
}

/// The client's latencies, run directly against `base`.
fn direct(dir: &Path, base: &str, calls: usize) -> Vec<f64> {
    let out = dir.join("direct.json");
    let status = std::process::Command::new("python3")
        .arg(dir.join("client.py"))
        .env("ANTHROPIC_BASE_URL", base)
        .env("ANTHROPIC_API_KEY", "sk-direct")
        .env("CALLS", calls.to_string())
        .env("OUT", &out)
        .status()
        .unwrap();
    assert!(status.success());
    read(&out)
}

/// The client's latencies as a task of `runlog run`, under `settings`.
fn through_runlog(
    dir: &Path,
    provider: &str,
    calls: usize,
    name: &str,
    settings: &str,
) -> Vec<f64> {
    let out = dir.join(format!("{name}.json"));
    let wf = common::workflow(
        dir,
        name,
        &format!(
            "name = \"{name}\"\n[settings]\nworkspace = \"none\"\n{settings}\
             [[task]]\nid = \"calls\"\nrun = \"python3 {}\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n\
             [prices.\"claude-scripted\"]\ninput = 3.0\noutput = 15.0\n",
            dir.join("client.py").display()
        ),
    );
    let store = dir.join(format!("{name}-store"));
    let ran = common::runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", name, "--quiet"])
        .env("ANTHROPIC_API_KEY", "sk-ant-the-runners-own")
        .env("CALLS", calls.to_string())
        .env("OUT", &out)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", common::text(&ran));
    read(&out)
}

fn read(path: &Path) -> Vec<f64> {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut took: Vec<f64> = v
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    took.sort_by(f64::total_cmp);
    took
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * q).round() as usize;
    sorted.get(i).copied().unwrap_or(f64::NAN)
}

fn main() {
    let calls: usize = std::env::var("RUNLOG_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("client.py"), CLIENT).unwrap();
    let base = provider();
    // Warm the provider and Python's imports, then measure.
    direct(dir.path(), &base, 20);
    let alone = direct(dir.path(), &base, calls);
    let free = through_runlog(dir.path(), &base, calls, "unbudgeted", "");
    let held = through_runlog(
        dir.path(),
        &base,
        calls,
        "budgeted",
        "max_cost_usd = 1000.0\n",
    );
    let (p50, p99) = (quantile(&alone, 0.5), quantile(&alone, 0.99));
    println!("{calls} sequential calls, 10 KB answers, one kept-alive connection");
    println!("direct:                 p50 {p50:.3} ms, p99 {p99:.3} ms");
    for (what, took) in [("through runlog run", &free), ("… under a budget", &held)] {
        let (q50, q99) = (quantile(took, 0.5), quantile(took, 0.99));
        let (a50, a99) = (q50 - p50, q99 - p99);
        println!(
            "{what:<23} p50 {q50:.3} ms, p99 {q99:.3} ms: added p50 {a50:+.3} ms ({}), p99 {a99:+.3} ms ({})",
            if a50 <= 0.5 { "met: ≤ 0.5" } else { "NOT MET: ≤ 0.5" },
            if a99 <= 2.0 { "met: ≤ 2" } else { "NOT MET: ≤ 2" },
        );
    }
}
