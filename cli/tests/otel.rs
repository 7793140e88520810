//! A run as an OpenTelemetry trace, checked against the real thing: Arize Phoenix, installed by
//! `.ci/run` (`pip install arize-phoenix` into a venv) and started here on a free port. What it
//! stored is read back from its REST API (`GET /v1/projects/{project}/spans`):
//! - the quickstart run exported from history: one trace, every task and attempt with its
//!   parent and kind, the rescue's verdict; exported again: the same ids, nothing doubled;
//!   then rolled back and approved by a person, exported again: the verdict and the person's
//!   decision as Phoenix's own span annotations (LLM and HUMAN) on the attempt judged;
//! - a recorded run with usage: token counts and costs on the spans;
//! - a live run exported while it runs;
//! - Phoenix stopped in the middle of a live run: the run finishes, its summary says what was
//!   missed, and `export --otlp` fills it in;
//! - Phoenix as a hosted receiver is: HTTPS with a CA made here, a client certificate asked
//!   for (mutual TLS) and authentication on, an API key made through its own API: the trace
//!   arrives whole, gzipped or not, and a missing key, a wrong CA or no client certificate are
//!   each refused in words that name the fix; the key is in no output and no file of the store.
//!
//! Without Phoenix the receiver tests say SKIPPED and how to run them; `RUNLOG_REQUIRE_PHOENIX=1`
//! (set by `.ci/run`) makes that a failure. The trace's shape from `--format otlp-json` is
//! checked without Phoenix.

mod common;

use common::{repo, runlog, text, wait_for};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn import(store: &Path, fixture: &str) {
    let out = runlog(store)
        .arg("import")
        .arg(repo().join(format!("fixtures/runs/{fixture}.jsonl")))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

/// The trace of `run` as `export --format otlp-json` writes it: its spans.
fn otlp_json(store: &Path, run: &str) -> Vec<Value> {
    otlp_json_with(store, run, &[])
}

/// The same, exported with `extra` arguments.
fn otlp_json_with(store: &Path, run: &str, extra: &[&str]) -> Vec<Value> {
    let out = runlog(store)
        .args(["export", run, "--format", "otlp-json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
        .clone()
}

fn attr<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

/// The LLM spans of `run`'s trace, exported with `extra` arguments.
fn llm_spans(store: &Path, run: &str, extra: &[&str]) -> Vec<Value> {
    otlp_json_with(store, run, extra)
        .into_iter()
        .filter(|s| attr(s, "openinference.span.kind").unwrap()["stringValue"] == "LLM")
        .collect()
}

fn text_attr(span: &Value, key: &str) -> String {
    attr(span, key).map_or_else(String::new, |v| {
        v["stringValue"].as_str().unwrap_or_default().to_owned()
    })
}

#[test]
fn a_model_calls_messages_are_on_its_span_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "release-notes");
    let plain = llm_spans(&store, "release-notes", &[]);
    assert_eq!(plain.len(), 2);
    for span in &plain {
        for key in [
            "input.value",
            "output.value",
            "llm.input_messages.0.message.content",
        ] {
            assert_eq!(attr(span, key), None, "{key} without --content");
        }
    }
    let with = llm_spans(&store, "release-notes", &["--content"]);
    let (first, second) = (&with[0], &with[1]);
    assert!(text_attr(first, "input.value").contains("\"Which file holds the release notes?\""));
    assert_eq!(text_attr(first, "input.mime_type"), "application/json");
    assert_eq!(
        text_attr(first, "llm.input_messages.0.message.role"),
        "user"
    );
    assert_eq!(
        text_attr(first, "llm.input_messages.0.message.content"),
        "Which file holds the release notes?"
    );
    assert_eq!(
        text_attr(first, "llm.output_messages.0.message.content"),
        "CHANGELOG.md"
    );
    // A streamed answer, as the message it adds up to.
    let answer: Value = serde_json::from_str(&text_attr(second, "output.value")).unwrap();
    assert_eq!(
        answer["content"][0]["text"],
        "Every model call an agent makes is now in the run's history."
    );
    let said: Value = serde_json::from_str(&text_attr(second, "gen_ai.input.messages")).unwrap();
    assert_eq!(
        said[0]["parts"][0]["content"],
        "Write one line for CHANGELOG.md about the model gateway"
    );
    // Asked of a JSON-lines export, which carries the bodies already: refused, saying how.
    let out = runlog(&store)
        .args(["export", "release-notes", "--content"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("--format otlp-json --content"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_runs_trace_is_its_tree_of_tasks_and_attempts_with_the_same_ids_each_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "quickstart");
    let spans = otlp_json(&store, "quickstart");
    assert_eq!(
        spans,
        otlp_json(&store, "quickstart"),
        "exported twice: the same trace"
    );
    let traces: BTreeSet<&str> = spans
        .iter()
        .map(|s| s["traceId"].as_str().unwrap())
        .collect();
    assert_eq!(traces.len(), 1);
    let by_id: BTreeMap<&str, &Value> = spans
        .iter()
        .map(|s| (s["spanId"].as_str().unwrap(), s))
        .collect();
    let kind = |s: &Value| attr(s, "openinference.span.kind").unwrap()["stringValue"].clone();
    let parent_kind = |s: &Value| {
        by_id
            .get(s["parentSpanId"].as_str().unwrap())
            .map(|p| kind(p))
    };
    let count = |k: &str| spans.iter().filter(|s| kind(s) == k).count();
    // One run, four tasks and the run's six attempts: implement was rescued once.
    let roots: Vec<&&Value> = by_id.values().filter(|s| s["parentSpanId"] == "").collect();
    assert_eq!(roots.len(), 1);
    assert_eq!(
        roots[0]["name"],
        "invoke_workflow fixtures/workflows/quickstart.toml"
    );
    assert_eq!(count("AGENT"), 5, "plan, implement twice, docs, release");
    assert_eq!(count("TOOL"), 3);
    assert_eq!(count("EVALUATOR"), 3);
    for s in &spans {
        let expected = match kind(s).as_str().unwrap() {
            "AGENT" => Some("CHAIN"),
            "TOOL" | "EVALUATOR" => Some("AGENT"),
            _ => parent_kind(s).map(|_| "CHAIN"),
        };
        assert_eq!(
            parent_kind(s).as_ref().and_then(Value::as_str),
            expected,
            "{}",
            s["name"]
        );
    }
    // The rescue: the first attempt of implement failed the gate, its verdict on it.
    let implement: Vec<&Value> = spans
        .iter()
        .filter(|s| s["name"] == "invoke_agent agent-implement")
        .collect();
    assert_eq!(implement.len(), 2);
    let first = implement
        .iter()
        .find(|s| attr(s, "runlog.attempt").unwrap()["intValue"] == "1")
        .unwrap();
    assert_eq!(first["status"]["code"], 2, "a rescued attempt is an error");
    let verdict = first["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "gen_ai.evaluation.result")
        .unwrap();
    let label = verdict["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == "gen_ai.evaluation.score.label")
        .unwrap();
    assert_eq!(label["value"]["stringValue"], "rescue");
}

/// Arize Phoenix on a free loopback port, its data in a temporary directory, stopped when
/// dropped.
struct Phoenix {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn phoenix_bin() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("RUNLOG_PHOENIX").map(PathBuf::from),
        std::env::var_os("HOME")
            .map(|h| PathBuf::from(h).join(".cache/runlog-phoenix/bin/phoenix")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.exists());
    if found.is_none() {
        let why = "the OpenTelemetry receiver tests need Arize Phoenix \
                   (python3 -m venv ~/.cache/runlog-phoenix && ~/.cache/runlog-phoenix/bin/pip install arize-phoenix==20.26.1; \
                   bash .ci/run installs it; or point RUNLOG_PHOENIX at its `phoenix` command)";
        assert!(
            std::env::var_os("RUNLOG_REQUIRE_PHOENIX").is_none(),
            "{why}"
        );
        eprintln!("SKIPPED: {why}");
    }
    found
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let (status, body) = common::request(&mut s, "GET", path, &[], "");
    Some((status, body))
}

impl Phoenix {
    fn start(bin: &Path) -> Self {
        let p = Self::spawn(bin, &[]);
        p.wait_up(|port| get(port, "/healthz").is_some_and(|(s, _)| s == 200));
        p
    }

    /// Phoenix started with `env` beside its port and directory.
    fn spawn(bin: &Path, env: &[(&str, String)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let grpc = free_port();
        let child = Command::new(bin)
            .arg("serve")
            .current_dir(dir.path())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", grpc.to_string())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Phoenix {
            child,
            port,
            _dir: dir,
        }
    }

    /// Waits for `up(port)`, at most three minutes.
    fn wait_up(&self, up: impl Fn(u16) -> bool) {
        let port = self.port;
        let deadline = Instant::now() + Duration::from_secs(180);
        while !up(port) {
            assert!(
                Instant::now() < deadline,
                "Phoenix did not come up on port {port}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The spans Phoenix stored for `project`, by span id (waits until `want` are there).
    fn spans(&self, project: &str, want: usize) -> BTreeMap<String, Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mut all = BTreeMap::new();
            let mut cursor = String::new();
            loop {
                let path = format!("/v1/projects/{project}/spans?limit=1000{cursor}");
                let Some((200, body)) = get(self.port, &path) else {
                    break;
                };
                let v: Value = serde_json::from_str(&body).unwrap();
                for s in v["data"].as_array().unwrap() {
                    all.insert(
                        s["context"]["span_id"].as_str().unwrap().to_owned(),
                        s.clone(),
                    );
                }
                match v["next_cursor"].as_str() {
                    Some(c) => cursor = format!("&cursor={c}"),
                    None => break,
                }
            }
            if all.len() >= want || Instant::now() > deadline {
                return all;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The annotations Phoenix stored on `span` in `project` (waits until `want` are there:
    /// Phoenix inserts them after it has answered the request that sent them).
    fn annotations(&self, project: &str, span: &str, want: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let path = format!("/v1/projects/{project}/span_annotations?span_ids={span}");
            let found: Vec<Value> = match get(self.port, &path) {
                Some((200, body)) => serde_json::from_str::<Value>(&body).unwrap()["data"]
                    .as_array()
                    .unwrap()
                    .clone(),
                _ => Vec::new(),
            };
            if found.len() >= want || Instant::now() > deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

fn export_to(store: &Path, run: &str, url: &str, project: &str) -> String {
    let out = runlog(store)
        .args(["export", run, "--otlp", url, "--project", project])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    text(&out)
}

#[test]
fn phoenix_stores_runs_from_history_and_live_as_runlog_exports_them() {
    let Some(bin) = phoenix_bin() else { return };
    let phoenix = Phoenix::start(&bin);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");

    // From history: every span, with its parent and kind; again: the same ids, nothing doubled.
    import(&store, "quickstart");
    let expected = otlp_json(&store, "quickstart");
    let said = export_to(&store, "quickstart", &phoenix.url(), "quickstart");
    assert!(
        said.contains(&format!("exported {} spans", expected.len())),
        "{said}"
    );
    let stored = phoenix.spans("quickstart", expected.len());
    assert_eq!(stored.len(), expected.len(), "{:?}", stored.keys());
    for s in &expected {
        let got = &stored[s["spanId"].as_str().unwrap()];
        assert_eq!(got["context"]["trace_id"], s["traceId"]);
        assert_eq!(got["name"], s["name"]);
        let parent = s["parentSpanId"].as_str().unwrap();
        assert_eq!(
            got["parent_id"].as_str().unwrap_or(""),
            parent,
            "{}",
            s["name"]
        );
        let kind = attr(s, "openinference.span.kind").unwrap()["stringValue"].clone();
        assert_eq!(got["span_kind"], kind, "{}", s["name"]);
    }
    let rescued = stored
        .values()
        .find(|s| s["name"] == "invoke_agent agent-implement" && s["status_code"] == "ERROR")
        .expect("the rescued attempt, as an error");
    let verdict = rescued["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "gen_ai.evaluation.result")
        .unwrap();
    assert_eq!(
        verdict["attributes"]["gen_ai.evaluation.score.label"],
        "rescue"
    );
    assert_eq!(verdict["attributes"]["gen_ai.evaluation.score.value"], 0.55);
    export_to(&store, "quickstart", &phoenix.url(), "quickstart");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        phoenix.spans("quickstart", 0).len(),
        expected.len(),
        "exported again: the same ids"
    );

    // Verdicts and people's decisions as Phoenix's own annotations on the attempts' spans: the
    // evaluator as an LLM annotator, a person as a HUMAN one.
    for args in [
        &[
            "rollback",
            "quickstart",
            "--to",
            "20",
            "--reason",
            "the judge was wrong",
            "--by",
            "ana",
        ][..],
        &["approve", "quickstart", "implement", "--by", "ana"][..],
    ] {
        let out = runlog(&store).args(args).output().unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    let said = export_to(&store, "quickstart", &phoenix.url(), "quickstart");
    assert!(
        said.contains("annotated the attempts' spans with 4 verdicts and people's decisions"),
        "{said}"
    );
    let first_attempt = stored
        .iter()
        .find(|(_, s)| s["name"] == "invoke_agent agent-implement" && s["status_code"] == "ERROR")
        .map(|(id, _)| id.clone())
        .unwrap();
    let annotations = phoenix.annotations("quickstart", &first_attempt, 2);
    let by_name = |name: &str| {
        annotations
            .iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {annotations:?}"))
    };
    let judge = by_name("runlog verdict");
    assert_eq!(judge["annotator_kind"], "LLM");
    assert_eq!(judge["result"]["label"], "rescue");
    assert_eq!(judge["result"]["score"], 0.55);
    let person = by_name("runlog person");
    assert_eq!(person["annotator_kind"], "HUMAN");
    assert_eq!(person["result"]["label"], "approved");
    assert!(
        person["result"]["explanation"]
            .as_str()
            .unwrap()
            .starts_with("approved by ana"),
        "{person}"
    );

    // Usage: token counts and cost on each attempt, as Phoenix shows them.
    import(&store, "agent-costs");
    export_to(&store, "agent-costs", &phoenix.url(), "costs");
    let costs = phoenix.spans("costs", otlp_json(&store, "agent-costs").len());
    let plan = costs
        .values()
        .find(|s| s["name"] == "invoke_agent agent-plan")
        .unwrap();
    assert_eq!(plan["attributes"]["llm.token_count.prompt"], 12_000);
    assert_eq!(plan["attributes"]["llm.token_count.completion"], 800);
    assert_eq!(
        plan["attributes"]["gen_ai.usage.cache_read.input_tokens"],
        2_000
    );
    assert_eq!(plan["attributes"]["llm.model_name"], "gpt-4o");
    let judge = costs
        .values()
        .find(|s| s["span_kind"] == "EVALUATOR")
        .unwrap();
    assert_eq!(judge["attributes"]["llm.cost.total"], 0.0031);

    // A model call: an LLM span under its attempt, with the usage the provider returned.
    let out = common::emit(
        &store,
        "calls",
        r#"{"command":"start-run","run":"calls","tasks":[{"id":"a","requires_testing":false}]}
{"command":"start-task","task":"a","agent":null,"worktree":null}
{"command":"record-model-call","call":{"task":"a","attempt":1,"stage":"agent","n":1,"provider":"anthropic","api":"messages","model":"claude-scripted","streamed":true,"status":200,"end":{"end":"answered"},"first_byte_ms":30,"duration_ms":400,"tokens":{"input":12000,"output":350,"cache_read":0,"cache_write":0,"reasoning":0},"cost_usd":null,"cost":"unpriced","request":null,"response":null,"assembled":null,"error":null}}
"#,
    );
    assert!(out.status.success(), "{}", text(&out));
    export_to(&store, "calls", &phoenix.url(), "calls");
    let calls = phoenix.spans("calls", otlp_json(&store, "calls").len());
    let llm = calls
        .values()
        .find(|s| s["span_kind"] == "LLM")
        .unwrap_or_else(|| panic!("an LLM span: {calls:?}"));
    let attempt = calls.values().find(|s| s["span_kind"] == "AGENT").unwrap();
    assert_eq!(llm["parent_id"], attempt["context"]["span_id"]);
    assert_eq!(llm["name"], "chat claude-scripted");
    assert_eq!(llm["attributes"]["llm.token_count.prompt"], 12_000);
    assert_eq!(llm["attributes"]["llm.model_name"], "claude-scripted");

    // What the calls said, when asked: Phoenix shows the conversation of each.
    import(&store, "release-notes");
    let out = runlog(&store)
        .args(["export", "release-notes", "--otlp", &phoenix.url()])
        .args(["--project", "content", "--content"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let spans = phoenix.spans("content", otlp_json(&store, "release-notes").len());
    let asked: Vec<&Value> = spans.values().filter(|s| s["span_kind"] == "LLM").collect();
    assert_eq!(asked.len(), 2);
    let first = asked
        .iter()
        .find(|s| s["name"] == "chat claude-sonnet-4-5" && s["attributes"]["runlog.call"] == 1)
        .unwrap_or_else(|| panic!("{asked:?}"));
    assert!(
        first["attributes"]["input.value"]
            .as_str()
            .unwrap_or_default()
            .contains("Which file holds the release notes?"),
        "{first}"
    );
    let out_text = first["attributes"]["output.value"]
        .as_str()
        .unwrap_or_default();
    assert!(out_text.contains("CHANGELOG.md"), "{first}");

    // Live: the spans go as the run works, the same ones an export from history gives.
    let live = fixed(&mut runlog(&store))
        .args([
            "run",
            "fixtures/workflows/quickstart.toml",
            "--run-id",
            "live",
            "--quiet",
        ])
        .args(["--otlp", &phoenix.url(), "--otlp-project", "live"])
        .output()
        .unwrap();
    assert_eq!(live.status.code(), Some(0), "{}", text(&live));
    assert!(text(&live).contains("trace: "), "{}", text(&live));
    // Its verdicts went too, as annotations, once its spans were sent.
    assert!(
        text(&live).contains("verdicts as annotations"),
        "{}",
        text(&live)
    );
    let from_history = otlp_json(&store, "live");
    let stored = phoenix.spans("live", from_history.len());
    let ids: BTreeSet<&str> = from_history
        .iter()
        .map(|s| s["spanId"].as_str().unwrap())
        .collect();
    let got: BTreeSet<&str> = stored.keys().map(String::as_str).collect();
    assert_eq!(
        got, ids,
        "live export sent the trace an export from history gives"
    );
    let rescued = stored
        .iter()
        .find(|(_, s)| s["name"] == "invoke_agent agent-implement" && s["status_code"] == "ERROR")
        .map(|(id, _)| id.clone())
        .unwrap();
    let judged = phoenix.annotations("live", &rescued, 1);
    let verdict = judged
        .iter()
        .find(|a| a["name"] == "runlog verdict")
        .unwrap_or_else(|| panic!("{judged:?}"));
    assert_eq!(verdict["result"]["label"], "rescue", "{verdict}");

    // Live with what the calls said: an agent calling its model through the gateway.
    let provider = scripted_answers();
    std::fs::write(dir.path().join("agent.py"), CALLING_AGENT).unwrap();
    let wf = common::workflow(
        dir.path(),
        "said",
        &format!(
            "name = \"said\"\n[settings]\nworkspace = \"none\"\n\
             [[task]]\nid = \"ask\"\nrun = \"python3 agent.py\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n"
        ),
    );
    let said = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "said", "--quiet"])
        .args([
            "--otlp",
            &phoenix.url(),
            "--otlp-project",
            "said",
            "--otlp-content",
        ])
        .env("ANTHROPIC_API_KEY", "sk-ant-the-runners-own")
        .output()
        .unwrap();
    assert_eq!(said.status.code(), Some(0), "{}", text(&said));
    let spans = phoenix.spans("said", otlp_json(&store, "said").len());
    let llm = spans
        .values()
        .find(|s| s["span_kind"] == "LLM")
        .unwrap_or_else(|| panic!("an LLM span: {spans:?}"));
    assert!(
        llm["attributes"]["input.value"]
            .as_str()
            .unwrap_or_default()
            .contains("Which file holds the release notes?"),
        "{llm}"
    );

    // Phoenix stopped in the middle of a live run: the run finishes, says what it missed, and
    // an export from history fills the trace in.
    let mut phoenix = phoenix;
    let url = phoenix.url();
    let wf = slow_workflow(dir.path());
    let started = Instant::now();
    let run = fixed(&mut runlog(&store))
        .args(["run", wf.to_str().unwrap(), "--run-id", "cut", "--quiet"])
        .args(["--otlp", &url, "--otlp-project", "cut"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let _ = phoenix.child.kill();
    let _ = phoenix.child.wait();
    let out = run.wait_with_output().unwrap();
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("not exported"), "{said}");
    assert!(
        said.contains(&format!("runlog export cut --otlp {url}/v1/traces")),
        "{said}"
    );
    assert!(
        took < Duration::from_secs(12),
        "the run was held up: {took:?}"
    );
    drop(phoenix);
    let again = Phoenix::start(&bin);
    export_to(&store, "cut", &again.url(), "cut");
    let all = otlp_json(&store, "cut");
    assert_eq!(
        again.spans("cut", all.len()).len(),
        all.len(),
        "filled in from history"
    );
}

fn fixed(c: &mut Command) -> &mut Command {
    c.env("RUNLOG_TEST_CLOCK", "1700000000000")
}

/// Tasks that take a while, one after the other.
fn slow_workflow(dir: &Path) -> PathBuf {
    let path = dir.join("slow.toml");
    let mut toml = String::from("name = \"slow\"\n[settings]\nworkspace = \"none\"\njobs = 1\n");
    for i in 0..8 {
        toml.push_str(&format!("[[task]]\nid = \"t{i}\"\nrun = \"sleep 0.5\"\n"));
        if i > 0 {
            toml.push_str(&format!("after = [\"t{}\"]\n", i - 1));
        }
    }
    std::fs::write(&path, toml).unwrap();
    wait_for(|| path.exists());
    path
}

/// Phoenix as a hosted receiver: HTTPS, a client certificate asked for, authentication on.
struct Hosted {
    phoenix: Phoenix,
    ca: PathBuf,
    client: (PathBuf, PathBuf),
    /// An API key made through Phoenix's own API.
    key: String,
    _files: tempfile::TempDir,
}

/// curl over HTTPS to Phoenix with the client certificate: (status, body).
fn curl(h: &Hosted, args: &[&str], path: &str) -> (u16, String) {
    let url = format!("https://127.0.0.1:{}{path}", h.phoenix.port);
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "-w", "\n%{http_code}"])
        .arg("--cacert")
        .arg(&h.ca)
        .arg("--cert")
        .arg(&h.client.0)
        .arg("--key")
        .arg(&h.client.1)
        .args(args)
        .arg(url)
        .output()
        .expect("curl (apt-get install -y curl)");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, status) = said.rsplit_once('\n').unwrap_or(("", "0"));
    (status.trim().parse().unwrap_or(0), body.to_owned())
}

impl Hosted {
    fn start(bin: &Path) -> Self {
        let files = tempfile::tempdir().unwrap();
        let ca = common::tls::ca(files.path(), "phoenix-ca");
        let (cert, key) = common::tls::signed(&ca, files.path(), "phoenix", &["127.0.0.1"]);
        let client = common::tls::signed(&ca, files.path(), "client", &["runlog-client"]);
        let admin = "admin-secret-made-by-the-test-0123456789abcdef".to_owned();
        let path = |p: &Path| p.display().to_string();
        let phoenix = Phoenix::spawn(
            bin,
            &[
                ("PHOENIX_TLS_ENABLED", "true".into()),
                ("PHOENIX_TLS_CERT_FILE", path(&cert)),
                ("PHOENIX_TLS_KEY_FILE", path(&key)),
                ("PHOENIX_TLS_CA_FILE", path(&ca.cert)),
                ("PHOENIX_TLS_VERIFY_CLIENT", "true".into()),
                ("PHOENIX_ENABLE_AUTH", "true".into()),
                (
                    "PHOENIX_SECRET",
                    "a-jwt-secret-made-by-the-test-0123456789abcdef".into(),
                ),
                ("PHOENIX_ADMIN_SECRET", admin.clone()),
            ],
        );
        let mut h = Hosted {
            phoenix,
            ca: ca.cert.clone(),
            client,
            key: String::new(),
            _files: files,
        };
        h.phoenix.wait_up(|_| curl(&h, &[], "/healthz").0 == 200);
        // An API key, made as a person would: through Phoenix's API, as its admin.
        let bearer = format!("authorization: Bearer {admin}");
        let query =
            r#"{"query":"mutation { createSystemApiKey(input: {name: \"runlog\"}) { jwt } }"}"#;
        let (status, body) = curl(
            &h,
            &[
                "-H",
                &bearer,
                "-H",
                "content-type: application/json",
                "-d",
                query,
            ],
            "/graphql",
        );
        assert_eq!(status, 200, "{body}");
        let made: Value = serde_json::from_str(&body).unwrap();
        h.key = made["data"]["createSystemApiKey"]["jwt"]
            .as_str()
            .unwrap_or_else(|| panic!("{body}"))
            .to_owned();
        h
    }

    fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.phoenix.port)
    }

    /// How many spans Phoenix holds for `project` (waits for `want`, at most a minute).
    fn spans(&self, project: &str, want: usize) -> usize {
        let bearer = format!("authorization: Bearer {}", self.key);
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let path = format!("/v1/projects/{project}/spans?limit=1000");
            let (status, body) = curl(self, &["-H", &bearer], &path);
            let n = match status {
                200 => serde_json::from_str::<Value>(&body).unwrap()["data"]
                    .as_array()
                    .map_or(0, Vec::len),
                _ => 0,
            };
            if n >= want || Instant::now() > deadline {
                return n;
            }
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

/// Every file under `dir`, read whole.
fn every_file(dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            every_file(&path, out);
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
}

#[test]
fn a_hosted_receiver_over_https_with_a_key_and_a_client_certificate_gets_the_trace() {
    let Some(bin) = phoenix_bin() else { return };
    let h = Hosted::start(&bin);
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "quickstart");
    let expected = otlp_json(&store, "quickstart").len();
    let header = format!("authorization=Bearer {}", h.key);
    let ca = h.ca.display().to_string();
    let mut said = String::new();
    let export = |project: &str, extra: &[&str]| {
        let out = runlog(&store)
            .args([
                "export",
                "quickstart",
                "--otlp",
                &h.url(),
                "--project",
                project,
            ])
            .args(extra)
            .output()
            .unwrap();
        out
    };

    // The CA and the key given as flags; the client certificate as the standard variables say.
    let out = runlog(&store)
        .args([
            "export",
            "quickstart",
            "--otlp",
            &h.url(),
            "--project",
            "plain",
        ])
        .args(["--otlp-ca", &ca, "--otlp-header", &header])
        .env("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &h.client.0)
        .env("OTEL_EXPORTER_OTLP_CLIENT_KEY", &h.client.1)
        .output()
        .unwrap();
    said.push_str(&text(&out));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        h.spans("plain", expected),
        expected,
        "the whole trace arrived"
    );

    // Gzipped, the client certificate as flags: another run (Phoenix keeps a span once, by
    // its id, whatever the project).
    import(&store, "release-notes");
    let notes = otlp_json(&store, "release-notes").len();
    let (cert, key) = (
        h.client.0.display().to_string(),
        h.client.1.display().to_string(),
    );
    let client = [
        "--otlp-client-cert",
        cert.as_str(),
        "--otlp-client-key",
        key.as_str(),
    ];
    let out = runlog(&store)
        .args([
            "export",
            "release-notes",
            "--otlp",
            &h.url(),
            "--project",
            "gzipped",
        ])
        .args([
            "--otlp-ca",
            &ca,
            "--otlp-header",
            &header,
            "--otlp-compression",
            "gzip",
        ])
        .args(client)
        .output()
        .unwrap();
    said.push_str(&text(&out));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(h.spans("gzipped", notes), notes, "gzipped, whole");

    // Live, as a run goes: the same flags on `run`.
    let wf = common::workflow(
        dir.path(),
        "live",
        "name = \"live\"\n[settings]\nworkspace = \"none\"\n[[task]]\nid = \"t\"\nrun = \"true\"\nrequires_testing = false\n",
    );
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "live", "--quiet"])
        .args(["--otlp", &h.url(), "--otlp-project", "live"])
        .args(["--otlp-ca", &ca, "--otlp-header", &header])
        .args(client)
        .output()
        .unwrap();
    said.push_str(&text(&out));
    assert!(out.status.success(), "{}", text(&out));
    let live = otlp_json(&store, "live").len();
    assert!(
        text(&out).contains(&format!("trace: {live} spans sent")),
        "{}",
        text(&out)
    );
    assert_eq!(h.spans("live", live), live, "the live trace, whole");

    // No key: the 401, and the header to give.
    let out = export("refused", &[&["--otlp-ca", &ca][..], &client[..]].concat());
    let words = text(&out);
    said.push_str(&words);
    assert_eq!(out.status.code(), Some(1), "{words}");
    assert!(
        words.contains("answered 401") && words.contains("--otlp-header"),
        "{words}"
    );

    // Another CA: the certificate, and --otlp-ca.
    let other = common::tls::ca(dir.path(), "another-ca");
    let other = other.cert.display().to_string();
    let out = export(
        "refused",
        &[
            &["--otlp-ca", &other, "--otlp-header", &header][..],
            &client[..],
        ]
        .concat(),
    );
    let words = text(&out);
    said.push_str(&words);
    assert_eq!(out.status.code(), Some(1), "{words}");
    assert!(
        words.contains("invalid peer certificate") && words.contains("--otlp-ca"),
        "{words}"
    );

    // No client certificate: refused by the receiver, and the flags to give.
    let out = export("refused", &["--otlp-ca", &ca, "--otlp-header", &header]);
    let words = text(&out);
    said.push_str(&words);
    assert_eq!(out.status.code(), Some(1), "{words}");
    assert!(words.contains("--otlp-client-cert"), "{words}");

    // The key is a secret: in no output, no file of the store.
    assert!(!said.contains(&h.key), "the key was printed:\n{said}");
    let mut files = Vec::new();
    every_file(&store, &mut files);
    for (path, bytes) in files {
        let found = bytes.windows(h.key.len()).any(|w| w == h.key.as_bytes());
        assert!(!found, "the key is in {}", path.display());
    }
}

#[test]
fn an_experiment_exported_to_phoenix_reads_back_as_a_dataset_and_an_experiment_per_variant() {
    let Some(bin) = phoenix_bin() else { return };
    let phoenix = Phoenix::start(&bin);
    let dir = tempfile::tempdir().unwrap();
    let store = common::notes_experiment(dir.path());
    let out = runlog(&store)
        .args([
            "--json",
            "experiment",
            "export",
            "notes-check",
            "--phoenix",
            &phoenix.url(),
            "--dataset",
            "notes",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let sent: Value = serde_json::from_slice(&out.stdout).unwrap();
    let dataset = sent["dataset_id"].as_str().unwrap();
    let (status, body) = get(phoenix.port, &format!("/v1/datasets/{dataset}/examples")).unwrap();
    assert_eq!(status, 200, "{body}");
    let examples: Value = serde_json::from_str(&body).unwrap();
    let examples = examples["data"]["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 1);
    assert_eq!(
        examples[0]["input"],
        serde_json::json!({"run": "release-notes", "task": "notes"})
    );
    let (status, body) = get(phoenix.port, &format!("/v1/datasets/{dataset}/experiments")).unwrap();
    assert_eq!(status, 200, "{body}");
    let listed: Value = serde_json::from_str(&body).unwrap();
    let mut names: Vec<String> = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["base", "strict", "tested"]);
    // The strict variant's run: not done, evaluated so.
    let strict = sent["experiments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e[0] == "strict")
        .unwrap()[1]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, body) = get(phoenix.port, &format!("/v1/experiments/{strict}/json")).unwrap();
    assert_eq!(status, 200, "{body}");
    let records: Value = serde_json::from_str(&body).unwrap();
    let record = &records[0];
    assert_eq!(record["output"]["done"], false, "{record}");
    assert_eq!(
        record["output"]["runlog.run"],
        "notes-check.strict.release-notes.1"
    );
    let done = record["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "done")
        .unwrap();
    assert_eq!(
        (done["label"].as_str(), done["score"].as_f64()),
        (Some("not done"), Some(0.0))
    );
}

/// An agent asking its model one question through the gateway, as plain HTTP.
const CALLING_AGENT: &str = r#"
import json, os, urllib.request
request = urllib.request.Request(
    os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages",
    data=json.dumps({"model": "claude-x", "max_tokens": 64,
                     "messages": [{"role": "user", "content": "Which file holds the release notes?"}]}).encode(),
    headers={"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
             "content-type": "application/json"})
print(urllib.request.urlopen(request).read().decode())
"#;

/// A scripted Anthropic provider answering every call the same.
fn scripted_answers() -> String {
    let answer = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-scripted","content":[{"type":"text","text":"CHANGELOG.md"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"output_tokens":4}}"#;
    let app = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(move || async move {
            axum::response::IntoResponse::into_response((
                [("content-type", "application/json")],
                answer,
            ))
        }),
    );
    common::provider::serve(app)
}
