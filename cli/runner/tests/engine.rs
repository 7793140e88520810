//! The engine as a library: built on the in-memory log with scripted commands (no process, no
//! binary), driven to its end, and judged by the history it recorded and by what it ran.

use runlog_core::{
    Command, CommandKind, Event, EventKind, GateOutcome, RunOutcome, RunState, TaskId, TaskStatus,
    Timestamp,
};
use runlog_runner::process::{Commands, Failure, Outcome, Running, Spec};
use runlog_runner::{Ended, Engine, Host, Launcher, RunOptions, Workflow};
use runlog_store::{EventLog, Log};
use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// What a scripted command does: its exit code and output, how long it takes (or that it runs
/// until it is stopped), the files it writes in its worktree, and something done meanwhile.
#[derive(Clone)]
struct Answer {
    code: i32,
    stdout: String,
    hold: Duration,
    until_stopped: bool,
    writes: Vec<(String, String)>,
    meanwhile: Option<Arc<dyn Fn() + Send + Sync>>,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Answer")
            .field("code", &self.code)
            .field("stdout", &self.stdout)
            .finish_non_exhaustive()
    }
}

impl Answer {
    fn exit(code: i32) -> Self {
        Self {
            code,
            stdout: String::new(),
            hold: Duration::ZERO,
            until_stopped: false,
            writes: Vec::new(),
            meanwhile: None,
        }
    }

    fn ok() -> Self {
        Self::exit(0)
    }

    fn says(mut self, stdout: &str) -> Self {
        self.stdout = stdout.to_owned();
        self
    }

    fn held(mut self, ms: u64) -> Self {
        self.hold = Duration::from_millis(ms);
        self
    }

    fn until_stopped(mut self) -> Self {
        self.until_stopped = true;
        self
    }

    fn writes(mut self, path: &str, text: &str) -> Self {
        self.writes.push((path.to_owned(), text.to_owned()));
        self
    }

    fn meanwhile(mut self, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.meanwhile = Some(Arc::new(f));
        self
    }

    fn score(score: f64) -> Self {
        Self::ok().says(&format!("{{\"score\": {score}, \"notes\": \"scripted\"}}"))
    }
}

/// A command as it ran: its command line, the feedback it was given, and whether the
/// engine stopped it.
#[derive(Debug, Clone)]
struct Ran {
    cmd: String,
    feedback: String,
    stopped: bool,
}

/// The scripted commands: each (task, command line) answers from its queue, the last answer
/// repeating; a command nobody scripted exits 0 at once.
#[derive(Debug, Default)]
struct Script {
    answers: Mutex<HashMap<(String, String), VecDeque<Answer>>>,
    ran: Mutex<Vec<Ran>>,
    started: Mutex<Vec<String>>,
    running: AtomicUsize,
    most: AtomicUsize,
}

impl Script {
    fn answer(&self, task: &str, cmd: &str, answers: impl IntoIterator<Item = Answer>) {
        self.answers
            .lock()
            .unwrap()
            .insert((task.into(), cmd.into()), answers.into_iter().collect());
    }

    fn next(&self, task: &str, cmd: &str) -> Answer {
        let mut all = self.answers.lock().unwrap();
        let Some(queue) = all.get_mut(&(task.to_owned(), cmd.to_owned())) else {
            return Answer::ok();
        };
        match queue.len() {
            0 => Answer::ok(),
            1 => queue[0].clone(),
            _ => queue.pop_front().unwrap(),
        }
    }

    fn ran(&self) -> Vec<Ran> {
        self.ran.lock().unwrap().clone()
    }

    /// The tasks whose command `cmd` started, in the order they started.
    fn started(&self, cmd: &str) -> Vec<String> {
        self.started
            .lock()
            .unwrap()
            .iter()
            .filter_map(|s| s.strip_suffix(&format!(" {cmd}")).map(str::to_owned))
            .collect()
    }
}

impl Commands for Script {
    fn run<'a>(&'a self, spec: Spec<'a>, mut stop: watch::Receiver<bool>) -> Running<'a> {
        Box::pin(async move {
            let env: HashMap<String, String> = spec.env.iter().cloned().collect();
            let task = env
                .get("RUNLOG_TASK")
                .cloned()
                .unwrap_or_else(|| "replan".into());
            let answer = self.next(&task, spec.cmd);
            self.started
                .lock()
                .unwrap()
                .push(format!("{task} {}", spec.cmd));
            let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            let feedback = env
                .get("RUNLOG_FEEDBACK")
                .and_then(|p| std::fs::read_to_string(p).ok())
                .unwrap_or_default();
            if let Some(dir) = env.get("RUNLOG_WORKTREE") {
                for (path, text) in &answer.writes {
                    let file = Path::new(dir).join(path);
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(file, text).unwrap();
                }
            }
            if let Some(f) = &answer.meanwhile {
                f();
            }
            let stopped = if answer.until_stopped {
                let _ = stop.wait_for(|s| *s).await;
                true
            } else {
                tokio::select! {
                    () = tokio::time::sleep(answer.hold) => false,
                    _ = stop.wait_for(|s| *s) => true,
                }
            };
            self.running.fetch_sub(1, Ordering::SeqCst);
            self.ran.lock().unwrap().push(Ran {
                cmd: spec.cmd.to_owned(),
                feedback,
                stopped,
            });
            Outcome {
                code: (!stopped).then_some(answer.code),
                stdout: answer.stdout,
                stderr: String::new(),
                duration: answer.hold,
                failure: stopped.then_some(Failure::Stopped),
                leftovers: None,
                left_out: [0, 0],
            }
        })
    }
}

/// A workflow, its files' directory, the in-memory log and the script its commands follow.
struct Bench {
    dir: tempfile::TempDir,
    log: Arc<Log>,
    script: Arc<Script>,
    host: Host,
}

impl Bench {
    fn new() -> Self {
        Self::with_vars(Vec::new())
    }

    /// With these variables in the engine's environment (a secret to redact, a key).
    fn with_vars(vars: Vec<(String, String)>) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            log: Arc::new(Log::memory().unwrap()),
            script: Arc::new(Script::default()),
            // A fixed clock: retry delays come due at once, and the history is the same on
            // every run.
            host: Host::of(vars, Some(1_000_000)),
        }
    }

    fn launcher(&self) -> Launcher {
        let log: Arc<dyn EventLog> = self.log.clone();
        Launcher::over(log, &self.dir.path().join("store"), &self.host)
            .with_commands(self.script.clone())
    }

    fn workflow(&self, toml: &str) -> Workflow {
        let path = self.dir.path().join("wf.toml");
        std::fs::write(&path, toml).unwrap();
        Workflow::load(&path).unwrap()
    }

    fn start(&self, toml: &str, opts: RunOptions) -> Engine {
        self.launcher()
            .start(&self.workflow(toml), Some("r".into()), opts)
            .unwrap()
    }

    fn events(&self) -> Vec<Event> {
        let log: &dyn EventLog = self.log.as_ref();
        runlog_replay::events::read(log, "r", 1, u64::MAX)
            .unwrap()
            .into_iter()
            .map(|(_, e)| e)
            .collect()
    }

    fn kinds(&self) -> Vec<EventKind> {
        self.events().into_iter().map(|e| e.kind).collect()
    }

    /// The head as a fresh replay of the log folds it (not the engine's own copy).
    fn replayed(&self) -> RunState {
        let log: &dyn EventLog = self.log.as_ref();
        runlog_replay::Replay::new(log).head_state("r").unwrap()
    }

    /// Appends `kind` as someone else would: a session of its own on the same log.
    fn record_elsewhere(log: &Arc<Log>, kind: CommandKind) {
        let log: &dyn EventLog = log.as_ref();
        let mut session = runlog_replay::Session::existing(log, "r").unwrap();
        session
            .execute(Command::new(Timestamp(2_000_000), kind))
            .unwrap()
            .unwrap();
    }
}

fn drive(engine: Engine) -> Ended {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), engine.drive())
            .await
            .expect("the run ended within a minute")
            .unwrap()
    })
}

fn status(state: &RunState, task: &str) -> Option<TaskStatus> {
    state.status_of(&TaskId::from(task))
}

const SETTINGS: &str = "[settings]\nworkspace = \"none\"\n";

#[test]
fn tasks_start_in_the_order_their_dependencies_allow() {
    let bench = Bench::new();
    let ended = drive(bench.start(
        &format!(
            "name = \"chain\"\n{SETTINGS}jobs = 4\n\
             [[task]]\nid = \"c\"\nrun = \"agent\"\nafter = [\"b\"]\nrequires_testing = false\n\
             [[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n\
             [[task]]\nid = \"b\"\nrun = \"agent\"\nafter = [\"a\"]\nrequires_testing = false\n"
        ),
        RunOptions::default(),
    ));
    assert!(ended.succeeded(), "{:?}", ended.state.status);
    assert_eq!(bench.script.started("agent"), ["a", "b", "c"]);
    assert_eq!(bench.script.most.load(Ordering::SeqCst), 1);
    assert_eq!(
        bench.replayed(),
        ended.state,
        "the engine's head is the log's"
    );
}

#[test]
fn no_more_commands_run_at_once_than_jobs_allows() {
    let bench = Bench::new();
    let mut toml = format!("name = \"wide\"\n{SETTINGS}jobs = 2\n");
    for i in 0..6 {
        toml.push_str(&format!(
            "[[task]]\nid = \"t{i}\"\nrun = \"agent\"\nrequires_testing = false\n"
        ));
        bench
            .script
            .answer(&format!("t{i}"), "agent", [Answer::ok().held(40)]);
    }
    let ended = drive(bench.start(&toml, RunOptions::default()));
    assert!(ended.succeeded());
    assert_eq!(bench.script.started("agent").len(), 6);
    assert_eq!(bench.script.most.load(Ordering::SeqCst), 2);
}

#[test]
fn the_jobs_option_overrides_the_workflow() {
    let bench = Bench::new();
    let mut toml = format!("name = \"wide\"\n{SETTINGS}jobs = 4\n");
    for i in 0..4 {
        toml.push_str(&format!(
            "[[task]]\nid = \"t{i}\"\nrun = \"agent\"\nrequires_testing = false\n"
        ));
        bench
            .script
            .answer(&format!("t{i}"), "agent", [Answer::ok().held(30)]);
    }
    let ended = drive(bench.start(&toml, RunOptions::with_jobs(Some(1)).unwrap()));
    assert!(ended.succeeded());
    assert_eq!(bench.script.most.load(Ordering::SeqCst), 1);
}

#[test]
fn a_failing_test_sends_the_failure_back_to_the_next_attempt() {
    let bench = Bench::new();
    bench.script.answer(
        "a",
        "check",
        [Answer::exit(1).says("assert 2 == 3"), Answer::ok()],
    );
    let ended = drive(bench.start(
        &format!(
            "name = \"t\"\n{SETTINGS}[[task]]\nid = \"a\"\nrun = \"agent\"\ntest = \"check\"\n"
        ),
        RunOptions::default(),
    ));
    assert!(ended.succeeded());
    let agents: Vec<Ran> = bench
        .script
        .ran()
        .into_iter()
        .filter(|r| r.cmd == "agent")
        .collect();
    assert_eq!(agents.len(), 2);
    assert_eq!(agents[0].feedback, "");
    assert!(
        agents[1].feedback.contains("tests failed") && agents[1].feedback.contains("assert 2 == 3"),
        "{:?}",
        agents[1].feedback
    );
    assert_eq!(ended.state.task(&"a".into()).unwrap().attempt, 2);
}

#[test]
fn tests_failing_past_the_retries_fail_the_task_and_block_its_dependents() {
    let bench = Bench::new();
    bench.script.answer("a", "check", [Answer::exit(1)]);
    let ended = drive(bench.start(
        &format!(
            "name = \"t\"\n{SETTINGS}max_test_retries = 2\n\
             [[task]]\nid = \"a\"\nrun = \"agent\"\ntest = \"check\"\n\
             [[task]]\nid = \"b\"\nrun = \"agent\"\nafter = [\"a\"]\nrequires_testing = false\n"
        ),
        RunOptions::default(),
    ));
    assert!(!ended.succeeded());
    assert_eq!(status(&ended.state, "a"), Some(TaskStatus::Failed));
    assert!(bench.script.started("agent").iter().all(|t| t == "a"));
    match &ended.state.status {
        runlog_core::RunStatus::Finished(RunOutcome::Failed { failed, blocked }) => {
            assert_eq!(failed, &[TaskId::from("a")]);
            assert_eq!(blocked, &[TaskId::from("b")]);
        }
        other => panic!("{other:?}"),
    }
    let failures = bench
        .kinds()
        .iter()
        .filter(|k| matches!(k, EventKind::TestsFailed { .. }))
        .count();
    assert_eq!(failures, 3, "the first try and two retries");
}

#[test]
fn a_low_score_is_rescued_by_the_same_agent_then_passes() {
    let bench = Bench::new();
    bench
        .script
        .answer("a", "judge", [Answer::score(0.4), Answer::score(0.9)]);
    let ended = drive(bench.start(
        &format!(
            "name = \"e\"\n{SETTINGS}eval_threshold = 0.7\n\
             [[task]]\nid = \"a\"\nrun = \"agent\"\neval = \"judge\"\nrequires_testing = false\n"
        ),
        RunOptions::default(),
    ));
    assert!(ended.succeeded());
    let gates: Vec<GateOutcome> = bench
        .kinds()
        .into_iter()
        .filter_map(|k| match k {
            EventKind::GateDecided { outcome, .. } => Some(outcome),
            _ => None,
        })
        .collect();
    assert_eq!(gates, [GateOutcome::Rescue { n: 1 }, GateOutcome::Pass]);
    assert_eq!(bench.script.started("agent"), ["a", "a"]);
    let second = &bench.script.ran()[2];
    assert!(second.feedback.contains("0.4"), "{:?}", second.feedback);
}

#[test]
fn rescues_run_out_and_the_task_fails() {
    let bench = Bench::new();
    bench.script.answer("a", "judge", [Answer::score(0.2)]);
    let ended = drive(bench.start(
        &format!(
            "name = \"e\"\n{SETTINGS}max_eval_rescues = 2\n\
             [[task]]\nid = \"a\"\nrun = \"agent\"\neval = \"judge\"\nrequires_testing = false\n"
        ),
        RunOptions::default(),
    ));
    assert_eq!(status(&ended.state, "a"), Some(TaskStatus::Failed));
    assert_eq!(bench.script.started("judge").len(), 3);
    assert!(matches!(
        bench
            .kinds()
            .iter()
            .rev()
            .find(|k| matches!(k, EventKind::GateDecided { .. })),
        Some(EventKind::GateDecided {
            outcome: GateOutcome::Fail,
            ..
        })
    ));
}

#[test]
fn an_agent_that_keeps_failing_is_retried_as_its_policy_says_then_failed() {
    let bench = Bench::new();
    bench.script.answer("a", "agent", [Answer::exit(3)]);
    let ended = drive(bench.start(
        &format!(
            "name = \"r\"\n{SETTINGS}\
             [[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n\
             retry = {{ max = 2, delay_ms = 5000 }}\n"
        ),
        RunOptions::default(),
    ));
    assert_eq!(status(&ended.state, "a"), Some(TaskStatus::Failed));
    assert_eq!(bench.script.started("agent").len(), 3);
    let delays: Vec<u64> = bench
        .kinds()
        .into_iter()
        .filter_map(|k| match k {
            EventKind::RetryScheduled { delay_ms, .. } => Some(delay_ms),
            _ => None,
        })
        .collect();
    // The default backoff doubles the delay; the fixed clock lets each come due at once.
    assert_eq!(delays, [5000, 10000]);
}

#[test]
fn a_task_over_its_budget_is_stopped_before_another_attempt() {
    let bench = Bench::new();
    bench.script.answer(
        "a",
        "agent",
        [Answer::ok().says(
            "{\"model\": \"claude-sonnet-4\", \"usage\": {\"input_tokens\": 3000, \"output_tokens\": 1500}}",
        )],
    );
    bench.script.answer("a", "check", [Answer::exit(1)]);
    let ended = drive(bench.start(
        &format!(
            "name = \"b\"\n{SETTINGS}\
             [[task]]\nid = \"a\"\nrun = \"agent\"\ntest = \"check\"\n\
             budget = {{ max_tokens = 1000 }}\n"
        ),
        RunOptions::default(),
    ));
    assert_eq!(status(&ended.state, "a"), Some(TaskStatus::Failed));
    assert_eq!(bench.script.started("agent").len(), 1, "no second attempt");
    let kinds = bench.kinds();
    assert!(kinds
        .iter()
        .any(|k| matches!(k, EventKind::BudgetSpent { .. })));
    let a = ended.state.task(&"a".into()).unwrap();
    assert_eq!(a.spend.tokens.input, 3000);
    assert_eq!(a.spend.tokens.output, 1500);
}

#[test]
fn the_stop_switch_stops_running_commands_and_records_the_interrupt() {
    let bench = Bench::new();
    bench
        .script
        .answer("a", "agent", [Answer::ok().until_stopped()]);
    let engine = bench.start(
        &format!("name = \"s\"\n{SETTINGS}[[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n"),
        RunOptions::default(),
    );
    let (stop, stopped) = watch::channel(false);
    let script = bench.script.clone();
    std::thread::spawn(move || {
        while script.started("agent").is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = stop.send(true);
        // Kept until the engine is done with it.
        std::thread::sleep(Duration::from_secs(5));
    });
    let ended = drive(engine.stop_when(stopped));
    assert!(ended.interrupted);
    assert_eq!(ended.state.status, runlog_core::RunStatus::Interrupted);
    assert!(bench.script.ran()[0].stopped, "the agent was asked to stop");
    assert!(matches!(
        bench.kinds().last(),
        Some(EventKind::RunInterrupted { .. })
    ));
}

#[test]
fn an_interrupted_run_resumes_where_it_stopped() {
    let bench = Bench::new();
    bench
        .script
        .answer("b", "agent", [Answer::ok().until_stopped(), Answer::ok()]);
    let toml = format!(
        "name = \"s\"\n{SETTINGS}\
         [[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n\
         [[task]]\nid = \"b\"\nrun = \"agent\"\nafter = [\"a\"]\nrequires_testing = false\n"
    );
    let engine = bench.start(&toml, RunOptions::default());
    let (stop, stopped) = watch::channel(false);
    let script = bench.script.clone();
    let asker = std::thread::spawn(move || {
        while script.started("agent").len() < 2 {
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = stop.send(true);
        stop
    });
    let first = drive(engine.stop_when(stopped));
    drop(asker.join());
    assert!(first.interrupted);
    let (engine, _notes) = bench.launcher().resume("r", RunOptions::default()).unwrap();
    let ended = drive(engine);
    assert!(ended.succeeded());
    assert_eq!(
        bench.script.started("agent"),
        ["a", "b", "b"],
        "a is not run again"
    );
    assert_eq!(ended.state.task(&"b".into()).unwrap().attempt, 2);
    assert!(bench
        .kinds()
        .iter()
        .any(|k| matches!(k, EventKind::RunResumed { .. })));
}

#[test]
fn a_task_cancelled_elsewhere_while_its_agent_runs_is_stopped_and_stays_cancelled() {
    let bench = Bench::new();
    let log = bench.log.clone();
    bench.script.answer(
        "a",
        "agent",
        [Answer::ok().until_stopped().meanwhile(move || {
            Bench::record_elsewhere(
                &log,
                CommandKind::Cancel {
                    task: "a".into(),
                    reason: "not needed".into(),
                },
            )
        })],
    );
    let ended = drive(bench.start(
        &format!("name = \"c\"\n{SETTINGS}[[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n"),
        RunOptions::default(),
    ));
    assert_eq!(status(&ended.state, "a"), Some(TaskStatus::Cancelled));
    assert!(bench.script.ran()[0].stopped);
    assert_eq!(
        bench.script.started("agent").len(),
        1,
        "never started again"
    );
    assert_eq!(bench.replayed(), ended.state);
}

#[test]
fn a_step_that_loses_its_race_on_the_log_is_decided_again_on_the_new_head() {
    let bench = Bench::new();
    let log = bench.log.clone();
    // While a runs, someone else appends: a's end is decided on a head that has moved, and b,
    // cancelled meanwhile, must not start on the strength of the older head.
    bench.script.answer(
        "a",
        "agent",
        [Answer::ok().held(20).meanwhile(move || {
            Bench::record_elsewhere(
                &log,
                CommandKind::Cancel {
                    task: "b".into(),
                    reason: "decided elsewhere".into(),
                },
            )
        })],
    );
    let ended = drive(bench.start(
        &format!(
            "name = \"race\"\n{SETTINGS}\
             [[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n\
             [[task]]\nid = \"b\"\nrun = \"agent\"\nafter = [\"a\"]\nrequires_testing = false\n\
             [[task]]\nid = \"c\"\nrun = \"agent\"\nafter = [\"a\"]\nrequires_testing = false\n"
        ),
        RunOptions::default(),
    ));
    assert_eq!(status(&ended.state, "a"), Some(TaskStatus::Done));
    assert_eq!(status(&ended.state, "b"), Some(TaskStatus::Cancelled));
    assert_eq!(status(&ended.state, "c"), Some(TaskStatus::Done));
    assert!(!bench.script.started("agent").contains(&"b".to_owned()));
    assert_eq!(bench.replayed(), ended.state, "one chain, folded the same");
    let log: &dyn EventLog = bench.log.as_ref();
    let report = log.verify("r").unwrap();
    assert!(report.is_ok(), "{:?}", report.damage);
    assert_eq!(report.verified, ended.state.seq);
}

#[test]
fn secrets_in_a_commands_output_are_replaced_before_they_are_recorded() {
    let secret = "hunter2-correct-horse-battery";
    let bench = Bench::with_vars(vec![("DEPLOY_TOKEN".into(), secret.into())]);
    bench.script.answer(
        "a",
        "agent",
        [Answer::ok().says(&format!("deploying with {secret}\ndone"))],
    );
    drive(bench.start(
        &format!("name = \"x\"\n{SETTINGS}[[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n"),
        RunOptions::default(),
    ));
    let kinds = bench.kinds();
    let text = serde_json::to_string(&kinds).unwrap();
    assert!(!text.contains(secret), "the secret reached the log");
    assert!(text.contains("[redacted:DEPLOY_TOKEN]"), "{text}");
    let redacted = kinds
        .iter()
        .position(|k| matches!(k, EventKind::SecretsRedacted { .. }))
        .unwrap();
    let output = kinds
        .iter()
        .position(|k| matches!(k, EventKind::OutputRecorded { .. }))
        .unwrap();
    assert!(redacted < output, "the replacement is said first");
}

#[test]
fn a_large_output_is_kept_whole_as_a_blob_with_its_beginning_inline() {
    let bench = Bench::new();
    let long = "line of output\n".repeat(20_000);
    bench
        .script
        .answer("a", "agent", [Answer::ok().says(&long)]);
    drive(bench.start(
        &format!("name = \"o\"\n{SETTINGS}[[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n"),
        RunOptions::default(),
    ));
    let (text, blob, bytes) = bench
        .kinds()
        .into_iter()
        .find_map(|k| match k {
            EventKind::OutputRecorded {
                text, blob, bytes, ..
            } => Some((text, blob, bytes)),
            _ => None,
        })
        .unwrap();
    assert_eq!(bytes, long.len() as u64);
    assert!(text.len() < long.len() && long.starts_with(&text));
    let log: &dyn EventLog = bench.log.as_ref();
    let whole = log.get_blob(&blob.unwrap().0).unwrap().unwrap();
    assert_eq!(whole, long.as_bytes());
}

#[test]
fn done_tasks_are_merged_into_the_runs_branch_in_a_git_workspace() {
    let bench = Bench::new();
    let repo = bench.dir.path();
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(repo)
            .output()
            .expect("git is installed");
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q", "-b", "main"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "base",
    ]);
    bench
        .script
        .answer("a", "agent", [Answer::ok().writes("a.txt", "from a\n")]);
    bench
        .script
        .answer("b", "agent", [Answer::ok().writes("b.txt", "from b\n")]);
    let ended = drive(bench.start(
        "name = \"g\"\n[settings]\nworkspace = \"git\"\n\
         [[task]]\nid = \"a\"\nrun = \"agent\"\nrequires_testing = false\n\
         [[task]]\nid = \"b\"\nrun = \"agent\"\nrequires_testing = false\n",
        RunOptions::default(),
    ));
    assert!(ended.succeeded(), "{:?}", ended.state.status);
    let merged = bench
        .kinds()
        .iter()
        .filter(|k| matches!(k, EventKind::TaskMerged { .. }))
        .count();
    assert_eq!(merged, 2);
    let tip = &ended.state.workspace.as_ref().unwrap().tip;
    let files = git(&["ls-tree", "--name-only", tip]);
    assert_eq!(files.lines().collect::<Vec<_>>(), ["a.txt", "b.txt"]);
    assert!(
        !PathBuf::from(repo).join("a.txt").exists(),
        "the checkout is untouched"
    );
}
