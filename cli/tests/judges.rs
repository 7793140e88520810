//! Auditing the judges: a history made by real runs (a real binary, real git worktrees, a
//! Python evaluator) with known answers (people's decisions in the review queue, a rollback,
//! a dependent's failing tests, a rescue that changed nothing, one work judged three times),
//! and every figure of `runlog judges` checked against values worked out by hand here.

mod common;

use common::git::repository;
use common::{events, open, runlog, text};
use runlog_core::EventKind;
use serde_json::Value;

/// An evaluator that says it is `model m1`, at the version in `DIR/version`, and scores each
/// task with the next line of `DIR/scores/RUN/TASK`.
const JUDGE: &str = r#"import json, os, pathlib
d = pathlib.Path(__file__).parent
f = d / "scores" / os.environ["RUNLOG_RUN"] / os.environ["RUNLOG_TASK"]
lines = f.read_text().split()
f.write_text("\n".join(lines[1:]))
print(json.dumps({"score": float(lines[0]), "dimensions": {"correctness": float(lines[0]), "style": 0.5},
                  "notes": "judged", "model": "m1", "version": (d / "version").read_text().strip()}))
"#;

fn task(id: &str, run: &str, extra: &str) -> String {
    format!("[[task]]\nid = \"{id}\"\nrun = \"{run}\"\nrequires_testing = false\n{extra}")
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: std::path::PathBuf,
    repo: std::path::PathBuf,
    judges: std::path::PathBuf,
}

impl Fixture {
    fn scores(&self, run: &str, task: &str, scores: &[f64]) {
        let d = self.judges.join("scores").join(run);
        std::fs::create_dir_all(&d).unwrap();
        let lines: Vec<String> = scores.iter().map(f64::to_string).collect();
        std::fs::write(d.join(task), lines.join("\n")).unwrap();
    }

    fn version(&self, v: &str) {
        std::fs::write(self.judges.join("version"), v).unwrap();
    }

    fn run(&self, wf: &str, run: &str) -> std::process::Output {
        runlog(&self.store)
            .args([
                "run",
                self.repo.join(wf).to_str().unwrap(),
                "--run-id",
                run,
                "--quiet",
            ])
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = runlog(&self.store).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", text(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn judges(&self, args: &[&str]) -> Value {
        let mut all = vec!["--json", "judges"];
        all.extend_from_slice(args);
        serde_json::from_str(&self.ok(&all)).unwrap()
    }
}

/// Three runs: `people` (every verdict reviewed: five labels), `later` (a rescue that changed
/// nothing, a dependent's failing tests, a pass rolled back) and `again` (the same work once
/// more, at the evaluator's next version).
fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let judges = dir.path().join("judges");
    std::fs::create_dir_all(&judges).unwrap();
    std::fs::write(judges.join("judge.py"), JUDGE).unwrap();
    let eval = format!("eval = \"python3 {}\"\n", judges.join("judge.py").display());
    let people: String = ["a", "b", "c", "d", "e"]
        .iter()
        .map(|t| task(t, &format!("echo {t} > {t}.txt"), &eval))
        .collect();
    let later = [
        task("z", "test -f z.txt || echo z > z.txt", &eval),
        task("x", "echo x > x.txt", &eval),
        "[[task]]\nid = \"y\"\nrun = \"echo y > y.txt\"\nafter = [\"x\"]\ntest = \"false\"\n"
            .into(),
        task("w", "echo w > w.txt", &eval),
    ]
    .concat();
    let again = [
        task("z", "test -f z.txt || echo z > z.txt", &eval),
        task("x", "echo x > x.txt", &eval),
        task("w", "echo w > w.txt", &eval),
    ]
    .concat();
    let settings = "[settings]\njobs = 1\neval_threshold = 0.7\nmax_test_retries = 0\n";
    let repo = repository(
        dir.path(),
        &[
            (
                "people.toml",
                &format!(
                    "name = \"people\"\n{settings}auto_rescue = false\nreview = \"all\"\n{people}"
                ),
            ),
            (
                "later.toml",
                &format!("name = \"later\"\n{settings}{later}"),
            ),
            (
                "again.toml",
                &format!("name = \"again\"\n{settings}{again}"),
            ),
        ],
    );
    let f = Fixture {
        store: dir.path().join("store"),
        _dir: dir,
        repo,
        judges,
    };
    f.version("v1");
    for (t, s) in [("a", 0.9), ("b", 0.8), ("c", 0.5), ("d", 0.3), ("e", 0.75)] {
        f.scores("people", t, &[s]);
    }
    let out = f.run("people.toml", "people");
    assert!(
        text(&out).contains("for a person's review"),
        "every verdict waits: {}",
        text(&out)
    );
    let queue = f.ok(&["review", "people"]);
    assert!(
        queue.starts_with("5 verdicts wait for a person's review"),
        "{queue}"
    );
    assert!(
        queue.contains("people c attempt 1: score 0.5 (threshold 0.7, the gate would fail)"),
        "{queue}"
    );
    for (verb, t) in [
        ("approve", "a"),
        ("reject", "b"),
        ("approve", "c"),
        ("reject", "d"),
        ("approve", "e"),
    ] {
        let mut args = vec![verb, "people", t, "--by", "ana"];
        if verb == "reject" {
            args.extend(["--reason", "not what was asked"]);
        }
        f.ok(&args);
    }
    assert!(f.ok(&["review"]).contains("no verdict waits"));

    for (t, s) in [("z", &[0.4, 0.9][..]), ("x", &[0.9]), ("w", &[0.85])] {
        f.scores("later", t, s);
    }
    let out = f.run("later.toml", "later");
    assert_eq!(
        out.status.code(),
        Some(1),
        "y fails its tests: {}",
        text(&out)
    );
    // Roll back to before w's score: its pass is undone.
    let log = open(&f.store);
    let before_w = events(&log, "later")
        .iter()
        .find(
            |(_, e)| matches!(&e.kind, EventKind::EvalScored { task, .. } if task.as_str() == "w"),
        )
        .map(|(seq, _)| seq - 1)
        .unwrap();
    drop(log);
    f.ok(&[
        "rollback",
        "later",
        "--to",
        &before_w.to_string(),
        "--reason",
        "w was wrong",
    ]);

    f.version("v2");
    for (t, s) in [("z", 0.95), ("x", 0.9), ("w", 0.85)] {
        f.scores("again", t, &[s]);
    }
    let out = f.run("again.toml", "again");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    f
}

fn close(v: &Value, want: f64) -> bool {
    v.as_f64().is_some_and(|x| (x - want).abs() < 1e-9)
}

fn refs(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r["run"].as_str().unwrap(),
                r["task"].as_str().unwrap(),
                r["attempt"]
            )
        })
        .collect()
}

#[test]
fn every_figure_matches_the_history_worked_out_by_hand() {
    let f = fixture();
    let r = f.judges(&[]);
    assert_eq!(r["runs"], 3);
    assert_eq!(r["verdicts"], 12, "5 + 4 + 3");
    let e = &r["evaluators"][0];
    assert_eq!(
        r["evaluators"].as_array().unwrap().len(),
        1,
        "one evaluator"
    );
    assert_eq!(e["models"], serde_json::json!(["m1"]));
    assert_eq!(e["versions"], serde_json::json!(["v1", "v2"]));
    // people: a b e pass, c d fail; later: z rescue then pass, x pass, w pass; again: 3 passes.
    assert_eq!(
        (
            e["passes"].as_u64(),
            e["rescues"].as_u64(),
            e["fails"].as_u64()
        ),
        (Some(9), Some(1), Some(2))
    );
    assert_eq!(e["held"], 5);
    let scores = [
        0.9, 0.8, 0.5, 0.3, 0.75, 0.4, 0.9, 0.9, 0.85, 0.95, 0.9, 0.85,
    ];
    let mean = scores.iter().sum::<f64>() / 12.0;
    let sd = (scores.iter().map(|s| (s - mean).powi(2)).sum::<f64>() / 12.0).sqrt();
    assert!(
        close(&e["score_mean"], mean) && close(&e["score_sd"], sd),
        "{e}"
    );
    assert!(close(&e["dimensions"]["style"], 0.5));
    assert_eq!(
        e["histogram"],
        serde_json::json!([0, 0, 0, 1, 1, 1, 0, 1, 3, 5])
    );

    // People: a (pass, approved), b (pass, rejected), c (fail, approved), d (fail, rejected),
    // e (pass, approved). p_o = 3/5; p_gate = p_person = 3/5; p_e = 0.36 + 0.16 = 0.52;
    // kappa = (0.6 - 0.52) / 0.48 = 1/6. The seven verdicts of the other runs: no label.
    let p = &e["people"];
    assert_eq!(
        [
            &p["both_pass"],
            &p["gate_pass_person_fail"],
            &p["gate_fail_person_pass"],
            &p["both_fail"]
        ],
        [2, 1, 1, 1]
    );
    assert!(
        close(&p["accuracy"], 0.6) && close(&p["kappa"], 1.0 / 6.0),
        "{p}"
    );
    assert_eq!(
        (p["n"].as_u64(), p["unlabelled"].as_u64()),
        (Some(5), Some(7))
    );

    // False passes: b (rejected), x (y waited on it and failed its tests), w (rolled back);
    // of 9 passes. False fails: c (approved), z's rescue (the attempt after it changed
    // nothing and passed); of 3.
    let fp = &e["false_pass"];
    assert_eq!(
        (fp["contradicted"].as_u64(), fp["of"].as_u64()),
        (Some(3), Some(9))
    );
    let mut named = refs(&fp["verdicts"]);
    named.sort();
    assert_eq!(named, ["later w 1", "later x 1", "people b 1"]);
    assert!(fp["verdicts"].as_array().unwrap().iter().any(|v| v["why"]
        .as_str()
        .unwrap()
        .contains("y, which waited on it, failed its tests")));
    let ff = &e["false_fail"];
    assert_eq!(
        (ff["contradicted"].as_u64(), ff["of"].as_u64()),
        (Some(2), Some(3))
    );
    let mut named = refs(&ff["verdicts"]);
    named.sort();
    assert_eq!(named, ["later z 1", "people c 1"]);

    // The same work: z's file judged three times (0.4 rescue, 0.9 pass, 0.95 pass), x's and
    // w's twice each with the same scores. Spreads 0.55, 0, 0.
    let t = &e["retest"];
    assert_eq!(
        (
            t["works"].as_u64(),
            t["judgements"].as_u64(),
            t["flipped"].as_u64()
        ),
        (Some(3), Some(7), Some(1))
    );
    assert!(
        close(&t["max_spread"], 0.55) && close(&t["mean_spread"], 0.55 / 3.0),
        "{t}"
    );
    // z's second score rose from 0.4 with nothing changed.
    assert_eq!(refs(&e["unchanged_rises"]), ["later z 2"]);

    // Drift: the versions, each from its first verdict.
    let versions = e["drift"]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2);
    assert_eq!(
        (
            versions[0]["version"].as_str(),
            versions[0]["verdicts"].as_u64()
        ),
        (Some("v1"), Some(9))
    );
    assert_eq!(
        (
            versions[1]["version"].as_str(),
            versions[1]["verdicts"].as_u64()
        ),
        (Some("v2"), Some(3))
    );
    assert_eq!(versions[1]["first"]["run"], "again");

    // The filters.
    let again = f.judges(&["--workflow", "again"]);
    assert_eq!(again["verdicts"], 3);
    assert_eq!(f.judges(&["people"])["verdicts"], 5);
    assert_eq!(f.judges(&["--since", "2999-01-01"])["verdicts"], 0);

    // The words say the same.
    let words = f.ok(&["judges"]);
    eprintln!(
        "{words}{}",
        f.ok(&["judges", "--threshold", "0.85", "people"])
    );
    assert!(words.contains("judges over 3 runs: 12 verdicts"), "{words}");
    assert!(
        words.contains("accuracy 60%, kappa 0.17 (n 5); 7 verdicts no person looked at"),
        "{words}"
    );
    assert!(words.contains("false passes 3 of 9 (33%)"), "{words}");
    assert!(words.contains("rises without a change: 1"), "{words}");
}

#[test]
fn what_if_decides_the_recorded_scores_again() {
    let f = fixture();
    // At the recorded threshold nothing flips.
    let same = f.judges(&["--threshold", "0.7"]);
    let w = &same["evaluators"][0]["what_if"];
    assert_eq!(w["flips"].as_array().unwrap().len(), 0, "{w}");
    assert_eq!(w["passes_now"], w["passed"]);
    // At 1.0 every pass below 1.0 flips: all nine.
    let all = f.judges(&["--threshold", "1"]);
    let w = &all["evaluators"][0]["what_if"];
    assert_eq!(w["flips"].as_array().unwrap().len(), 9);
    assert_eq!(w["passes_now"], 0);
    // At 0.85 in the people run: b (0.8, rejected: borne out) and e (0.75, approved: against).
    let mid = f.judges(&["people", "--threshold", "0.85"]);
    let w = &mid["evaluators"][0]["what_if"];
    assert_eq!(
        refs(
            &w["flips"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["verdict"].clone())
                .collect::<Value>()
        ),
        ["people b 1", "people e 1"]
    );
    assert_eq!(
        (w["borne_out"].as_u64(), w["gone_against"].as_u64()),
        (Some(1), Some(1))
    );
    // Weights: style (0.5 everywhere) alone passes nothing at 0.7; c and d stay as they were.
    let styled = f.judges(&["people", "--weights", "style=1"]);
    assert_eq!(styled["evaluators"][0]["what_if"]["passes_now"], 0);
    // Weights are relative: equal ones, however large, decide as 1 and 1 do.
    let even = f.judges(&["people", "--weights", "correctness=1,style=1"]);
    let huge = f.judges(&["people", "--weights", "correctness=1e308,style=1e308"]);
    assert_eq!(
        huge["evaluators"][0]["what_if"],
        even["evaluators"][0]["what_if"]
    );
    // A run named twice counts once.
    assert_eq!(f.judges(&["people", "people"]), f.judges(&["people"]));
    // The API answers the same question with the same report.
    let server = runlog(&f.store)
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    common::wait_for(|| f.store.join("api.sock").exists());
    let get = |path: &str| {
        let mut conn = std::os::unix::net::UnixStream::connect(f.store.join("api.sock")).unwrap();
        common::request(&mut conn, "GET", path, &[], "")
    };
    let (status, body) = get("/v1/judges?runs=people&threshold=0.85");
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), mid);
    let twice = format!(
        "/v1/judges?runs={}&threshold=0.85",
        ["people"; 500].join(",")
    );
    let (status, body) = get(&twice);
    assert_eq!(status, 200, "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap(), mid);
    let (status, body) = get("/v1/judges?threshold=1.5");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("outside [0, 1]"), "{body}");
    let (status, body) = get("/v1/judges?runs=nope");
    assert_eq!(status, 404, "{body}");
    let (status, body) = get("/v1/review");
    assert_eq!((status, body.as_str()), (200, "[]"));
    let mut server = server;
    let _ = server.kill();
    let _ = server.wait();
    // What no evaluator ran: the store holds the same events as before.
    let log = open(&f.store);
    let n = events(&log, "people").len();
    drop(log);
    f.judges(&["--threshold", "0.2"]);
    assert_eq!(events(&open(&f.store), "people").len(), n);
}

#[test]
fn bad_input_is_refused_and_an_empty_history_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for (args, says) in [
        (&["judges", "--threshold", "1.5"][..], "outside [0, 1]"),
        (&["judges", "--threshold=-0.1"][..], "outside [0, 1]"),
        (&["judges", "--since", "last week"][..], "not a date"),
        (&["judges", "--weights", "style"][..], "DIMENSION=WEIGHT"),
    ] {
        let out = runlog(&store).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(text(&out).contains(says), "{args:?}: {}", text(&out));
    }
    let wf = common::workflow(
        dir.path(),
        "one",
        "name = \"one\"\n[[task]]\nid = \"t\"\nrun = \"true\"\nrequires_testing = false\n",
    );
    assert_eq!(common::run(&store, &wf, "one", &[]).status.code(), Some(0));
    let out = runlog(&store).args(["judges", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("nope"), "{}", text(&out));
    let out = runlog(&store).args(["judges", "one"]).output().unwrap();
    assert!(
        text(&out).contains("no verdicts in 1 run"),
        "{}",
        text(&out)
    );
    // A sample outside [0, 1] refuses the workflow.
    let bad = common::workflow(
        dir.path(),
        "bad",
        "name = \"bad\"\n[settings]\nreview_sample = 2\n[[task]]\nid = \"t\"\nrun = \"true\"\n",
    );
    let out = common::run(&store, &bad, "bad", &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("review_sample"), "{}", text(&out));
}
