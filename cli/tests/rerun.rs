//! `runlog rerun`: a recorded run executed again, its agents, tests and evaluators real
//! processes, each model call answered from the recording while it asks what the recorded call
//! asked. The agent here is a small Python program speaking Chat Completions through the
//! gateway: it runs the task's check, tells the model what it printed (with the time, which the
//! comparison leaves out), and writes the model's last answer to a file. The judge asks the
//! model for a score under a rubric. The model is scripted and numbers its answers, so an
//! answer given again from the recording is told apart from a new one.

mod common;
use axum::body::Bytes;
use common::provider::{logged, serve};
use common::{runlog, text};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

const KEY: &str = "sk-proj-the-runners-own-openai-key-0123456789";

const AGENT: &str = r#"
import datetime, json, os, subprocess, sys, urllib.request
check = subprocess.run(["sh", sys.argv[1]], capture_output=True, text=True).stdout
def ask(messages):
    body = json.dumps({"model": "gpt-scripted", "messages": messages}).encode()
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
        headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
    return json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"]
messages = [{"role": "user", "content": "make the check pass (asked at " + datetime.datetime.now().isoformat() + ")"}]
first = ask(messages)
messages += [{"role": "assistant", "content": first}, {"role": "user", "content": "the check says:\n" + check}]
open(sys.argv[2], "w").write(ask(messages))
"#;

const JUDGE: &str = r#"
import json, os, sys, urllib.request
answer = open(sys.argv[2]).read()
body = json.dumps({"model": "gpt-scripted", "messages": [{"role": "user", "content": "judge under the " + sys.argv[1] + " rubric: " + answer}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
    headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
print(json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"])
"#;

/// The scripted model: a judge's question is answered with a score (0.9 under the lenient
/// rubric, 0.5 under the strict one); any other with `answer N`, N counting its calls.
fn scripted_model() -> (String, Arc<AtomicU32>) {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let app = axum::Router::new().fallback(move |body: Bytes| {
        let counted = counted.clone();
        async move {
            let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
            let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let text = asked["messages"].to_string();
            let content = if text.contains("strict rubric") {
                json!({"score": 0.5}).to_string()
            } else if text.contains("rubric") {
                json!({"score": 0.9}).to_string()
            } else {
                format!("answer {n}")
            };
            axum::Json(
                json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion",
                "created": 1_700_000_000 + n, "model": "gpt-scripted",
                "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55},
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}]}),
            )
        }
    });
    (serve(app), calls)
}

/// A directory with the agent, the judge, a check printing `check`, and a workflow of the
/// tasks `ids`, each an agent writing `answer-ID.txt` judged under `rubric`.
fn project(dir: &Path, provider: &str, ids: &[&str], rubric: &str, check: &str) -> PathBuf {
    std::fs::write(dir.join("agent.py"), AGENT).unwrap();
    std::fs::write(dir.join("judge.py"), JUDGE).unwrap();
    std::fs::write(dir.join("check.sh"), format!("echo '{check}'\n")).unwrap();
    workflow_file(dir, "wf.toml", provider, ids, rubric)
}

fn workflow_file(dir: &Path, name: &str, provider: &str, ids: &[&str], rubric: &str) -> PathBuf {
    let d = dir.display();
    let mut toml = format!(
        "name = \"fix\"\n[settings]\nworkspace = \"none\"\neval_threshold = 0.7\n\
         [providers.openai]\nkind = \"openai\"\nbase_url = \"{provider}\"\n\
         [prices.\"gpt-scripted\"]\ninput = 2.0\noutput = 8.0\n"
    );
    for id in ids {
        toml.push_str(&format!(
            "[[task]]\nid = \"{id}\"\nrun = \"python3 {d}/agent.py {d}/check.sh {d}/answer-{id}.txt\"\n\
             eval = \"python3 {d}/judge.py {rubric} {d}/answer-{id}.txt\"\nrequires_testing = false\n\
             retry = {{ max = 1 }}\n"
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, toml).unwrap();
    path
}

fn runlog_with_key(store: &Path) -> std::process::Command {
    let mut c = runlog(store);
    c.env("OPENAI_API_KEY", KEY);
    c
}

fn original(dir: &Path, wf: &Path, run: &str) -> PathBuf {
    let store = dir.join("store");
    let out = runlog_with_key(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", run, "--quiet"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    store
}

fn rerun(store: &Path, args: &[&str]) -> std::process::Output {
    runlog_with_key(store)
        .args(["rerun", "--quiet"])
        .args(args)
        .output()
        .unwrap()
}

/// The run's events after seq `after` by name, with what names them apart from times, ids and
/// seqs.
fn story(store: &Path, run: &str, after: u64) -> Vec<String> {
    let from = (after + 1).to_string();
    logged(store, run, &["--from", &from])
        .iter()
        .filter(|e| {
            !["forked", "rerun-started", "run-resumed"].contains(&e["type"].as_str().unwrap_or(""))
        })
        .map(|e| {
            format!(
                "{} {} {}",
                e["type"].as_str().unwrap_or(""),
                e["task"].as_str().unwrap_or(""),
                e["score"]
            )
        })
        .collect()
}

fn calls_of(store: &Path, run: &str) -> Vec<Value> {
    logged(store, run, &["--kind", "model-called"])
}

#[test]
fn a_strict_rerun_reaches_no_provider_and_writes_what_the_run_wrote_twice() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let wf = project(dir.path(), &provider, &["implement"], "lenient", "0 failed");
    let store = original(dir.path(), &wf, "fix");
    assert_eq!(
        asked.load(Ordering::SeqCst),
        3,
        "two agent calls, one judge call"
    );
    let written = std::fs::read_to_string(dir.path().join("answer-implement.txt")).unwrap();
    assert_eq!(written, "answer 2");

    for (i, new) in ["fix-again", "fix-again-2"].iter().enumerate() {
        std::fs::remove_file(dir.path().join("answer-implement.txt")).unwrap();
        let out = rerun(&store, &["fix", "--as", new]);
        assert_eq!(out.status.code(), Some(0), "rerun {i}: {}", text(&out));
        assert_eq!(
            asked.load(Ordering::SeqCst),
            3,
            "the provider was not called again"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("answer-implement.txt")).unwrap(),
            written,
            "the recorded answer, not a new one"
        );
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.contains("3 calls from the recording ($0.00), 0 live ($0.0000)"),
            "{said}"
        );
        let rerun = &logged(&store, new, &["--kind", "rerun-started"])[0];
        let from = rerun["from_seq"].as_u64().unwrap();
        assert_eq!(
            story(&store, new, 0),
            story(&store, "fix", from),
            "the same events"
        );
        let calls = calls_of(&store, new);
        assert!(
            calls
                .iter()
                .all(|c| c["end"]["end"] == "replayed" && c["cost_usd"] == 0.0),
            "{calls:?}"
        );
    }
    // From a seq inside the attempt (after its first call): the attempt runs again from its
    // start, as the rerun's attempt 2, answered by the recording's attempt 1.
    let first_call = runlog(&store)
        .args(["--json", "log", "fix", "--kind", "model-called"])
        .output()
        .unwrap();
    let first_call: Value = serde_json::from_str(
        String::from_utf8_lossy(&first_call.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let at = first_call["seq"].as_u64().unwrap().to_string();
    let out = rerun(&store, &["fix", "--at", &at, "--as", "fix-inside"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        asked.load(Ordering::SeqCst),
        3,
        "the provider was not called again"
    );
    let started = logged(&store, "fix-inside", &["--kind", "task-started"]);
    assert_eq!(started.len(), 1, "{started:?}");
    assert_eq!(started[0]["attempt"], 2, "{started:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("3 calls from the recording"));

    // The rerun's lineage is kept: a fork of the run, from before its first attempt.
    let forked = logged(&store, "fix-again", &["--kind", "forked"]);
    assert_eq!(forked[0]["from_run"], "fix", "{forked:?}");
    let rerun = logged(&store, "fix-again", &["--kind", "rerun-started"]);
    assert_eq!(rerun[0]["answers"], "recorded", "{rerun:?}");
}

#[test]
fn a_changed_check_makes_the_rerun_diverge_at_the_call_that_carries_it_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let wf = project(dir.path(), &provider, &["implement"], "lenient", "0 failed");
    let store = original(dir.path(), &wf, "fix");
    std::fs::write(dir.path().join("check.sh"), "echo '2 failed'\n").unwrap();

    let out = rerun(&store, &["fix", "--as", "fix-strict"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the attempt stopped: {}",
        text(&out)
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        3,
        "a strict rerun reaches no provider"
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            r#"diverged: implement attempt 1, call 2: the user's message (message 3) differs: now "2 failed", was "0 failed""#
        ),
        "{said}"
    );
    let diverged = logged(&store, "fix-strict", &["--kind", "call-diverged"]);
    assert_eq!(diverged[0]["live"], false, "{diverged:?}");

    // Recorded, then live: the call that differs and the command's later ones go to the
    // provider, and are recorded as answered by it.
    let out = rerun(
        &store,
        &["fix", "--as", "fix-live", "--answers", "recorded-then-live"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(asked.load(Ordering::SeqCst), 5, "two calls went live");
    let ends: Vec<String> = calls_of(&store, "fix-live")
        .iter()
        .map(|c| c["end"]["end"].as_str().unwrap().to_owned())
        .collect();
    // The agent's second call carries the new check; the judge then reads a new answer.
    assert_eq!(ends, ["replayed", "answered", "answered"]);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("answer-implement.txt")).unwrap(),
        "answer 4"
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("1 calls from the recording ($0.00), 2 live ($0.0003)"),
        "{said}"
    );
}

#[test]
fn a_stricter_judge_flips_the_task_and_diff_and_audit_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let wf = project(dir.path(), &provider, &["implement"], "lenient", "0 failed");
    let store = original(dir.path(), &wf, "fix");
    let strict = workflow_file(
        dir.path(),
        "strict.toml",
        &provider,
        &["implement"],
        "strict",
    );

    let out = rerun(
        &store,
        &[
            "fix",
            "--as",
            "fix-strict",
            "--workflow",
            strict.to_str().unwrap(),
            "--answers",
            "recorded-then-live",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        asked.load(Ordering::SeqCst) > 3,
        "the new judge's calls went live"
    );
    let first_agent_call = &calls_of(&store, "fix-strict")[0];
    assert_eq!(
        first_agent_call["end"]["end"], "replayed",
        "the agent's inputs did not change"
    );

    let diff = runlog(&store)
        .args(["diff", "fix", "fix-strict"])
        .output()
        .unwrap();
    let said = text(&diff);
    assert!(
        said.contains("implement") && said.contains("score 0.9 → 0.5"),
        "{said}"
    );
    assert!(said.contains("calls from the recording"), "{said}");

    let audit = runlog(&store)
        .args(["audit", "fix", "--against", "fix-strict"])
        .output()
        .unwrap();
    let said = text(&audit);
    assert!(
        said.contains("0.9 pass") && said.contains("0.5 rescue"),
        "{said}"
    );
}

#[test]
fn one_task_reruns_and_the_other_three_are_carried_over_as_done() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let ids = ["a", "b", "c", "d"];
    let wf = project(dir.path(), &provider, &ids, "lenient", "0 failed");
    let store = original(dir.path(), &wf, "four");
    let before = asked.load(Ordering::SeqCst);

    let out = rerun(&store, &["four", "--task", "c", "--as", "four-c"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(asked.load(Ordering::SeqCst), before);
    let started: Vec<String> = logged(&store, "four-c", &["--kind", "task-started"])
        .iter()
        .map(|e| e["task"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(started, ["c"], "only c ran again");
    // Every task done: the three carried over with their one recorded attempt, c with its
    // second (its first was the recording's).
    let status = runlog(&store)
        .args(["--json", "status", "four-c"])
        .output()
        .unwrap();
    let board: Value = serde_json::from_slice(&status.stdout).unwrap();
    let rows: Vec<(String, String, u64)> = board["board"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
                r["attempt"].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, String, u64)> = ids
        .iter()
        .map(|id| {
            (
                id.to_string(),
                "done".to_owned(),
                if *id == "c" { 2 } else { 1 },
            )
        })
        .collect();
    assert_eq!(rows, want);
    let calls = calls_of(&store, "four-c");
    assert_eq!(
        calls.len(),
        3,
        "c's two agent calls and its judge's: {calls:?}"
    );
}

#[test]
fn a_rerun_that_cannot_be_answered_or_does_not_fit_is_refused_and_nothing_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, _) = scripted_model();
    let wf = project(dir.path(), &provider, &["implement"], "lenient", "0 failed");
    let store = original(dir.path(), &wf, "fix");

    // A run with no recorded calls: its gateway was off.
    let off = dir.path().join("off.toml");
    std::fs::write(
        &off,
        "name = \"off\"\n[settings]\nworkspace = \"none\"\ngateway = \"off\"\n[[task]]\nid = \"t\"\nrun = \"true\"\nrequires_testing = false\n",
    )
    .unwrap();
    let out = runlog(&store)
        .args(["run", off.to_str().unwrap(), "--run-id", "off", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let out = rerun(&store, &["off"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no recorded model calls"),
        "{}",
        text(&out)
    );

    // A workflow whose tasks are not the run's: named.
    let other = workflow_file(
        dir.path(),
        "other.toml",
        &provider,
        &["implement", "review"],
        "lenient",
    );
    let out = rerun(&store, &["fix", "--workflow", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("the run has no review"),
        "{}",
        text(&out)
    );

    // A task the run does not have.
    let out = rerun(&store, &["fix", "--task", "nope"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("has no task nope"), "{}", text(&out));

    // A forgotten run.
    let out = runlog(&store)
        .args(["forget", "fix", "--reason", "test"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let out = rerun(&store, &["fix"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("forgotten"), "{}", text(&out));

    let runs = runlog(&store).args(["--json", "runs"]).output().unwrap();
    let said = String::from_utf8_lossy(&runs.stdout);
    assert!(!said.contains("rerun"), "nothing recorded: {said}");
}

/// Asks two questions, in the order the file `order` gives (as an agent's background calls
/// may come in either order).
const TWO_QUESTIONS: &str = r#"
import json, os, sys, urllib.request
def ask(content):
    body = json.dumps({"model": "gpt-scripted", "messages": [{"role": "user", "content": content}]}).encode()
    request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
        headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
    return json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"]
for question in open(sys.argv[1]).read().split():
    print(question, ask(question))
"#;

#[test]
fn calls_asked_in_another_order_are_each_answered_by_the_call_that_asked_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let d = dir.path();
    std::fs::write(d.join("two.py"), TWO_QUESTIONS).unwrap();
    std::fs::write(d.join("order"), "title summary").unwrap();
    let wf = d.join("two.toml");
    std::fs::write(
        &wf,
        format!(
            "name = \"two\"\n[settings]\nworkspace = \"none\"\n\
             [providers.openai]\nkind = \"openai\"\nbase_url = \"{provider}\"\n\
             [[task]]\nid = \"t\"\nrun = \"python3 {0}/two.py {0}/order\"\nrequires_testing = false\n",
            d.display()
        ),
    )
    .unwrap();
    let store = original(d, &wf, "two");
    std::fs::write(d.join("order"), "summary title").unwrap();

    let out = rerun(&store, &["two", "--as", "two-again"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "no call reached the provider"
    );
    let seqs: Vec<u64> = calls_of(&store, "two-again")
        .iter()
        .map(|c| c["end"]["seq"].as_u64().unwrap())
        .collect();
    let recorded: Vec<u64> = runlog(&store)
        .args(["--json", "log", "two", "--kind", "model-called"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(|l| {
                    serde_json::from_str::<Value>(l).unwrap()["seq"]
                        .as_u64()
                        .unwrap()
                })
                .collect()
        })
        .unwrap();
    assert_eq!(
        seqs,
        [recorded[1], recorded[0]],
        "each by the call that asked the same"
    );
    let printed = logged(&store, "two-again", &["--kind", "output-recorded"]);
    let printed = printed[0]["text"].as_str().unwrap_or_default();
    assert!(
        printed.contains("summary answer 2") && printed.contains("title answer 1"),
        "{printed}"
    );
}
