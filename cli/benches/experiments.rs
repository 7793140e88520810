//! What an experiment costs beside the work it executes again: RUNS recorded runs (5 tasks
//! each, an agent making 10 calls a task through the gateway, a judge making 1) are executed
//! again under a judge-only variant (`runlog experiment run`): every agent call is answered
//! from the recording, the judge's go to the scripted provider. Printed: the time per rerun
//! against the recorded run's own time (goal ≤ 1.1×), the experiment's own bookkeeping per
//! rerun (its wall time less the reruns' own spans, goal ≤ 20 ms), and how long
//! `experiment show` takes over them. The report's figures over 1,000 reruns are timed in
//! `core/benches/experiment_report.rs`.
//!
//! `cargo bench -p runlog-cli --bench experiments` (a few minutes); `RUNLOG_BENCH_RUNS` (100).
//! Asserts nothing about time.
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use axum::body::Bytes;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

const AGENT: &str = r#"
import json, os, sys, urllib.request
task, out = sys.argv[1], sys.argv[2]
def ask(messages):
    body = json.dumps({"model": "gpt-agent", "messages": messages}).encode()
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
        headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
    return json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"]
messages = [{"role": "system", "content": "You write small, careful changes."},
            {"role": "user", "content": "task " + task + ": make the change"}]
for turn in range(10):
    said = ask(messages)
    messages += [{"role": "assistant", "content": said}, {"role": "user", "content": "go on (" + str(turn) + ")"}]
open(out, "w").write(said)
"#;

const JUDGE: &str = r#"
import json, os, sys, urllib.request
body = json.dumps({"model": "gpt-judge", "messages": [{"role": "user", "content": "judge under the " + sys.argv[1] + " rubric: " + open(sys.argv[2]).read()}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
    headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
print(json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"])
"#;

fn provider(called: Arc<AtomicUsize>) -> String {
    let app = axum::Router::new().fallback(move |body: Bytes| {
        let called = called.clone();
        async move {
            called.fetch_add(1, Ordering::SeqCst);
            let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let said = asked["messages"].to_string();
            let content = if said.contains("strict rubric") {
                json!({"score": 0.6}).to_string()
            } else if said.contains("rubric") {
                json!({"score": 0.9}).to_string()
            } else {
                "I changed the parser and its test; the suite passes.".to_owned()
            };
            axum::Json(json!({"id": "chatcmpl-1", "object": "chat.completion", "created": 1_700_000_000,
                "model": asked["model"], "usage": {"prompt_tokens": 800, "completion_tokens": 60, "total_tokens": 860},
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}))
        }
    });
    common::provider::serve(app)
}

fn json_of(store: &Path, args: &[&str]) -> Value {
    let out = common::runlog(store).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", common::text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A run's own span: from its first event to its last, in ms.
fn span(store: &Path, run: &str) -> u64 {
    let out = common::runlog(store)
        .args(["--json", "log", run])
        .output()
        .unwrap();
    let times: Vec<u64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok()?["at"].as_u64())
        .collect();
    times.last().unwrap_or(&0) - times.first().unwrap_or(&0)
}

fn main() {
    let runs: usize = std::env::var("RUNLOG_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let called = Arc::new(AtomicUsize::new(0));
    let upstream = provider(called.clone());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display();
    std::fs::write(dir.path().join("agent.py"), AGENT).unwrap();
    std::fs::write(dir.path().join("judge.py"), JUDGE).unwrap();
    let mut toml = format!(
        "name = \"bench\"\n[settings]\nworkspace = \"none\"\neval_threshold = 0.7\nmax_eval_rescues = 0\n\
         [providers.openai]\nkind = \"openai\"\nbase_url = \"{upstream}\"\n\
         [prices.\"gpt-agent\"]\ninput = 3.0\noutput = 15.0\n[prices.\"gpt-judge\"]\ninput = 1.0\noutput = 5.0\n"
    );
    for t in 1..=5 {
        toml.push_str(&format!(
            "[[task]]\nid = \"t{t}\"\nrun = \"python3 {d}/agent.py t{t} {d}/out-t{t}.txt\"\nrequires_testing = false\n\
             eval = \"python3 {d}/judge.py lenient {d}/out-t{t}.txt\"\n"
        ));
    }
    let wf = common::workflow(dir.path(), "bench.toml", &toml);
    let store = dir.path().join("store");
    let recorded = Instant::now();
    let mut ids = Vec::new();
    for i in 1..=runs {
        let id = format!("night-{i}");
        let out = common::runlog(&store)
            .args(["run", wf.to_str().unwrap(), "--quiet", "--run-id", &id])
            .env("OPENAI_API_KEY", "sk-scripted")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", common::text(&out));
        ids.push(id);
    }
    let recorded = recorded.elapsed().as_secs_f64();
    let before = called.load(Ordering::SeqCst);
    let variant = dir.path().join("strict.toml");
    std::fs::write(
        &variant,
        format!("[all]\neval = \"python3 {d}/judge.py strict {d}/out-$RUNLOG_TASK.txt\"\n"),
    )
    .unwrap();
    let executed = Instant::now();
    let out = common::runlog(&store)
        .args([
            "experiment",
            "run",
            "rejudge",
            "--runs",
            &ids.join(","),
            "--variant",
        ])
        .arg(format!("strict={}", variant.display()))
        .env("OPENAI_API_KEY", "sk-scripted")
        .output()
        .unwrap();
    let executed = executed.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", common::text(&out));
    let live_calls = called.load(Ordering::SeqCst) - before;
    let shown = Instant::now();
    let report = json_of(&store, &["--json", "experiment", "show", "rejudge"]);
    let shown = shown.elapsed().as_secs_f64();
    let own: u64 = ids
        .iter()
        .map(|r| span(&store, &format!("rejudge.strict.{r}.1")))
        .sum();
    let strict = &report["figures"]["variants"][1]["totals"];
    let per_run = recorded / runs as f64;
    let per_rerun = executed / runs as f64;
    let bookkeeping_ms = (executed * 1000.0 - own as f64) / runs as f64;
    println!(
        "{runs} recorded runs of 5 tasks (10 agent calls and 1 judge call a task): {per_run:.2} s a run"
    );
    println!(
        "judge-only experiment: {per_rerun:.2} s a rerun, {:.2}× the run's own time (goal ≤ 1.1: {}); \
         {} calls from the recording, {live_calls} live (the judge's: {} expected)",
        per_rerun / per_run,
        if per_rerun <= 1.1 * per_run { "met" } else { "NOT MET" },
        strict["recorded_calls"],
        runs * 5,
    );
    println!(
        "the experiment's own bookkeeping: {bookkeeping_ms:.1} ms a rerun (its wall time less the reruns' own spans; goal ≤ 20: {})",
        if bookkeeping_ms <= 20.0 { "met" } else { "NOT MET" }
    );
    println!(
        "`experiment show` over {runs} reruns ({} task executions): {:.3} s",
        runs * 10,
        shown
    );
}
