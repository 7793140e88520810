//! `runlog experiment`: recorded runs executed again under variants, compared with the
//! recording. The agent is a small Python program that asks a model through the gateway for
//! its task's answer and writes it; the task's test checks the answer; the judge asks a model
//! for a score. The model is scripted and its answer depends on the model asked: `gpt-big`
//! always writes good answers, `gpt-small` breaks task `b`, `gpt-coin` gives each task's second
//! answer bad (a flaky model); the
//! judge gives 0.9 under the lenient rubric and 0.5 under the strict one. The figures the
//! report prints are checked against statsmodels and scipy.

mod common;
use axum::body::Bytes;
use common::provider::serve;
use common::{runlog, text};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const KEY: &str = "sk-proj-the-runners-own-openai-key-0123456789";

const AGENT: &str = r#"
import json, os, sys, urllib.request, time
task, out = sys.argv[1], sys.argv[2]
time.sleep(float(os.environ.get("AGENT_SLEEP", "0")))
body = json.dumps({"model": "gpt-big", "messages": [{"role": "user", "content": "write the answer of task " + task}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
    headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
answer = json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"]
open(out, "w").write(answer)
"#;

const JUDGE: &str = r#"
import json, os, sys, urllib.request
answer = open(sys.argv[2]).read()
body = json.dumps({"model": "gpt-judge", "messages": [{"role": "user", "content": "judge under the " + sys.argv[1] + " rubric: " + answer}]}).encode()
request = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
    headers={"authorization": "Bearer " + os.environ["OPENAI_API_KEY"], "content-type": "application/json"})
print(json.load(urllib.request.urlopen(request))["choices"][0]["message"]["content"])
"#;

/// Every call the scripted model was asked: (model, what was asked).
type Asked = Arc<Mutex<Vec<(String, String)>>>;

fn scripted_model() -> (String, Asked) {
    let asked: Asked = Arc::default();
    let seen = asked.clone();
    let coin = Arc::new(Mutex::new(std::collections::HashMap::<String, u32>::new()));
    let app = axum::Router::new().fallback(move |body: Bytes| {
        let seen = seen.clone();
        let coin = coin.clone();
        async move {
            let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let model = req["model"].as_str().unwrap_or("").to_owned();
            let said = req["messages"].to_string();
            seen.lock().unwrap().push((model.clone(), said.clone()));
            let content = if said.contains("strict rubric") {
                json!({"score": 0.5}).to_string()
            } else if said.contains("rubric") {
                json!({"score": 0.9}).to_string()
            } else if model == "gpt-small" && said.contains("task b") {
                "bad".to_owned()
            } else if model == "gpt-coin" {
                // Each task's second answer of three is bad: the same task, another outcome.
                let mut flips = coin.lock().unwrap();
                let n = flips.entry(said.clone()).or_insert(0_u32);
                *n += 1;
                if *n % 3 == 2 { "bad" } else { "good" }.to_owned()
            } else {
                "good".to_owned()
            };
            axum::Json(json!({"id": "chatcmpl-1", "object": "chat.completion",
                "created": 1_700_000_000, "model": model,
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}]}))
        }
    });
    (serve(app), asked)
}

/// A directory with the agent, the judge and a workflow of tasks `a`, `b`, `c`, each answered
/// by the agent, tested (`grep good`) and judged under the lenient rubric. Each run writes its
/// answers to files of its own: reruns executed at once must not read each other's.
fn project(dir: &Path, provider: &str) -> PathBuf {
    std::fs::write(dir.join("agent.py"), AGENT).unwrap();
    std::fs::write(dir.join("judge.py"), JUDGE).unwrap();
    let d = dir.display();
    let mut toml = format!(
        "name = \"answers\"\n[settings]\nworkspace = \"none\"\neval_threshold = 0.7\n\
         max_test_retries = 0\nmax_eval_rescues = 0\n\
         [providers.openai]\nkind = \"openai\"\nbase_url = \"{provider}\"\n\
         [prices.\"gpt-big\"]\ninput = 3.0\noutput = 15.0\n\
         [prices.\"gpt-small\"]\ninput = 1.0\noutput = 5.0\n\
         [prices.\"gpt-coin\"]\ninput = 1.0\noutput = 5.0\n\
         [prices.\"gpt-judge\"]\ninput = 1.0\noutput = 5.0\n"
    );
    for id in ["a", "b", "c"] {
        toml.push_str(&format!(
            "[[task]]\nid = \"{id}\"\nrun = \"python3 {d}/agent.py {id} {d}/answer-$RUNLOG_RUN-{id}.txt\"\n\
             test = \"grep -q good {d}/answer-$RUNLOG_RUN-{id}.txt\"\n\
             eval = \"python3 {d}/judge.py lenient {d}/answer-$RUNLOG_RUN-{id}.txt\"\n"
        ));
    }
    let path = dir.join("wf.toml");
    std::fs::write(&path, toml).unwrap();
    path
}

fn with_key(store: &Path) -> std::process::Command {
    let mut c = runlog(store);
    c.env("OPENAI_API_KEY", KEY);
    c
}

/// `n` recorded runs of the workflow, `night-1`…; the store.
fn recorded(dir: &Path, wf: &Path, n: usize) -> PathBuf {
    let store = dir.join("store");
    for i in 1..=n {
        let out = with_key(&store)
            .args([
                "run",
                wf.to_str().unwrap(),
                "--run-id",
                &format!("night-{i}"),
                "--quiet",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    store
}

fn variant(dir: &Path, name: &str, toml: &str) -> String {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml).unwrap();
    format!("{name}={}", path.display())
}

fn experiment(store: &Path, args: &[&str]) -> std::process::Output {
    with_key(store)
        .args(["experiment"])
        .args(args)
        .output()
        .unwrap()
}

fn report(store: &Path, name: &str) -> Value {
    let out = runlog(store)
        .args(["--json", "experiment", "show", name])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn figures<'a>(report: &'a Value, variant: &str) -> &'a Value {
    report["figures"]["variants"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == variant)
        .unwrap()
}

/// What statsmodels and scipy say: Wilson's interval of k of n, and the sign test's p-value.
fn independent(k: u32, n: u32, fixed: u32, broken: u32) -> (f64, f64, f64) {
    let program = format!(
        "from statsmodels.stats.proportion import proportion_confint\n\
         from scipy.stats import binomtest\n\
         lo, hi = proportion_confint({k}, {n}, alpha=0.05, method='wilson')\n\
         n = {}\n\
         print(lo, hi, binomtest({fixed}, n, 0.5).pvalue if n else 1.0)\n",
        fixed + broken
    );
    let out = std::process::Command::new("python3")
        .args(["-c", &program])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "this test checks the report against statsmodels and scipy, which python3 cannot import here \
         (.ci/run installs them into the pytest venv: `pip install scipy statsmodels` and put that venv's bin on PATH): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    (got[0], got[1], got[2])
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-9
}

#[test]
fn a_smaller_model_breaks_one_task_in_three_and_the_report_names_it_with_its_statistics() {
    let tmp = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let store = recorded(tmp.path(), &wf, 3);
    let before = asked.lock().unwrap().len();
    let small = variant(
        tmp.path(),
        "small",
        "[gateway.models]\n\"gpt-big\" = \"gpt-small\"\n",
    );
    let out = experiment(
        &store,
        &[
            "run",
            "downsize",
            "--runs",
            "night-1,night-2,night-3",
            "--variant",
            &small,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("broken night-1/b: runlog diff night-1 downsize.small.night-1.1"),
        "{said}"
    );
    // Every agent call went live to the model mapped; no call asked for gpt-big.
    let live: Vec<(String, String)> = asked.lock().unwrap()[before..].to_vec();
    let agents: Vec<&(String, String)> =
        live.iter().filter(|(_, s)| !s.contains("rubric")).collect();
    assert_eq!(agents.len(), 9, "{live:?}");
    assert!(agents.iter().all(|(m, _)| m == "gpt-small"), "{live:?}");

    let r = report(&store, "downsize");
    let base = figures(&r, "base");
    let v = figures(&r, "small");
    assert_eq!(
        (
            base["pass_rate"]["k"].as_u64(),
            base["pass_rate"]["n"].as_u64()
        ),
        (Some(9), Some(9))
    );
    assert_eq!(
        (v["pass_rate"]["k"].as_u64(), v["pass_rate"]["n"].as_u64()),
        (Some(6), Some(9))
    );
    let broken: Vec<String> = v["broken"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}/{}",
                f["run"].as_str().unwrap(),
                f["task"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(broken, ["night-1/b", "night-2/b", "night-3/b"]);
    if common::scipy_found() {
        let (lo, hi, p) = independent(6, 9, 0, 3);
        assert!(
            close(&v["pass_rate"]["low"], lo) && close(&v["pass_rate"]["high"], hi),
            "{v} vs {lo} {hi}"
        );
        assert!(close(&v["sign_test_p"], p), "{v} vs {p}");
        let (lo, hi, _) = independent(9, 9, 0, 0);
        assert!(close(&base["pass_rate"]["low"], lo) && close(&base["pass_rate"]["high"], hi));
    }
    // The judge's calls were answered from the recording where they asked the same.
    assert!(v["totals"]["recorded_calls"].as_u64().unwrap() >= 6, "{v}");

    // The gate: worse on pass rate, so exit 1 naming the criterion.
    let gate = runlog(&store)
        .args([
            "experiment",
            "gate",
            "downsize",
            "--max-pass-rate-drop",
            "0.02",
        ])
        .output()
        .unwrap();
    assert_eq!(gate.status.code(), Some(1), "{}", text(&gate));
    assert!(
        text(&gate).contains("small --max-pass-rate-drop"),
        "{}",
        text(&gate)
    );
    let lenient = runlog(&store)
        .args([
            "experiment",
            "gate",
            "downsize",
            "--max-pass-rate-drop",
            "0.5",
        ])
        .output()
        .unwrap();
    assert_eq!(lenient.status.code(), Some(0), "{}", text(&lenient));

    // The reruns are runs with the experiment in their lineage; the register is not a run.
    let runs = runlog(&store).args(["--json", "runs"]).output().unwrap();
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    let names: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["run"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.iter().all(|n| !n.starts_with('.')));
    let listed = runlog(&store)
        .args(["--json", "experiments"])
        .output()
        .unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["name"], "downsize");
    assert_eq!(listed[0]["progress"]["ended"], 3);

    // The API answers with the very bytes of --json.
    let mut server = common::serve_socket(&store);
    let shown = runlog(&store)
        .args(["--json", "experiment", "show", "downsize"])
        .output()
        .unwrap();
    let mut socket = std::os::unix::net::UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, body) = common::request(&mut socket, "GET", "/v1/experiments/downsize", &[], "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body.trim_end(),
        String::from_utf8_lossy(&shown.stdout).trim_end()
    );
    let mut socket = std::os::unix::net::UnixStream::connect(store.join("api.sock")).unwrap();
    let (status, body) = common::request(&mut socket, "GET", "/v1/experiments/nope", &[], "");
    assert_eq!(status, 404, "{body}");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_judge_only_variant_pays_for_the_judge_alone_and_an_equal_variant_passes_the_gate() {
    let tmp = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let store = recorded(tmp.path(), &wf, 2);
    let before = asked.lock().unwrap().len();
    let d = tmp.path().display();
    let strict = variant(
        tmp.path(),
        "strict",
        &format!("[all]\neval = \"python3 {d}/judge.py strict {d}/answer-$RUNLOG_RUN-$RUNLOG_TASK.txt\"\n"),
    );
    let same = variant(tmp.path(), "same", "");
    let out = experiment(
        &store,
        &[
            "run",
            "rejudge",
            "--runs",
            "night-1,night-2",
            "--variant",
            &strict,
            "--variant",
            &same,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let live: Vec<(String, String)> = asked.lock().unwrap()[before..].to_vec();
    assert!(!live.is_empty());
    assert!(
        live.iter()
            .all(|(m, s)| m == "gpt-judge" && s.contains("strict rubric")),
        "{live:?}"
    );
    let r = report(&store, "rejudge");
    let v = figures(&r, "strict");
    assert_eq!(v["judge_passed"]["k"], 0, "{v}");
    assert_eq!(v["broken"].as_array().unwrap().len(), 6);
    assert!(v["totals"]["saved_usd"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(
        figures(&r, "same")["totals"]["live_usd"].as_f64(),
        Some(0.0)
    );
    let gate = runlog(&store)
        .args([
            "experiment",
            "gate",
            "rejudge",
            "--variant",
            "same",
            "--max-pass-rate-drop",
            "0",
            "--max-cost-ratio",
            "1.0",
        ])
        .output()
        .unwrap();
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate));
}

fn listed(store: &Path) -> Value {
    let out = runlog(store)
        .args(["--json", "experiments"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn repeats_tell_a_flaky_model_from_a_change() {
    let tmp = tempfile::tempdir().unwrap();
    let (provider, _) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let store = recorded(tmp.path(), &wf, 1);
    let coin = variant(
        tmp.path(),
        "coin",
        "[gateway.models]\n\"gpt-big\" = \"gpt-coin\"\n",
    );
    let out = experiment(
        &store,
        &[
            "run",
            "noise",
            "--runs",
            "night-1",
            "--variant",
            &coin,
            "--repeat",
            "3",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report(&store, "noise");
    assert_eq!(r["progress"]["total"], 6, "base and coin, three times each");
    let base = figures(&r, "base");
    // The recording and its three live repeats, all done.
    assert_eq!(
        (
            base["pass_rate"]["k"].as_u64(),
            base["pass_rate"]["n"].as_u64()
        ),
        (Some(12), Some(12))
    );
    assert_eq!(base["flaky"].as_array().unwrap().len(), 0);
    let coin = figures(&r, "coin");
    assert_eq!(
        coin["flaky"],
        json!(["night-1/a", "night-1/b", "night-1/c"]),
        "{coin}"
    );
    // Most of each task's repeats passed: flaky, not broken.
    assert_eq!(coin["broken"].as_array().unwrap().len(), 0);
    let row = &r["figures"]["tasks"][0];
    assert_eq!(row["cells"][1]["done"]["k"], 2);
    assert_eq!(row["cells"][1]["done"]["n"], 3);
}

#[test]
fn an_experiment_killed_mid_way_resumes_without_executing_a_finished_rerun_again() {
    let tmp = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let store = recorded(tmp.path(), &wf, 3);
    let small = variant(
        tmp.path(),
        "small",
        "[gateway.models]\n\"gpt-big\" = \"gpt-small\"\n",
    );
    let before = asked.lock().unwrap().len();
    let mut child = with_key(&store)
        .env("AGENT_SLEEP", "0.5")
        .args([
            "experiment",
            "run",
            "cut",
            "--runs",
            "night-1,night-2,night-3",
            "--variant",
            &small,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for(|| {
        let l = listed(&store);
        l[0]["progress"]["ended"].as_u64().unwrap_or(0) >= 1
    });
    // Into the second rerun, then kill -9.
    std::thread::sleep(std::time::Duration::from_millis(400));
    child.kill().unwrap();
    child.wait().unwrap();
    let at_kill = listed(&store)[0]["progress"].clone();
    assert!(at_kill["ended"].as_u64().unwrap() < 3, "{at_kill}");
    let out = experiment(&store, &["resume", "cut"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report(&store, "cut");
    assert_eq!(r["progress"]["ended"], 3);
    assert_eq!(r["progress"]["total"], 3);
    let v = figures(&r, "small");
    assert_eq!(
        (v["pass_rate"]["k"].as_u64(), v["pass_rate"]["n"].as_u64()),
        (Some(6), Some(9))
    );
    assert_eq!(v["broken"].as_array().unwrap().len(), 3);
    // Each rerun once: three reruns beside the three runs, each task's agent asked at most once
    // more than the work needs (an attempt cut off by the kill runs again).
    let runs = runlog(&store).args(["--json", "runs"]).output().unwrap();
    let runs: Value = serde_json::from_slice(&runs.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 6, "{runs}");
    let agents = asked.lock().unwrap()[before..]
        .iter()
        .filter(|(m, _)| m == "gpt-small")
        .count();
    assert!(
        (9..=10).contains(&agents),
        "{agents} agent calls for 9 tasks"
    );
}

#[test]
fn bad_input_is_refused_by_name_and_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (provider, _) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let store = recorded(tmp.path(), &wf, 1);
    let cases: Vec<(String, Vec<String>, &str)> = vec![
        (
            variant(tmp.path(), "field", "[all]\nmodel = \"x\"\n"),
            vec![],
            "unknown field `model`",
        ),
        (
            variant(tmp.path(), "task", "[task.zzz]\neval = \"true\"\n"),
            vec![],
            "no run of the suite has",
        ),
        (
            variant(
                tmp.path(),
                "model",
                "[gateway.models]\n\"gpt-huge\" = \"gpt-small\"\n",
            ),
            vec![],
            "maps gpt-huge, which no call of the suite asked",
        ),
        (
            variant(tmp.path(), "ok", ""),
            vec!["--since".into(), "2099-01-01".into()],
            "no recorded run that has ended matches",
        ),
        (
            variant(tmp.path(), "ok", ""),
            vec!["--runs".into(), "nope".into()],
            "no run nope",
        ),
    ];
    for (v, suite, says) in cases {
        let suite = if suite.is_empty() {
            vec!["--runs".to_owned(), "night-1".to_owned()]
        } else {
            suite
        };
        let mut args = vec![
            "run".to_owned(),
            "trial".to_owned(),
            "--variant".to_owned(),
            v,
        ];
        args.extend(suite);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = experiment(&store, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
        assert_eq!(listed(&store), json!([]));
    }
    let ok = variant(tmp.path(), "ok", "");
    let out = experiment(
        &store,
        &["run", "trial", "--runs", "night-1", "--variant", &ok],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let again = experiment(
        &store,
        &["run", "trial", "--runs", "night-1", "--variant", &ok],
    );
    assert_eq!(again.status.code(), Some(2), "{}", text(&again));
    assert!(
        text(&again).contains("an experiment has it already"),
        "{}",
        text(&again)
    );
    let unknown = runlog(&store)
        .args(["experiment", "show", "nope"])
        .output()
        .unwrap();
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown).contains("runlog experiments"),
        "{}",
        text(&unknown)
    );
    assert_eq!(listed(&store).as_array().unwrap().len(), 1);
}

#[test]
fn an_experiment_posted_to_the_api_is_executed_by_the_server() {
    let tmp = tempfile::tempdir().unwrap();
    let (provider, _) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let store = recorded(tmp.path(), &wf, 2);
    let same = tmp.path().join("same.toml");
    std::fs::write(&same, "").unwrap();
    let mut server = common::serve_socket(&store);
    let post = |body: &str| {
        let mut socket = std::os::unix::net::UnixStream::connect(store.join("api.sock")).unwrap();
        common::request(
            &mut socket,
            "POST",
            "/v1/experiments",
            &[("content-type", "application/json")],
            body,
        )
    };
    let (status, body) = post(
        r#"{"name": "api-trial", "runs": ["night-1"], "variants": {"x": "/no/such/file.toml"}}"#,
    );
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("cannot read it"), "{body}");
    let asked =
        json!({"name": "api-trial", "runs": ["night-1", "night-2"], "variants": {"same": same}});
    let (status, body) = post(&asked.to_string());
    assert_eq!(status, 201, "{body}");
    let started: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(started["reruns"], 2);
    common::wait_for(|| listed(&store)[0]["progress"]["ended"] == 2);
    let r = report(&store, "api-trial");
    let v = figures(&r, "same");
    assert_eq!(
        (v["pass_rate"]["k"].as_u64(), v["pass_rate"]["n"].as_u64()),
        (Some(6), Some(6))
    );
    assert_eq!(v["totals"]["live_usd"].as_f64(), Some(0.0));
    let (status, _) = post(&asked.to_string());
    assert_eq!(status, 400, "the name is taken");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn workers_on_postgresql_share_one_experiment() {
    let Some(db) = runlog_store::postgres::scratch::scratch() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (provider, _) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let url = std::path::PathBuf::from(&db.url);
    // Each host with a local directory of its own, all on the one store.
    let on = |host: &str| {
        let mut c = with_key(&url);
        c.env("RUNLOG_LOCAL_DIR", tmp.path().join(host));
        c
    };
    for run in ["night-1", "night-2"] {
        let out = on("recorder")
            .args(["run", wf.to_str().unwrap(), "--run-id", run, "--quiet"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
    let small = variant(
        tmp.path(),
        "small",
        "[gateway.models]\n\"gpt-big\" = \"gpt-small\"\n",
    );
    let mut helper = on("helper")
        .env("AGENT_SLEEP", "0.3")
        .args(["worker", "--name", "helper", "--jobs", "4"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = on("lead")
        .env("AGENT_SLEEP", "0.3")
        .args([
            "experiment",
            "run",
            "shared",
            "--runs",
            "night-1,night-2",
            "--variant",
            &small,
            "--jobs",
            "2",
        ])
        .output()
        .unwrap();
    helper.kill().unwrap();
    helper.wait().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report(&url, "shared");
    assert_eq!(r["progress"]["ended"], 2);
    let v = figures(&r, "small");
    assert_eq!(
        (v["pass_rate"]["k"].as_u64(), v["pass_rate"]["n"].as_u64()),
        (Some(4), Some(6))
    );
    // The reruns' attempts were claimed by the experiment's own process and by the helper.
    let mut claimed = std::collections::BTreeSet::new();
    for rerun in ["shared.small.night-1.1", "shared.small.night-2.1"] {
        for e in common::provider::logged(&url, rerun, &["--kind", "worker-claimed"]) {
            claimed.insert(e["worker"].as_str().unwrap().to_owned());
        }
    }
    assert!(
        claimed.contains("helper") && claimed.len() >= 2,
        "{claimed:?}"
    );
}

#[test]
fn a_suite_file_picks_runs_and_tasks_a_run_the_variant_does_not_fit_is_skipped_and_a_budget_stops_it(
) {
    let tmp = tempfile::tempdir().unwrap();
    let (provider, _) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let store = recorded(tmp.path(), &wf, 2);
    // A run of another workflow, with task a alone.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let only_a = project(&other, &provider);
    let text_a = std::fs::read_to_string(&only_a).unwrap();
    let cut = text_a.find("[[task]]\nid = \"b\"").unwrap();
    std::fs::write(&only_a, &text_a[..cut]).unwrap();
    let out = with_key(&store)
        .args([
            "run",
            only_a.to_str().unwrap(),
            "--run-id",
            "lone",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let suite = tmp.path().join("suite.toml");
    std::fs::write(
        &suite,
        "[[run]]\nid = \"night-1\"\ntasks = [\"b\"]\n[[run]]\nid = \"night-2\"\n[[run]]\nid = \"lone\"\n",
    )
    .unwrap();
    let b_small = variant(
        tmp.path(),
        "bsmall",
        "[gateway.models]\n\"gpt-big\" = \"gpt-small\"\n[task.b]\ndescription = \"the second\"\n",
    );
    // A budget the first rerun's live calls spend: the experiment stops, saying how to go on.
    let out = experiment(
        &store,
        &[
            "run",
            "picked",
            "--suite",
            suite.to_str().unwrap(),
            "--variant",
            &b_small,
            "--max-cost-usd",
            "0.000001",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("skipped: lone under bsmall: it has no task b"),
        "{said}"
    );
    assert!(
        said.contains("stopped at its budget")
            && said.contains("experiment resume picked --max-cost-usd"),
        "{said}"
    );
    assert_eq!(listed(&store)[0]["progress"]["ended"], 1);
    let out = experiment(&store, &["resume", "picked", "--max-cost-usd", "10"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = report(&store, "picked");
    assert_eq!(r["progress"]["total"], 2, "lone is skipped");
    assert_eq!(r["max_cost_usd"], 10.0);
    assert_eq!(r["skipped"][0]["reason"], "it has no task b");
    // night-1 with task b alone; night-2 whole; lone's task a under base only.
    let rows: Vec<String> = r["figures"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            format!(
                "{}/{}",
                t["run"].as_str().unwrap(),
                t["task"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(
        rows,
        ["night-1/b", "night-2/a", "night-2/b", "night-2/c", "lone/a"]
    );
    let v = figures(&r, "bsmall");
    assert_eq!(
        (v["pass_rate"]["k"].as_u64(), v["pass_rate"]["n"].as_u64()),
        (Some(2), Some(4))
    );
}

#[test]
fn a_suite_run_forgotten_later_is_named_gone_and_its_reruns_are_not_awaited() {
    let tmp = tempfile::tempdir().unwrap();
    let (provider, _) = scripted_model();
    let wf = project(tmp.path(), &provider);
    let store = recorded(tmp.path(), &wf, 2);
    let same = variant(tmp.path(), "same", "");
    let out = experiment(
        &store,
        &[
            "run",
            "kept",
            "--runs",
            "night-1,night-2",
            "--variant",
            &same,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // A run goes with its forks: the rerun too.
    let forgot = runlog(&store)
        .args([
            "forget",
            "night-1",
            "kept.same.night-1.1",
            "--reason",
            "retention",
        ])
        .output()
        .unwrap();
    assert_eq!(forgot.status.code(), Some(0), "{}", text(&forgot));
    let r = report(&store, "kept");
    assert_eq!(r["suite"][0]["gone"], true);
    assert_eq!(r["suite"][1]["gone"], false);
    assert_eq!(
        (
            r["progress"]["ended"].as_u64(),
            r["progress"]["total"].as_u64()
        ),
        (Some(1), Some(1))
    );
    let shown = runlog(&store)
        .args(["experiment", "show", "kept"])
        .output()
        .unwrap();
    assert!(
        text(&shown).contains("run night-1 is no longer in the store"),
        "{}",
        text(&shown)
    );
    let resumed = experiment(&store, &["resume", "kept"]);
    assert_eq!(resumed.status.code(), Some(0), "{}", text(&resumed));
    let gate = runlog(&store)
        .args(["experiment", "gate", "kept", "--max-pass-rate-drop", "0"])
        .output()
        .unwrap();
    assert_eq!(gate.status.code(), Some(0), "{}", text(&gate));
}
