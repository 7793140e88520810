//! What agents cost, end to end through the real binary: the fixture workflow `agent-costs`
//! (each of the five usage shapes, an evaluator reporting its own cost, a task that never gives
//! up) records usage, prices it and stops the never-give-up task at its budget; `cost`,
//! `metrics`, `status` and the API report the hand-computed totals at every seq; a raised budget
//! lets `resume` go on.
//!
//! `RUNLOG_RECORD_FIXTURES=1 cargo test -p runlog-cli --test costs` rewrites
//! fixtures/runs/agent-costs.jsonl.

mod common;

use common::{open, repo, request, runlog, text};
use runlog_core::usage::Spend;
use runlog_replay::Replay;
use serde_json::Value;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Child, Command};

fn serve(store: &Path) -> Child {
    common::serve_socket(store)
}

fn api(store: &Path, method: &str, path: &str, body: &str) -> (u16, Value) {
    let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, body) = request(&mut s, method, path, &[], body);
    let json = serde_json::from_str(&body)
        .unwrap_or_else(|e| panic!("{method} {path}: not JSON ({e}): {body}"));
    (status, json)
}

fn fixed(c: &mut Command) -> &mut Command {
    c.env("RUNLOG_TEST_CLOCK", "1700000000000")
}

/// The run recorded, its exit code and its store's directory.
fn record(dir: &Path) -> std::path::PathBuf {
    let store = dir.join("store");
    let out = fixed(&mut runlog(&store))
        .args([
            "run",
            "fixtures/workflows/agent-costs.toml",
            "--quiet",
            "--run-id",
            "agent-costs",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "paused: {}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("runlog budget agent-costs converge --max-cost-usd"),
        "the summary says how to go on: {said}"
    );
    if std::env::var_os("RUNLOG_RECORD_FIXTURES").is_some() {
        let path = repo().join("fixtures/runs/agent-costs.jsonl");
        let mut file = std::fs::File::create(&path).unwrap();
        runlog_replay::export::export(&open(&store), "agent-costs", &mut file).unwrap();
    }
    store
}

fn json(store: &Path, args: &[&str]) -> Value {
    let out = runlog(store).arg("--json").args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_owned();
    serde_json::from_str(&first).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

// What each command of the fixture used, by hand from `fixtures/workflows/bin/costly.sh` and
// the workflow's [prices] (USD per million tokens):
// plan, OpenAI Chat on gpt-4o: 10,000 fresh × 2.5 + 2,000 cached × 1.25 + 800 out × 10
const PLAN_USD: f64 = (10_000.0 * 2.5 + 2_000.0 * 1.25 + 800.0 * 10.0) / 1e6;
// build, Anthropic on claude-sonnet-4: 3,000 × 3 + 1,000 cache writes × 3.75 + 6,000 cache
// reads × 0.3 + 1,500 out × 15
const BUILD_USD: f64 = (3_000.0 * 3.0 + 1_000.0 * 3.75 + 6_000.0 * 0.3 + 1_500.0 * 15.0) / 1e6;
// build's evaluator, docs (OpenAI Responses) and review (Claude Code): costs reported
const JUDGE_USD: f64 = 0.0031;
const DOCS_USD: f64 = 0.0042;
const REVIEW_USD: f64 = 0.0123;
// converge: 0.02 reported per attempt; its budget of 0.05 is spent after the third
const CONVERGE_USD: f64 = 3.0 * 0.02;
// refactor: a Codex line in RUNLOG_USAGE naming no model: unpriced, never free
const TOTAL_USD: f64 = PLAN_USD + BUILD_USD + JUDGE_USD + DOCS_USD + REVIEW_USD + CONVERGE_USD;
const TOTAL_TOKENS: u64 = 12_800 + 11_500 + 2_300 + 5_900 + 4_700 + 24_885 + 3 * 1_100;

#[test]
fn costs_are_recorded_priced_bounded_and_reported_as_computed_by_hand() {
    let dir = tempfile::tempdir().unwrap();
    let store = record(dir.path());
    let cost = json(&store, &["cost", "agent-costs"]);
    let total = &cost["total"];
    assert!(
        close(total["cost_usd"].as_f64().unwrap(), TOTAL_USD),
        "{total}"
    );
    let tokens = &total["tokens"];
    assert_eq!(
        tokens["input"].as_u64().unwrap() + tokens["output"].as_u64().unwrap(),
        TOTAL_TOKENS
    );
    assert_eq!(
        total["unpriced"], 1,
        "the Codex line has no model and no cost"
    );
    let row = |key: &str| {
        cost["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == key)
            .unwrap_or_else(|| panic!("no row {key}: {cost}"))
            .clone()
    };
    assert!(close(row("plan")["cost_usd"].as_f64().unwrap(), PLAN_USD));
    assert!(close(
        row("build")["cost_usd"].as_f64().unwrap(),
        BUILD_USD + JUDGE_USD
    ));
    assert_eq!(row("build")["tokens"]["cache_write"], 1_000);
    assert_eq!(row("refactor")["unpriced"], 1);
    assert!(close(
        row("converge")["cost_usd"].as_f64().unwrap(),
        CONVERGE_USD
    ));

    let by_stage = json(&store, &["cost", "agent-costs", "--by", "stage"]);
    let evaluator = by_stage["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "evaluator")
        .unwrap();
    assert!(close(evaluator["cost_usd"].as_f64().unwrap(), JUDGE_USD));

    let m = &json(&store, &["metrics", "agent-costs"])["metrics"]["cost"];
    assert!(close(m["total"]["cost_usd"].as_f64().unwrap(), TOTAL_USD));
    assert_eq!(m["tasks_done"], 5);
    assert!(close(
        m["usd_per_task_done"].as_f64().unwrap(),
        TOTAL_USD / 5.0
    ));
    assert!(close(
        m["rescues_and_retries"]["cost_usd"].as_f64().unwrap(),
        2.0 * 0.02
    ));
    assert_eq!(
        m["by_model"]["gpt-4o"]["tokens"]["input"],
        12_000 + 3 * 1_000
    );
    assert_eq!(m["by_model"]["unknown"]["unpriced"], 1);

    let state = Replay::new(&open(&store))
        .head_state("agent-costs")
        .unwrap();
    let converge = state.task(&"converge".into()).unwrap();
    assert_eq!(converge.attempt, 3, "stopped where the budget was spent");
    let stop = converge.budget_stop.clone().expect("stopped by its budget");
    assert_eq!(stop.budget.as_ref().map(|t| t.as_str()), Some("converge"));
    assert!(converge
        .reason
        .as_deref()
        .unwrap()
        .starts_with("budget-spent:"));
    let audit = json(&store, &["audit", "agent-costs"]);
    let entry = &audit["audit"]["entries"][0];
    assert!(
        close(entry["cost"]["cost_usd"].as_f64().unwrap(), JUDGE_USD),
        "{entry}"
    );

    let status = runlog(&store)
        .args(["status", "agent-costs"])
        .output()
        .unwrap();
    let board = text(&status);
    assert!(board.contains("COST"), "{board}");
    assert!(
        board.contains(&runlog_core::usage::usd(TOTAL_USD)),
        "{board}"
    );
    assert!(
        board.contains("unpriced"),
        "refactor's cell says unpriced: {board}"
    );
    let problems = runlog(&store)
        .args(["log", "agent-costs", "--kind", "message-posted"])
        .output()
        .unwrap();
    assert!(
        text(&problems).contains("a usage line was not recorded: input_tokens is 1.5"),
        "{}",
        text(&problems)
    );
}

/// At every seq of the recorded run, the usage records sum to what `cost`, `status --json`,
/// `metrics` and the API answer.
#[test]
fn every_view_of_the_cost_agrees_with_the_records_at_every_seq() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let imported = runlog(&store)
        .args(["import"])
        .arg(repo().join("fixtures/runs/agent-costs.jsonl"))
        .output()
        .unwrap();
    assert!(imported.status.success(), "{}", text(&imported));
    // What the records say at each seq, and what `metrics` says, read in this process first;
    // then the server owns the store and the CLI and the API are asked.
    let expected: Vec<(u64, Spend, Spend)> = {
        let log = open(&store);
        let replay = Replay::new(&log);
        let head = replay.head_seq("agent-costs").unwrap();
        (1..=head)
            .map(|seq| {
                let state = replay.state_at("agent-costs", seq).unwrap();
                let mut records = Spend::default();
                for r in &state.usage {
                    records.add(&r.tokens, r.cost_usd);
                }
                let p = replay.project("agent-costs", Some(seq), None).unwrap();
                (seq, records, p.metrics.cost.total)
            })
            .collect()
    };
    let mut server = serve(&store);
    for (seq, records, metrics) in expected {
        let at = seq.to_string();
        let cli = json(&store, &["cost", "agent-costs", "--at", &at]);
        let board = json(&store, &["status", "agent-costs", "--at", &at]);
        let (_, api_cost) = api(
            &store,
            "GET",
            &format!("/v1/runs/agent-costs/cost?at={seq}"),
            "",
        );
        let (_, api_board) = api(&store, "GET", &format!("/v1/runs/agent-costs?at={seq}"), "");
        for (what, v) in [
            ("cost", &cli["total"]),
            ("status", &board["board"]["spend"]),
            ("api cost", &api_cost["total"]),
            ("api board", &api_board["board"]["spend"]),
        ] {
            assert!(
                close(v["cost_usd"].as_f64().unwrap(), records.cost_usd),
                "seq {seq}, {what}: {v} vs {records:?}"
            );
            assert_eq!(v["unpriced"], records.unpriced, "seq {seq}, {what}");
            assert_eq!(
                v["tokens"]["input"].as_u64().unwrap(),
                records.tokens.input,
                "seq {seq}, {what}"
            );
        }
        assert_eq!(metrics.tokens, records.tokens, "seq {seq}, metrics");
        assert!(
            close(metrics.cost_usd, records.cost_usd),
            "seq {seq}, metrics"
        );
    }
    // A budget raised through the API: recorded with who the socket's peer is.
    let (status, body) = api(
        &store,
        "POST",
        "/v1/runs/agent-costs/budget",
        r#"{"task": "converge", "max_cost_usd": 0.2}"#,
    );
    assert_eq!(status, 200, "{body}");
    let kinds: Vec<&str> = body["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["attributed", "budget-set", "task-reopened"],
        "{body}"
    );
    let (status, body) = api(
        &store,
        "POST",
        "/v1/runs/agent-costs/budget",
        r#"{"max_cost_usd": -1}"#,
    );
    assert_eq!(status, 400, "{body}");
    let (status, _) = api(
        &store,
        "POST",
        "/v1/runs/agent-costs/budget",
        r#"{"task": "converge"}"#,
    );
    assert_eq!(status, 400, "a body that changes nothing");
    let (status, body) = api(&store, "GET", "/v1/runs/agent-costs/cost?by=teams", "");
    assert_eq!(status, 400, "{body}");
    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    server.wait().unwrap();
}

#[test]
fn a_raised_budget_reopens_the_stopped_task_and_resume_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = record(dir.path());
    let raised = runlog(&store)
        .args([
            "budget",
            "agent-costs",
            "converge",
            "--max-cost-usd",
            "0.1",
            "--by",
            "ana",
        ])
        .output()
        .unwrap();
    assert!(raised.status.success(), "{}", text(&raised));
    let said = text(&raised);
    assert!(said.contains("budget set by ana: $0.1000"), "{said}");
    assert!(said.contains("converge reopened by ana"), "{said}");
    let resumed = fixed(&mut runlog(&store))
        .args(["resume", "agent-costs", "--quiet"])
        .output()
        .unwrap();
    assert_eq!(
        resumed.status.code(),
        Some(1),
        "paused again: {}",
        text(&resumed)
    );
    let state = Replay::new(&open(&store))
        .head_state("agent-costs")
        .unwrap();
    let converge = state.task(&"converge".into()).unwrap();
    assert_eq!(
        converge.attempt, 5,
        "two more paid attempts, up to the raised budget"
    );
    assert!((converge.spend.cost_usd - 0.1).abs() < 1e-9);
    // Refused input records nothing and says why.
    let refused = runlog(&store)
        .args(["budget", "agent-costs", "nope", "--max-tokens", "5"])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused).contains("no task nope"),
        "{}",
        text(&refused)
    );
}

/// A command's usage file holds only its own lines: the agent's appended lines are recorded
/// once, and the task's test command starts with the file absent or empty.
#[test]
fn each_command_starts_with_no_usage_of_the_one_before() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = common::workflow(
        dir.path(),
        "usage-file",
        r#"name = "usage-file"
[[task]]
id = "a"
run = "echo '{\"model\": \"gpt-4o\", \"usage\": {\"input_tokens\": 10, \"output_tokens\": 1}}' >> \"$RUNLOG_USAGE\""
test = "test ! -s \"$RUNLOG_USAGE\" && echo '{\"model\": \"gpt-4o\", \"usage\": {\"input_tokens\": 100, \"output_tokens\": 2}}' >> \"$RUNLOG_USAGE\""
"#,
    );
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--quiet", "--run-id", "u"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let log = open(&store);
    let state = Replay::new(&log).head_state("u").unwrap();
    let a = state.task(&"a".into()).unwrap();
    assert_eq!(a.spend.tokens.total(), 113, "{:?}", a.spend);
}
