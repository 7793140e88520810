//! A run whose workflow names a provider: its agent reaches the model through the runner's
//! gateway without being told anything but the environment every SDK reads, and each call is
//! in the run's history with its usage, cost, request and answer. The provider is scripted
//! here (no network); the runner, the agent (Python's standard library) and the store are real.

mod common;
use axum::body::Bytes;
use axum::http::HeaderMap;
use axum::response::IntoResponse;
use common::provider::{logged as events, serve};
use common::{open, runlog, text, workflow};
use std::sync::{Arc, Mutex};

const REAL_KEY: &str = "sk-ant-api03-the-runners-own-key-0123456789";

const ANSWER: &str = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-scripted","content":[{"type":"text","text":"a plan"}],"stop_reason":"end_turn","usage":{"input_tokens":100,"output_tokens":5}}"#;

const STREAM: &str = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_2\",\"model\":\"claude-scripted\",\"usage\":{\"input_tokens\":1200,\"output_tokens\":1}}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"written\"}}\n\n\
event: message_delta\n\
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":30}}\n\n\
event: message_stop\n\
data: {\"type\":\"message_stop\"}\n\n";

/// An agent written as people write them: the Anthropic API over HTTP with the base URL and
/// key from the environment; it notes the environment it was given.
const AGENT: &str = r#"
import json, os, urllib.request
with open("env-seen.txt", "w") as f:
    f.write("\n".join(f"{k}={v}" for k, v in sorted(os.environ.items())))
def call(body):
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
        data=json.dumps(body).encode(),
        headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
                 "content-type": "application/json"})
    return urllib.request.urlopen(request).read().decode()
print(json.loads(call({"model": "claude-x", "max_tokens": 64,
                       "messages": [{"role": "user", "content": "plan the change"}]}))["content"][0]["text"])
print(len(call({"model": "claude-x", "max_tokens": 64, "stream": True,
                "messages": [{"role": "user", "content": "write it"}]})), "bytes streamed")
# As Claude Code closes: what it says the calls cost.
print(json.dumps({"type": "result", "total_cost_usd": 0.5, "model": "claude-scripted",
                  "usage": {"input_tokens": 1300, "output_tokens": 35}}))
"#;

/// An agent that calls its model until it is refused, as an agent looping on a task does.
const LOOPING_AGENT: &str = r#"
import json, os, sys, urllib.error, urllib.request
for n in range(1, 11):
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
        data=json.dumps({"model": "claude-x", "max_tokens": 64,
                         "messages": [{"role": "user", "content": f"try {n}"}]}).encode(),
        headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
                 "content-type": "application/json"})
    try:
        urllib.request.urlopen(request).read()
    except urllib.error.HTTPError as e:
        print(f"call {n} refused: {e.code} {e.read().decode()}")
        sys.exit(1)
"#;

/// The scripted provider on its own runtime: its address, and the keys it was called with.
fn scripted_provider() -> (String, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let keys = seen.clone();
    let app = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let keys = keys.clone();
            async move {
                let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
                keys.lock()
                    .unwrap()
                    .push(key.unwrap_or_default().to_owned());
                let asked: serde_json::Value = serde_json::from_slice(&body).unwrap();
                if asked["stream"] == true {
                    ([("content-type", "text/event-stream")], STREAM).into_response()
                } else {
                    ([("content-type", "application/json")], ANSWER).into_response()
                }
            }
        }),
    );
    let url = serve(app);
    (url, seen)
}

/// Runs `agent` (Python) as the one task of workflow `name`, whose provider is the scripted
/// one and whose `[settings]` add `settings`, with the real key in the runner's environment:
/// the store, what `runlog run` did, and the keys the provider was called with.
fn run_against_the_provider(
    dir: &std::path::Path,
    name: &str,
    agent: &str,
    settings: &str,
    price: (f64, f64),
) -> (
    std::path::PathBuf,
    std::process::Output,
    Arc<Mutex<Vec<String>>>,
) {
    let store = dir.join("store");
    let (provider, seen) = scripted_provider();
    std::fs::write(dir.join("agent.py"), agent).unwrap();
    let wf = workflow(
        dir,
        name,
        &format!(
            "name = \"{name}\"\n[settings]\nworkspace = \"none\"\n{settings}\
             [[task]]\nid = \"{name}\"\nrun = \"python3 agent.py\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n\
             [prices.\"claude-scripted\"]\ninput = {:?}\noutput = {:?}\n",
            price.0, price.1
        ),
    );
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", name, "--quiet"])
        .env("ANTHROPIC_API_KEY", REAL_KEY)
        .output()
        .unwrap();
    (store, out, seen)
}

#[test]
fn an_agents_model_calls_go_through_the_gateway_into_the_history() {
    let dir = tempfile::tempdir().unwrap();
    let (store, out, seen) = run_against_the_provider(dir.path(), "calls", AGENT, "", (3.0, 15.0));
    assert!(out.status.success(), "{}", text(&out));

    // Each call is in the history, in order, with the usage the answer counted, priced.
    let calls = events(&store, "calls", &["--kind", "model-called"]);
    assert_eq!(calls.len(), 2, "{calls:?}");
    let (plain, streamed) = (&calls[0], &calls[1]);
    assert_eq!(
        (
            &plain["task"],
            &plain["attempt"],
            &plain["stage"],
            &plain["n"]
        ),
        (&"calls".into(), &1.into(), &"agent".into(), &1.into())
    );
    assert_eq!(
        (&plain["provider"], &plain["api"]),
        (&"anthropic".into(), &"messages".into())
    );
    assert_eq!(
        (&plain["status"], &plain["end"]["end"]),
        (&200.into(), &"answered".into())
    );
    assert_eq!(plain["model"], "claude-scripted", "the model that answered");
    assert_eq!(
        (&plain["tokens"]["input"], &plain["tokens"]["output"]),
        (&100.into(), &5.into())
    );
    assert_eq!(plain["cost"], "priced");
    assert_eq!(
        (&streamed["n"], &streamed["streamed"]),
        (&2.into(), &true.into())
    );
    assert_eq!(
        (&streamed["tokens"]["input"], &streamed["tokens"]["output"]),
        (&1200.into(), &30.into())
    );
    // 1,300 input tokens at $3 and 35 output at $15 a million.
    let cost = plain["cost_usd"].as_f64().unwrap() + streamed["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.004_425).abs() < 1e-9, "{calls:?}");

    // The request and the answer are kept, as they passed.
    let log_store = open(&store);
    let blob = |body: &serde_json::Value| {
        let hash = runlog_core::Hash::from_hex(body["blob"].as_str().unwrap()).unwrap();
        String::from_utf8(
            runlog_store::EventLog::get_blob(&log_store, &hash.0)
                .unwrap()
                .unwrap(),
        )
        .unwrap()
    };
    assert!(blob(&plain["request"]).contains("plan the change"));
    assert_eq!(blob(&plain["response"]), ANSWER);
    assert_eq!(
        blob(&streamed["response"]),
        STREAM,
        "the stream's events as they passed"
    );
    let whole: serde_json::Value = serde_json::from_str(&blob(&streamed["assembled"])).unwrap();
    assert_eq!(
        (&whole["id"], &whole["content"], &whole["stop_reason"]),
        (
            &"msg_2".into(),
            &serde_json::json!([{"type": "text", "text": "written"}]),
            &"end_turn".into()
        ),
        "the message the stream adds up to: {whole}"
    );
    assert!(
        plain["assembled"].is_null(),
        "an answer received whole is kept once"
    );
    drop(log_store);

    // The agent was given the gateway and a key of its own; the provider saw only the real key.
    let env = std::fs::read_to_string(dir.path().join("env-seen.txt")).unwrap();
    assert!(
        !env.contains(REAL_KEY),
        "the real key reached the agent: {env}"
    );
    assert!(
        env.contains("ANTHROPIC_BASE_URL=http://127.0.0.1:"),
        "{env}"
    );
    assert!(env.contains("ANTHROPIC_API_KEY=runlog-"), "{env}");
    assert!(env.contains("RUNLOG_GATEWAY=http://127.0.0.1:"), "{env}");
    assert_eq!(*seen.lock().unwrap(), vec![REAL_KEY; 2]);

    // A person reads the conversation behind the task's work.
    let show = runlog(&store)
        .args(["show", "calls", "calls", "--calls"])
        .output()
        .unwrap();
    assert!(show.status.success(), "{}", text(&show));
    let show = String::from_utf8_lossy(&show.stdout);
    for line in [
        "task calls of run calls: 2 model calls, 1300 input and 35 output tokens, $0.0044",
        "attempt 1 agent call 1: anthropic messages claude-scripted: answered 200 in",
        "asked: plan the change",
        "answered: a plan",
        "attempt 1 agent call 2: anthropic messages claude-scripted, streamed: answered 200 in",
        "asked: write it",
        "answered: written",
    ] {
        assert!(show.contains(line), "{line:?} is not in:\n{show}");
    }
    let shown = runlog(&store)
        .args([
            "--json",
            "show",
            "calls",
            "calls",
            "--calls",
            "--attempt",
            "2",
        ])
        .output()
        .unwrap();
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(
        shown["calls"].as_array().unwrap().len(),
        0,
        "attempt 2 made none: {shown}"
    );

    // What the agent printed it used is its claim, beside the measure, not counted again.
    let claimed = runlog(&store)
        .args(["log", "calls", "--kind", "usage-claimed"])
        .output()
        .unwrap();
    let claimed = String::from_utf8_lossy(&claimed.stdout);
    assert!(
        claimed.contains("calls attempt 1 agent says it used 1300 input and 35 output tokens on claude-scripted: $0.5000 (reported): its claim, beside the calls the gateway measured"),
        "{claimed}"
    );

    // The run's cost is the calls'.
    let cost = runlog(&store)
        .args(["--json", "cost", "calls"])
        .output()
        .unwrap();
    assert!(cost.status.success(), "{}", text(&cost));
    let cost: serde_json::Value = serde_json::from_str(
        String::from_utf8_lossy(&cost.stdout)
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    assert!(
        (cost["total"]["cost_usd"].as_f64().unwrap() - 0.004_425).abs() < 1e-9,
        "{cost}"
    );
    // Call by call: the streamed one cost the most.
    let by_call = runlog(&store)
        .args(["cost", "calls", "--by", "call"])
        .output()
        .unwrap();
    let by_call = String::from_utf8_lossy(&by_call.stdout);
    for row in ["calls#1 agent call 1", "calls#1 agent call 2"] {
        assert!(by_call.contains(row), "{row:?} is not in:\n{by_call}");
    }
    assert!(
        by_call.contains("$0.0004") && by_call.contains("$0.0040"),
        "{by_call}"
    );
}

/// The environment a one-task run's command was given, with `settings` in its workflow and
/// `key` (if any) as the runner's `ANTHROPIC_API_KEY`.
fn environment_given(settings: &str, key: Option<&str>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = workflow(
        dir.path(),
        "plain",
        &format!(
            "name = \"plain\"\n[settings]\nworkspace = \"none\"\n{settings}\
             [[task]]\nid = \"a\"\nrun = \"env > env-seen.txt\"\nrequires_testing = false\n"
        ),
    );
    let mut run = runlog(&store);
    run.args(["run", wf.to_str().unwrap(), "--run-id", "plain", "--quiet"])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    if let Some(key) = key {
        run.env("ANTHROPIC_API_KEY", key);
    }
    let out = run.output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    std::fs::read_to_string(dir.path().join("env-seen.txt")).unwrap()
}

#[test]
fn a_providers_key_in_the_runners_environment_turns_the_gateway_on_unless_it_is_off() {
    // Nothing said, a key held: on, to the public provider, the key kept in the runner.
    let env = environment_given("", Some(REAL_KEY));
    assert!(!env.contains(REAL_KEY), "{env}");
    assert!(env.contains("ANTHROPIC_API_KEY=runlog-"), "{env}");
    assert!(env.contains("RUNLOG_GATEWAY=http://127.0.0.1:"), "{env}");
    // `gateway = "off"`: the environment as it is.
    let env = environment_given("gateway = \"off\"\n", Some(REAL_KEY));
    assert!(
        env.contains(&format!("ANTHROPIC_API_KEY={REAL_KEY}")),
        "{env}"
    );
    assert!(!env.contains("RUNLOG_GATEWAY"), "{env}");
    // No key and nothing said: nothing to guard, no gateway.
    let env = environment_given("", None);
    assert!(
        !env.contains("RUNLOG_GATEWAY") && !env.contains("ANTHROPIC_API_KEY"),
        "{env}"
    );
}

#[test]
fn a_call_whose_worst_case_does_not_fit_what_is_left_is_refused_before_it_spends() {
    let dir = tempfile::tempdir().unwrap();
    // At $1 and $100 a million, a call's worst case (its 91 bytes and the provider's allowance
    // of 1,024 as input tokens, its max_tokens of 64 as output) is $0.0075; each answer counts
    // 100 and 5 tokens: $0.0006. Before call k, $0.0006 × (k - 1) is spent: calls 1 to 5 fit
    // the $0.01, call 6 does not, and with nothing in flight nothing will free room for it.
    let (store, out, seen) = run_against_the_provider(
        dir.path(),
        "looping",
        LOOPING_AGENT,
        "max_cost_usd = 0.01\n",
        (1.0, 100.0),
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert_eq!(
        seen.lock().unwrap().len(),
        5,
        "the provider saw the five calls that fit, and no other in any attempt"
    );
    let events = events(&store, "looping", &[]);
    let calls: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| e["type"] == "model-called" && e["attempt"] == 1)
        .collect();
    assert_eq!(calls.len(), 6, "{events:?}");
    assert_eq!(calls[5]["end"]["end"], "over-budget", "{:?}", calls[5]);
    let words = calls[5]["end"]["spent"].as_str().unwrap();
    assert!(
        words.contains(
            "this call could cost up to $0.0075, and the run's cost budget of $0.0100 has $0.0070 left ($0.0030 spent"
        ),
        "{words}"
    );
    // Each call that went had its worst case held first, and spent and held together never
    // passed the budget at any event.
    let reserved = events
        .iter()
        .filter(|e| e["type"] == "model-call-reserved")
        .count();
    assert_eq!(reserved, 5, "{events:?}");
    let (mut spent, mut held) = (0.0f64, Vec::<(u64, f64)>::new());
    for e in &events {
        if e["type"] == "model-call-reserved" {
            held.push((e["n"].as_u64().unwrap(), e["cost_usd"].as_f64().unwrap()));
        }
        if e["type"] == "model-called" {
            held.retain(|(n, _)| Some(*n) != e["n"].as_u64());
            spent += e["cost_usd"].as_f64().unwrap_or(0.0);
        }
        let holding: f64 = held.iter().map(|(_, usd)| usd).sum();
        assert!(spent + holding <= 0.01 + 1e-9, "{spent} + {holding} at {e}");
    }
    // The agent was told, in Anthropic's shape, which budget and how to raise it.
    let told = events
        .iter()
        .find(|e| e["type"] == "output-recorded" && e["stream"] == "agent.stdout")
        .map(|e| e["text"].as_str().unwrap_or_default().to_owned())
        .unwrap_or_default();
    assert!(told.contains("call 6 refused: 402"), "{told}");
    assert!(
        told.contains("billing_error") && told.contains("runlog budget looping --max-cost-usd USD"),
        "{told}"
    );
    // Its next attempt would make the same call: the task stops there, as a spent budget stops
    // it, until the budget is raised.
    let failed = events.iter().find(|e| e["type"] == "task-failed").unwrap();
    assert_eq!(
        failed["reason"],
        "budget-spent: $0.0070 left of the run's budget could not cover its last call (up to $0.0075)",
        "{failed}"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| e["type"] == "task-started")
            .count(),
        1,
        "no attempt was started to be refused again"
    );
}

#[test]
fn the_replanners_calls_are_charged_to_the_task_that_asked_for_it_and_reserved_under_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let (provider, _) = scripted_provider();
    // The replanner asks the model, then keeps the plan as it is.
    let replan = r#"
import json, os, sys, urllib.request
board = sys.stdin.read()
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    data=json.dumps({"model": "claude-x", "max_tokens": 64,
                     "messages": [{"role": "user", "content": "revise: " + board[:100]}]}).encode(),
    headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
             "content-type": "application/json"})
urllib.request.urlopen(request).read()
print(json.dumps({"cancel": [], "reason": "keep the plan"}))
"#;
    std::fs::write(dir.path().join("replan.py"), replan).unwrap();
    // `d` is destructive and shares its file with `p`: its end asks for a replan.
    let wf = workflow(
        dir.path(),
        "re",
        &format!(
            "name = \"re\"\n[settings]\nworkspace = \"none\"\nreplan = \"python3 replan.py\"\n\
             max_cost_usd = 5.0\n\
             [[task]]\nid = \"d\"\nrun = \"true\"\nfiles = [\"f.py\"]\ndestructive = true\nrequires_testing = false\n\
             [[task]]\nid = \"p\"\nrun = \"true\"\nfiles = [\"f.py\"]\nafter = [\"d\"]\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n\
             [prices.\"claude-scripted\"]\ninput = 3.0\noutput = 15.0\n"
        ),
    );
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "re", "--quiet"])
        .env("ANTHROPIC_API_KEY", REAL_KEY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let calls = events(&store, "re", &["--kind", "model-called"]);
    assert!(!calls.is_empty(), "the replanner's call is recorded");
    for call in &calls {
        assert_eq!(
            (&call["task"], &call["stage"]),
            (&"d".into(), &"replanner".into()),
            "{call}"
        );
    }
    // Under the run's budget, its worst case was held before it left, like an agent's.
    let reserved = events(&store, "re", &["--kind", "model-call-reserved"]);
    assert_eq!(reserved.len(), calls.len(), "{reserved:?}");
    assert!(
        reserved.iter().all(|r| r["stage"] == "replanner"),
        "{reserved:?}"
    );
}

/// An agent that makes one call, says it has the answer, and waits to be killed.
const ANSWERED_THEN_WAITS: &str = r#"
import json, os, time, urllib.request
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    data=json.dumps({"model": "claude-x", "max_tokens": 64,
                     "messages": [{"role": "user", "content": "before the crash"}]}).encode(),
    headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
             "content-type": "application/json"})
answer = urllib.request.urlopen(request).read().decode()
with open("../agent.pid", "w") as f:
    f.write(str(os.getpid()))
with open("../answered.txt", "w") as f:
    f.write(answer)
time.sleep(60)
"#;

#[test]
fn a_call_the_agent_was_answered_is_in_the_log_after_a_kill_9_of_the_runner() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let store = dir.path().join("store");
    let (provider, _) = scripted_provider();
    std::fs::write(work.join("agent.py"), ANSWERED_THEN_WAITS).unwrap();
    let wf = workflow(
        &work,
        "crash",
        &format!(
            "name = \"crash\"\n[settings]\nworkspace = \"none\"\n\
             [[task]]\nid = \"a\"\nrun = \"python3 agent.py\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n"
        ),
    );
    let mut runner = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "crash", "--quiet"])
        .env("ANTHROPIC_API_KEY", REAL_KEY)
        .current_dir(&work)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for(|| dir.path().join("answered.txt").exists());
    runner.kill().unwrap();
    runner.wait().unwrap();
    if let Ok(pid) = std::fs::read_to_string(dir.path().join("agent.pid")) {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .status();
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("answered.txt")).unwrap(),
        ANSWER,
        "the agent had the whole answer"
    );
    let calls = events(&store, "crash", &["--kind", "model-called"]);
    assert_eq!(calls.len(), 1, "the answered call is in the log: {calls:?}");
    assert_eq!(
        (&calls[0]["status"], &calls[0]["end"]["end"]),
        (&200.into(), &"answered".into())
    );
}

#[test]
fn a_forgotten_run_takes_its_conversations_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let (store, out, _) = run_against_the_provider(dir.path(), "calls", AGENT, "", (3.0, 15.0));
    assert!(out.status.success(), "{}", text(&out));
    let holding = |needle: &str| runlog_store::testkit::files_holding(&store, needle.as_bytes());
    // Each call's request and answer are in the store, in blobs of their own.
    let blob_area = runlog_store::blob_dir::BlobDir::new(&store);
    let bodies: Vec<[u8; 32]> = events(&store, "calls", &["--kind", "model-called"])
        .iter()
        .flat_map(|call| ["request", "response"].map(|b| call[b]["blob"].clone()))
        .map(|hex| {
            runlog_core::Hash::from_hex(hex.as_str().unwrap())
                .unwrap()
                .0
        })
        .collect();
    assert_eq!(bodies.len(), 4);
    for hash in &bodies {
        assert!(blob_area.file(hash).is_some());
    }
    let forgot = runlog(&store)
        .args(["forget", "calls", "--reason", "a test"])
        .output()
        .unwrap();
    assert!(forgot.status.success(), "{}", text(&forgot));
    for hash in &bodies {
        assert_eq!(blob_area.file(hash), None);
    }
    for needle in ["plan the change", "\"text\":\"a plan\"", "write it"] {
        assert_eq!(
            holding(needle),
            Vec::<std::path::PathBuf>::new(),
            "{needle}"
        );
    }
}

#[test]
fn an_exported_run_carries_its_conversations_to_another_store() {
    let dir = tempfile::tempdir().unwrap();
    let (store, out, _) = run_against_the_provider(dir.path(), "calls", AGENT, "", (3.0, 15.0));
    assert!(out.status.success(), "{}", text(&out));
    let export = dir.path().join("calls.jsonl");
    let exported = runlog(&store)
        .args(["export", "calls", "-o", export.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(exported.status.success(), "{}", text(&exported));

    let elsewhere = dir.path().join("elsewhere");
    let imported = runlog(&elsewhere)
        .args(["import", export.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(imported.status.success(), "{}", text(&imported));
    assert!(
        text(&imported).contains("same as the export"),
        "{}",
        text(&imported)
    );
    let show = runlog(&elsewhere)
        .args(["show", "calls", "calls", "--calls"])
        .output()
        .unwrap();
    let show = String::from_utf8_lossy(&show.stdout);
    for line in [
        "asked: plan the change",
        "answered: a plan",
        "answered: written",
    ] {
        assert!(show.contains(line), "{line:?} is not in:\n{show}");
    }

    // A blob changed in the file is refused, and nothing is imported.
    let text_of = std::fs::read_to_string(&export).unwrap();
    let changed: String = text_of
        .lines()
        .map(|l| {
            if l.starts_with("{\"blob\"") {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["base64"] = "YW5vdGhlciBwcm9tcHQ=".into();
                v.to_string()
            } else {
                l.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&export, changed).unwrap();
    let third = dir.path().join("third");
    let refused = runlog(&third)
        .args(["import", export.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused));
    assert!(
        text(&refused).contains("does not match its hash"),
        "{}",
        text(&refused)
    );
}

/// An agent making `N` calls one after the other (`N` its first argument), `PAUSE` seconds
/// apart (its second), each on a connection of its own to the gateway.
const CALLING_AGENT: &str = r#"
import json, os, sys, time, urllib.request
n, pause = int(sys.argv[1]), float(sys.argv[2])
for i in range(n):
    request = urllib.request.Request(
        os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
        data=json.dumps({"model": "claude-x", "max_tokens": 64,
                         "messages": [{"role": "user", "content": f"call {i}"}]}).encode(),
        headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
                 "content-type": "application/json"})
    json.loads(urllib.request.urlopen(request).read())
    time.sleep(pause)
print(n, "answered")
"#;

/// The agent of [`CALLING_AGENT`] as the one task of run `name`, its provider at `provider`.
fn calls_through(
    dir: &std::path::Path,
    name: &str,
    provider: &str,
    n: u32,
    pause: f64,
) -> std::path::PathBuf {
    let store = dir.join("store");
    std::fs::write(dir.join("calls.py"), CALLING_AGENT).unwrap();
    let wf = workflow(
        dir,
        name,
        &format!(
            "name = \"{name}\"\n[settings]\nworkspace = \"none\"\n\
             [[task]]\nid = \"{name}\"\nrun = \"python3 calls.py {n} {pause}\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n"
        ),
    );
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", name, "--quiet"])
        .env("ANTHROPIC_API_KEY", REAL_KEY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let answered = events(&store, name, &["--kind", "model-called"])
        .iter()
        .filter(|c| c["status"] == 200)
        .count();
    assert_eq!(answered, n as usize, "every call answered and recorded");
    store
}

#[test]
fn the_gateway_keeps_its_connection_to_the_provider_across_a_thousand_calls() {
    let (provider, connections) = common::provider::serve_counted(axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(|| async { ([("content-type", "application/json")], ANSWER) }),
    ));
    let dir = tempfile::tempdir().unwrap();
    calls_through(dir.path(), "kept", &provider, 1000, 0.0);
    assert_eq!(
        connections.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "1,000 calls, one after the other, over one connection"
    );
}

/// A provider that closes a connection left idle for 50 ms, as providers and their load
/// balancers do: its address and the connections it accepted.
fn closing_provider() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = accepted.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::spawn(move || {
                stream
                    .set_read_timeout(Some(std::time::Duration::from_millis(50)))
                    .unwrap();
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                loop {
                    let mut length = 0usize;
                    let mut line = String::new();
                    // Idle past the timeout, or closed: the connection ends here.
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    while line.trim_end() != "" {
                        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                            length = v.trim().parse().unwrap();
                        }
                        line.clear();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err() {
                        return;
                    }
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{ANSWER}",
                        ANSWER.len()
                    );
                    if writer.write_all(answer.as_bytes()).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (url, accepted)
}

#[test]
fn a_provider_that_closes_idle_connections_is_reached_again_without_an_error() {
    let (provider, accepted) = closing_provider();
    let dir = tempfile::tempdir().unwrap();
    // Five calls 200 ms apart: each finds its kept connection closed by the provider.
    calls_through(dir.path(), "closing", &provider, 5, 0.2);
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 5);
}
