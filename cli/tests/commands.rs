//! Every inspection and control command on the recorded fixture runs, human and `--json`
//! output snapshotted (insta), plus the errors a user meets: unknown run, seq past the head,
//! store locked; and `emit` driven by a script.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn runlog(store: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_runlog"))
        .current_dir(repo())
        .arg("--store")
        .arg(store)
        .args(args)
        .env_remove("RUNLOG_STORE")
        .env("NO_COLOR", "1")
        .env("RUNLOG_TEST_CLOCK", "1800000000000")
        .env("USER", "tester")
        .output()
        .unwrap()
}

/// Stdout, with the name of the user running the tests written `[user]`: who recorded a
/// decision is part of the output, and snapshots must not depend on who runs them.
fn stdout(o: &Output) -> String {
    let me = nix::unistd::User::from_uid(nix::unistd::getuid())
        .unwrap()
        .unwrap()
        .name;
    String::from_utf8_lossy(&o.stdout)
        .replace(&format!("recorded by {me} ("), "recorded by [user] (")
        .replace(&format!("[recorded: {me} via"), "[recorded: [user] via")
        .replace(
            &format!("\"principal\":\"{me}\""),
            "\"principal\":\"[user]\"",
        )
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A store holding every recorded fixture run.
fn store() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "quickstart",
        "seed-000-reevaluation",
        "seed-001-eval-gate",
        "seed-002-supervisor",
        "seed-003-never-give-up",
        "seed-004-phases",
    ] {
        let file = repo().join("fixtures/runs").join(format!("{name}.jsonl"));
        let out = runlog(dir.path(), &["import", file.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    dir
}

/// Runs a command that must succeed and returns its stdout.
fn ok(store: &Path, args: &[&str]) -> String {
    let out = runlog(store, args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "runlog {args:?}\n{}{}",
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// `runlog emit RUN --json` with `script` on stdin.
fn emit(store: &Path, run: &str, script: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_runlog"))
        .arg("--store")
        .arg(store)
        .args(["emit", run, "--json"])
        .env("RUNLOG_TEST_CLOCK", "1800000000000")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), script.as_bytes()).unwrap();
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

macro_rules! snap {
    ($store:expr, $name:literal, $($arg:expr),+) => {
        insta::assert_snapshot!($name, ok($store, &[$($arg),+]));
    };
}

#[test]
fn inspection_commands_read_the_recorded_runs() {
    let s = store();
    let st = s.path();
    snap!(st, "runs", "runs");
    snap!(st, "runs_json", "runs", "--json");
    snap!(st, "status_seed_001", "status", "seed-001-eval-gate");
    snap!(
        st,
        "status_seed_001_at_30",
        "status",
        "seed-001-eval-gate",
        "--at",
        "30"
    );
    snap!(
        st,
        "status_seed_004_tree",
        "status",
        "seed-004-phases",
        "--tree"
    );
    snap!(
        st,
        "status_seed_004_json",
        "status",
        "seed-004-phases",
        "--json"
    );
    snap!(st, "show_rescued", "show", "seed-001-eval-gate", "rescued");
    snap!(
        st,
        "show_rescued_json",
        "show",
        "seed-001-eval-gate",
        "rescued",
        "--json"
    );
    snap!(
        st,
        "log_quickstart_implement_gate",
        "log",
        "quickstart",
        "--task",
        "implement",
        "--kind",
        "gate-decided",
        "--kind",
        "eval-scored"
    );
    snap!(
        st,
        "log_seed_000_json",
        "log",
        "seed-000-reevaluation",
        "--from",
        "9",
        "--to",
        "12",
        "--json"
    );
    snap!(
        st,
        "replay_seed_000",
        "replay",
        "seed-000-reevaluation",
        "--to",
        "14"
    );
    snap!(st, "stack_seed_002", "stack", "seed-002-supervisor");
    snap!(
        st,
        "stack_seed_002_json",
        "stack",
        "seed-002-supervisor",
        "--at",
        "20",
        "--json"
    );
    snap!(st, "stages_seed_002", "stages", "seed-002-supervisor");
    snap!(
        st,
        "stages_seed_002_json",
        "stages",
        "seed-002-supervisor",
        "--json"
    );
    snap!(st, "audit_seed_001", "audit", "seed-001-eval-gate");
    snap!(
        st,
        "audit_seed_001_json",
        "audit",
        "seed-001-eval-gate",
        "--json"
    );
    snap!(
        st,
        "diff_seed_004_mid_to_head",
        "diff",
        "seed-004-phases@20",
        "seed-004-phases"
    );
    snap!(
        st,
        "diff_seed_004_json",
        "diff",
        "seed-004-phases@20",
        "seed-004-phases",
        "--json"
    );
    snap!(st, "verify_all", "verify");
    snap!(st, "verify_json", "verify", "quickstart", "--json");
    snap!(st, "digest_quickstart", "digest", "quickstart");
    snap!(st, "viz_dot", "viz", "seed-004-phases");
    snap!(
        st,
        "viz_mermaid_at_10",
        "viz",
        "seed-001-eval-gate",
        "--format",
        "mermaid",
        "--at",
        "10"
    );
}

/// Seed 002: `notify` waits for nothing, but its stage's circuit is open, so the engine never
/// starts it; every view says blocked, none says ready or open.
#[test]
fn a_task_behind_an_open_circuit_shows_as_blocked_everywhere() {
    let dir = store();
    let st = dir.path();
    let status = ok(st, &["status", "seed-002-supervisor"]);
    let notify = status.lines().find(|l| l.starts_with("notify")).unwrap();
    assert!(notify.contains("blocked"), "{notify}");
    assert!(
        notify.contains("stage deploy's circuit is open"),
        "{notify}"
    );
    assert!(!notify.contains("ready"), "{notify}");
    let dot = ok(st, &["viz", "seed-002-supervisor"]);
    assert!(
        dot.contains("\"notify\" [label=\"notify\\nblocked\", fillcolor=\"#8b0000\"]"),
        "{dot}"
    );
    let mermaid = ok(st, &["viz", "seed-002-supervisor", "--format", "mermaid"]);
    assert!(mermaid.contains("notify<br/>blocked"), "{mermaid}");
    let json = ok(st, &["--json", "status", "seed-002-supervisor"]);
    assert!(
        json.contains("\"readiness\":{\"readiness\":\"circuit-open\",\"stage\":\"deploy\"}"),
        "{json}"
    );
}

/// `runlog metrics`: the seeds' figures per run and over the store, a person's decision
/// named by who the store knows they are.
#[test]
fn metrics_per_run_and_over_the_store() {
    let dir = store();
    let st = dir.path();
    let script = [
        r#"{"command":"start-run","run":"m","tasks":[{"id":"a","eval":"judge"}]}"#,
        r#"{"command":"start-task","task":"a","agent":null,"worktree":null}"#,
        r#"{"command":"submit-task","task":"a","summary":"s","result":null,"duration_ms":5}"#,
        r#"{"command":"approve","task":"a","by":"claims-to-be-bob"}"#,
    ]
    .join("\n");
    let out = emit(st, "m", &script);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = ok(st, &["metrics", "seed-004-phases", "m"]);
    assert!(text.contains("metrics of seed-004-phases"), "{text}");
    assert!(
        text.contains("recovered without a person: 1 of 1 (100 %)"),
        "{text}"
    );
    assert!(text.contains("all 2 runs"), "{text}");
    let lines: Vec<serde_json::Value> = ok(st, &["--json", "metrics"])
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8, "six fixtures, m, then all");
    let m = lines.iter().find(|l| l["run"] == "m").unwrap();
    let who = m["metrics"]["interventions"][0]["by"].as_str().unwrap();
    assert_ne!(
        who, "claims-to-be-bob",
        "the principal the store recorded, not the claim"
    );
    assert_eq!(m["metrics"]["interventions_by_kind"]["approve"], 1);
    let all = lines.last().unwrap();
    assert_eq!(all["all"], 7);
    assert_eq!(all["metrics"]["rescue_success"]["of"], 2);
    assert_eq!(all["metrics"]["rescue_success"]["total"], 3);
    assert_eq!(
        all["metrics"]["done_with_failing_tests"],
        serde_json::json!([])
    );
    let seed1 = lines
        .iter()
        .find(|l| l["run"] == "seed-001-eval-gate")
        .unwrap();
    assert_eq!(
        seed1["metrics"]["eval_pass_at_first_try"]["rate"],
        1.0 / 3.0
    );
}

#[test]
fn control_commands_record_decisions_with_the_acting_user() {
    let s = store();
    let st = s.path();
    snap!(
        st,
        "approve_over_failing_score",
        "approve",
        "seed-001-eval-gate",
        "capped",
        "--by",
        "alice"
    );
    snap!(st, "audit_after_approval", "audit", "seed-001-eval-gate");
    snap!(
        st,
        "rollback_approval",
        "rollback",
        "seed-001-eval-gate",
        "--to",
        "63",
        "--reason",
        "approval was premature"
    );
    snap!(st, "status_after_rollback", "status", "seed-001-eval-gate");
    snap!(
        st,
        "reopen_failed",
        "reopen",
        "seed-002-supervisor",
        "deploy"
    );
    snap!(
        st,
        "fork",
        "fork",
        "seed-001-eval-gate",
        "--at",
        "40",
        "--as",
        "gate-retry",
        "--json"
    );
    snap!(st, "status_of_fork", "status", "gate-retry");
    snap!(st, "runs_with_lineage", "runs");
    // Rejected: nothing recorded, exit 2, a reason and a hint.
    let out = runlog(st, &["approve", "quickstart", "plan"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("approve_rejected", stderr(&out));
}

#[test]
fn replan_by_hand_applies_a_plan_file() {
    let s = store();
    let plan = s.path().join("plan.json");
    std::fs::write(&plan, r#"{"add": [{"id": "changelog", "run": "bin/agent.sh", "after": ["api"]}], "reason": "release notes"}"#).unwrap();
    insta::assert_snapshot!(
        "replan_by_hand",
        ok(
            s.path(),
            &[
                "replan",
                "seed-000-reevaluation",
                "--file",
                plan.to_str().unwrap()
            ]
        )
    );
    let bad = s.path().join("bad.json");
    std::fs::write(&bad, r#"{"cancel": ["api"]}"#).unwrap();
    let out = runlog(
        s.path(),
        &[
            "replan",
            "seed-000-reevaluation",
            "--file",
            bad.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("task api is done and cannot be cancelled"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn export_and_import_round_trip_to_the_same_head_hash() {
    let s = store();
    let file = s.path().join("q.jsonl");
    ok(
        s.path(),
        &["export", "quickstart", "-o", file.to_str().unwrap()],
    );
    let other = tempfile::tempdir().unwrap();
    let out = ok(other.path(), &["import", file.to_str().unwrap(), "--json"]);
    assert!(out.contains("\"same_head_hash\":true"), "{out}");
    assert_eq!(
        ok(other.path(), &["digest", "quickstart"]),
        ok(s.path(), &["digest", "quickstart"])
    );
    let out = runlog(other.path(), &["import", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "importing twice is refused");
    assert!(stderr(&out).contains("run quickstart already exists"));
}

#[test]
fn errors_name_what_was_wrong_and_what_to_do() {
    let s = store();
    let st = s.path();
    let out = runlog(st, &["status", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("unknown_run", stderr(&out));
    let out = runlog(st, &["status", "quickstart", "--at", "999"]);
    assert_eq!(out.status.code(), Some(2));
    insta::assert_snapshot!("seq_past_head", stderr(&out));
    let out = runlog(st, &["log", "quickstart", "--kind", "exploded"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown event kind"));
    let out = runlog(&st.join("missing"), &["runs"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no runlog store at"),
        "{}",
        stderr(&out)
    );
    // The store held by another process: commands go through it, with the same answers.
    let quiet = runlog(st, &["status", "quickstart"]);
    let mut holder = Command::new(env!("CARGO_BIN_EXE_runlog"))
        .current_dir(repo())
        .arg("--store")
        .arg(st)
        .args(["emit", "held"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // emit opens the store at its first command (one the rules refuse is enough) and holds it
    // while its stdin stays open.
    std::io::Write::write_all(
        holder.stdin.as_mut().unwrap(),
        b"{\"command\":\"finish\"}\n",
    )
    .unwrap();
    // Wait until the holder has the store (it records itself as the owner once it does: its
    // command, never its arguments).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !std::fs::read_to_string(st.join("owner"))
        .unwrap_or_default()
        .contains("runlog emit")
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the holder never opened the store"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let held = runlog(st, &["status", "quickstart"]);
    let approve = runlog(st, &["approve", "quickstart", "plan"]);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(held.status.code(), Some(0), "{}", stderr(&held));
    assert_eq!(stdout(&held), stdout(&quiet));
    // A decision goes through the owner too, and the rules answer as on a quiet store.
    assert_eq!(approve.status.code(), Some(2), "{}", stderr(&approve));
    assert!(
        stderr(&approve).contains("it is done"),
        "{}",
        stderr(&approve)
    );
}

#[test]
fn verify_exits_1_and_names_the_seq_of_damage() {
    let s = store();
    let st = s.path().to_path_buf();
    // Flip one byte inside a stored frame of seed-002, with the store closed.
    {
        let db = sled::open(st.join("db")).unwrap();
        let frames = db
            .open_tree(runlog_store::backend::sled_db::FRAMES_TREE)
            .unwrap();
        let runs = db
            .open_tree(runlog_store::backend::sled_db::RUNS_TREE)
            .unwrap();
        let num = runs.get("seed-002-supervisor").unwrap().unwrap();
        let (k, v) = frames.scan_prefix(&num[..8]).next().unwrap().unwrap();
        let mut v = v.to_vec();
        v[60] ^= 0x20;
        frames.insert(k, v).unwrap();
        db.flush().unwrap();
    }
    let out = runlog(&st, &["verify", "seed-002-supervisor"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(
        stdout(&out).contains("DAMAGED: corruption at seq 1"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn emit_records_an_orchestrators_commands_through_the_same_rules() {
    let dir = tempfile::tempdir().unwrap();
    // Seed 001's gate, told as JSON lines by an orchestrator in another language; line 4 is
    // out of order (b is not ready) and is rejected without touching anything.
    let script = r#"{"command":"start-run","run":"orch","workflow":"external","workflow_hash":"0000000000000000000000000000000000000000000000000000000000000000","settings":{"eval_threshold":0.7,"auto_rescue":true,"max_eval_rescues":3,"max_test_retries":3,"max_depth":3,"jobs":1,"history_warn_events":100000},"tasks":[{"id":"a","description":"build a","after":[],"parent":null,"files":[],"destructive":null,"run":null,"test":null,"eval":"judge","requires_testing":false,"stage":null,"retry":{"limit":{"max":3},"budget":{"max_attempts":null,"max_elapsed_ms":null},"delay_ms":0,"backoff":1.0,"timeout_ms":null,"circuit_after":5},"checkpoints":[]},{"id":"b","description":"build b","after":["a"],"parent":null,"files":[],"destructive":null,"run":null,"test":null,"eval":null,"requires_testing":false,"stage":null,"retry":{"limit":{"max":3},"budget":{"max_attempts":null,"max_elapsed_ms":null},"delay_ms":0,"backoff":1.0,"timeout_ms":null,"circuit_after":5},"checkpoints":[]}]}
{"command":"start-task","task":"a","agent":"claude-1","worktree":"wt-a"}
{"command":"submit-task","task":"a","summary":"built a","result":{"files":2},"duration_ms":1200}
{"command":"start-task","task":"b","agent":null,"worktree":null}
{"command":"score-eval","task":"a","evaluator":"judge","score":0.5,"dimensions":{"correctness":0.4},"notes":"no tests"}
{"command":"start-task","task":"a","agent":"claude-1","worktree":"wt-a"}
{"command":"submit-task","task":"a","summary":"added tests","result":null,"duration_ms":900}
{"command":"score-eval","task":"a","evaluator":"judge","score":0.9,"dimensions":{"correctness":0.9},"notes":"good"}
{"command":"start-task","task":"b","agent":null,"worktree":null}
{"command":"submit-task","task":"b","summary":"built b","result":null,"duration_ms":300}
{"command":"finish"}
"#;
    let out = emit(dir.path(), "orch", script);
    assert_eq!(
        out.status.code(),
        Some(1),
        "one line was rejected: {}",
        stderr(&out)
    );
    insta::assert_snapshot!("emit_results", stdout(&out));
    insta::assert_snapshot!("emit_board", ok(dir.path(), &["status", "orch"]));
    insta::assert_snapshot!("emit_audit", ok(dir.path(), &["audit", "orch"]));
}

#[test]
fn emit_decides_each_line_on_the_state_a_rollback_left() {
    let dir = tempfile::tempdir().unwrap();
    // start-run (seqs 1-2), start-task a (3-4), roll back to 2, start a again: it is open
    // again after the rollback, so its attempt 1 starts afresh.
    let script = r#"{"command":"start-run","run":"rb","workflow":"external","workflow_hash":"0000000000000000000000000000000000000000000000000000000000000000","settings":{"eval_threshold":0.7,"auto_rescue":true,"max_eval_rescues":3,"max_test_retries":3,"max_depth":3,"jobs":1,"history_warn_events":100000},"tasks":[{"id":"a","description":"build a","after":[],"parent":null,"files":[],"destructive":null,"run":null,"test":null,"eval":null,"requires_testing":false,"stage":null,"retry":{"limit":{"max":3},"budget":{"max_attempts":null,"max_elapsed_ms":null},"delay_ms":0,"backoff":1.0,"timeout_ms":null,"circuit_after":5},"checkpoints":[]}]}
{"command":"start-task","task":"a","agent":null,"worktree":null}
{"command":"rollback","to_seq":2,"reason":"try again","by":"orchestrator"}
{"command":"start-task","task":"a","agent":null,"worktree":null}
"#;
    let out = emit(dir.path(), "rb", script);
    let results = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "{results}{}", stderr(&out));
    let last: serde_json::Value = serde_json::from_str(results.lines().last().unwrap()).unwrap();
    assert_eq!(last["ok"], true, "{results}");
    assert_eq!(last["events"][0], "task-started");
    let status = ok(dir.path(), &["status", "rb", "--json"]);
    let board: serde_json::Value = serde_json::from_str(status.trim()).unwrap();
    assert_eq!(board["board"]["rows"][0]["status"], "in-progress");
    assert_eq!(board["board"]["rows"][0]["attempt"], 1);
}

#[test]
fn every_printing_command_honours_json_and_a_failed_export_says_why() {
    let dir = store();
    let st = dir.path();
    for args in [
        vec!["digest", "quickstart", "--json"],
        vec!["viz", "quickstart", "--json"],
        vec!["viz", "quickstart", "--format", "mermaid", "--json"],
    ] {
        let out = ok(st, &args);
        let v: serde_json::Value = serde_json::from_str(out.trim())
            .unwrap_or_else(|e| panic!("{args:?} printed no JSON ({e}): {out}"));
        assert!(v.is_object(), "{args:?}: {out}");
    }
    let export = tempfile::tempdir().unwrap();
    let file = export.path().join("q.jsonl");
    let out = ok(
        st,
        &[
            "export",
            "quickstart",
            "-o",
            file.to_str().unwrap(),
            "--json",
        ],
    );
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["events"], 50);
    // A full disk is the destination's fault, not an import error at "line 0".
    if Path::new("/dev/full").exists() {
        let out = runlog(st, &["export", "quickstart", "-o", "/dev/full"]);
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains("cannot write"), "{}", stderr(&out));
        assert!(!stderr(&out).contains("import"), "{}", stderr(&out));
    }
    let bad = runlog(st, &["viz", "quickstart", "--format", "svg"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("dot") && stderr(&bad).contains("mermaid"));
}

/// A command whose standard output is a full disk says so and exits 1: `println!` panicked
/// there (exit 101).
#[cfg(target_os = "linux")]
#[test]
fn output_to_a_full_disk_fails_with_the_reason() {
    let dir = store();
    for args in [
        vec!["log", "quickstart"],
        vec!["log", "quickstart", "--json"],
        vec!["status", "quickstart"],
        vec!["status", "quickstart", "--json"],
        vec!["export", "quickstart"],
        vec!["runs"],
        vec!["audit", "quickstart"],
        vec!["metrics"],
        vec!["cost", "quickstart"],
        vec!["digest", "quickstart"],
        vec!["viz", "quickstart"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_runlog"))
            .arg("--store")
            .arg(dir.path())
            .args(&args)
            .env_remove("RUNLOG_STORE")
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("No space left on device"),
            "{args:?}: {}",
            stderr(&out)
        );
        assert!(
            !stderr(&out).contains("panicked"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn emit_starts_a_run_from_the_short_form_with_a_workflow_files_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"{"command": "start-run", "run": "short", "tasks": [{"id": "a"}, {"id": "b", "after": ["a"]}]}
{"command":"start-task","task":"a","agent":"me","worktree":null}
{"command":"submit-task","task":"a","summary":"did a","result":null,"duration_ms":5}
"#;
    let out = emit(dir.path(), "short", script);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let board: serde_json::Value =
        serde_json::from_str(&ok(dir.path(), &["status", "short", "--json"])).unwrap();
    let rows = board["board"]["rows"].as_array().unwrap();
    let status: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["id"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(status, vec![("a", "done"), ("b", "open")]);
    // The defaults are a workflow file's: the same eval threshold and rescue rules.
    let started = ok(
        dir.path(),
        &["log", "short", "--json", "--kind", "run-started"],
    );
    assert!(started.contains("\"eval_threshold\":0.7"), "{started}");
    // A short start-run with a field a task does not have says which.
    let bad = emit(
        dir.path(),
        "other",
        r#"{"command": "start-run", "run": "other", "tasks": [{"id": "a", "bogus": 1}]}"#,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stdout(&bad).contains("unknown field `bogus`"),
        "{}",
        stdout(&bad)
    );
}

#[test]
fn emit_records_a_model_call_and_log_and_cost_show_it() {
    let dir = tempfile::tempdir().unwrap();
    // A run short, with the workflow's defaults and a price for the model; its task's agent
    // makes one call through a gateway of the orchestrator's own, which records it.
    let script = r#"{"command":"start-run","run":"calls","tasks":[{"id":"a","requires_testing":false}],"prices":{"sonnet":{"input":3.0,"output":15.0}}}
{"command":"start-task","task":"a","agent":null,"worktree":null}
{"command":"record-model-call","call":{"task":"a","attempt":1,"stage":"agent","n":1,"provider":"anthropic","api":"messages","model":"sonnet","streamed":true,"status":200,"end":{"end":"answered"},"first_byte_ms":310,"duration_ms":1840,"tokens":{"input":12000,"output":350,"cache_read":0,"cache_write":0,"reasoning":0},"cost_usd":null,"cost":"unpriced","request":null,"response":null,"assembled":null,"error":null}}
{"command":"record-model-call","call":{"task":"a","attempt":2,"stage":"agent","n":1,"provider":"anthropic","api":"messages","model":"sonnet","streamed":false,"status":200,"end":{"end":"answered"},"first_byte_ms":null,"duration_ms":10,"tokens":{"input":1,"output":1,"cache_read":0,"cache_write":0,"reasoning":0},"cost_usd":null,"cost":"unpriced","request":null,"response":null,"assembled":null,"error":null}}
"#;
    let out = emit(dir.path(), "calls", script);
    assert_eq!(
        out.status.code(),
        Some(1),
        "the call of attempt 2 is refused: {}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("attempt 2 where the task has started 1"),
        "{}",
        stdout(&out)
    );
    let log = ok(dir.path(), &["log", "calls", "--kind", "model-called"]);
    assert!(
        log.contains("a attempt 1 agent call 1 to anthropic messages (sonnet, streamed): 200 in 1840 ms (first byte 310 ms), 12000 input and 350 output tokens, $0.0412 (priced)"),
        "{log}"
    );
    // 12,000 × $3 + 350 × $15 a million tokens: $0.04125, the task's and the run's.
    let cost = ok(dir.path(), &["cost", "calls", "--json"]);
    let cost: serde_json::Value = serde_json::from_str(cost.lines().last().unwrap()).unwrap();
    let usd = cost["total"]["cost_usd"].as_f64().unwrap();
    assert!((usd - 0.04125).abs() < 1e-9, "{cost}");
    assert_eq!(cost["rows"][0]["key"], "a", "{cost}");
    assert_eq!(cost["total"]["tokens"]["input"], 12000, "{cost}");
}
