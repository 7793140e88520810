//! Workflow files: TOML in, a validated plan out, with errors that name the file, the line,
//! the field and what is allowed.

use super::discovery::{self, Discovery};
use super::error::WorkflowError;
use runlog_core::redact::{Redactor, DEFAULT_ENV_PATTERNS};
use runlog_core::usage::Limits;
use runlog_core::{
    decide, Command, CommandKind, CostPolicy, Hash, RunId, RunState, Settings, StageId, TaskId,
    TaskSpec, Timestamp,
};
use runlog_core::{Budget, RetryLimit, RetryStrategy};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether a task must say the command that does it: in a file the runner runs, yes; in a
/// start-run command an orchestrator emits, no (it does the work and records it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Commands {
    /// Every task that is not a group has `run`.
    Required,
    /// Tasks may leave `run` out.
    Optional,
}

/// A workflow file as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkflowFile {
    /// The workflow's name (run ids default to it plus a counter).
    pub name: String,
    /// Settings.
    #[serde(default)]
    pub settings: SettingsFile,
    /// Tasks (`[[task]]` in a file, `"tasks"` in a start-run command).
    #[serde(default, rename = "task", alias = "tasks")]
    pub tasks: Vec<TaskFile>,
    /// `[prices."MODEL"]`: what runlog prices usage reported without a cost with.
    #[serde(default)]
    pub prices: std::collections::BTreeMap<String, PriceFile>,
}

/// `[prices."MODEL"]`, in USD per million tokens.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceFile {
    /// Input tokens not read from or written to a cache.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
    /// Tokens read from a cache (default: the input price).
    pub cache_read: Option<f64>,
    /// Tokens written to a cache (default: the input price).
    pub cache_write: Option<f64>,
}

/// `budget = { max_cost_usd = 2.0, max_tokens = 500000 }` on a task.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsFile {
    /// Dollars, reported or priced.
    pub max_cost_usd: Option<f64>,
    /// Input and output tokens.
    pub max_tokens: Option<u64>,
}

impl LimitsFile {
    fn limits(self) -> Limits {
        Limits {
            max_cost_usd: self.max_cost_usd,
            max_tokens: self.max_tokens,
        }
    }
}

impl WorkflowFile {
    /// Ids of the tasks some task names as its parent.
    fn groups(&self) -> std::collections::HashSet<&str> {
        self.tasks
            .iter()
            .filter_map(|t| t.parent.as_deref())
            .collect()
    }
}

/// `[settings]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingsFile {
    /// Tasks running at once (default 4).
    pub jobs: Option<u32>,
    /// Eval gate threshold (default 0.7).
    pub eval_threshold: Option<f64>,
    /// Rescue below-threshold tasks (default true).
    pub auto_rescue: Option<bool>,
    /// Rescues per task (default 3).
    pub max_eval_rescues: Option<u32>,
    /// Test retries per task (default 3).
    pub max_test_retries: Option<u32>,
    /// Deepest nesting (default 3).
    pub max_depth: Option<u32>,
    /// Command that revises the plan after a replan request (board JSON on stdin).
    pub replan: Option<String>,
    /// Events after which the run's history is reported as large (default 100,000).
    pub history_warn_events: Option<u64>,
    /// Milliseconds the replan command may take before it is stopped (default 600,000).
    pub replan_timeout_ms: Option<u64>,
    /// Milliseconds between SIGTERM and SIGKILL when a command must be stopped (default 3,000).
    pub kill_grace_ms: Option<u64>,
    /// Bytes kept of each output stream of a command (default 16 MiB): the first and the last
    /// half of what it printed, with the size of what was left out.
    pub output_cap_bytes: Option<u64>,
    /// Bytes of a task's story kept in the file its agent reads (`RUNLOG_HISTORY`, default
    /// 1 MiB): the newest events whole, the oldest left out first.
    pub history_cap_bytes: Option<u64>,
    /// Where tasks work: `git` (each task in a git worktree of its own, merged when done) or
    /// `none` (every command in the workflow's directory). Default: `git` when the workflow's
    /// directory is in a git repository, else `none`.
    pub workspace: Option<String>,
    /// A repository shared by workers on several hosts (a path or URL): task branches are
    /// fetched from it before an attempt and pushed to it after.
    pub repo: Option<String>,
    /// Every task must be tested (default false): a task that names no `test` gets one by the
    /// test conventions, or the file is refused. A task's own `requires_testing` wins.
    pub requires_testing: Option<bool>,
    /// The run's dollar budget: once spent, no new attempt, rescue, retry or replan starts.
    pub max_cost_usd: Option<f64>,
    /// The run's token budget (input and output tokens).
    pub max_tokens: Option<u64>,
    /// The environment variables whose values are secrets, never recorded: names, `*` for any
    /// characters (default `*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`; `[]` for none).
    pub redact_env: Option<Vec<String>>,
    /// A file of more secrets, one per line (`NAME=VALUE`, or a bare value), relative to the
    /// workflow's directory.
    pub redact_file: Option<String>,
}

/// Where a run's tasks work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkspaceMode {
    /// Git when the workflow's directory is in a repository, else none.
    #[default]
    Auto,
    /// Each task in a git worktree of its own.
    Git,
    /// Every command in the workflow's directory.
    None,
}

/// How the runner treats the workflow's processes. Read from the workflow file each time a run
/// is driven (`run`, `resume`), not recorded: they change how commands are run, not the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerSettings {
    /// The command that revises the plan after a replan request (board JSON on stdin).
    pub replan: Option<String>,
    /// How long the replan command may take.
    pub replan_timeout: Duration,
    /// Between SIGTERM and SIGKILL when a timed-out, cancelled or interrupted command is stopped.
    pub grace: Duration,
    /// Bytes kept of each output stream of a command.
    pub output_cap: usize,
    /// Bytes of a task's story in its `RUNLOG_HISTORY` file.
    pub history_cap: usize,
    /// Where tasks work.
    pub workspace: WorkspaceMode,
    /// A repository shared by workers on several hosts.
    pub repo: Option<String>,
    /// The secrets replaced before anything is recorded: the environment's by name, the
    /// `redact_file`'s, and the well-known key shapes.
    pub redactor: std::sync::Arc<Redactor>,
}

/// The smallest `output_cap_bytes`: below it the head and tail could not hold an agent's report.
pub const MIN_OUTPUT_CAP: u64 = 4 * 1024;

impl Default for RunnerSettings {
    fn default() -> Self {
        Self::redacting(DEFAULT_ENV_PATTERNS, Vec::new())
    }
}

impl RunnerSettings {
    /// The defaults, with the secrets of this process's environment variables whose names
    /// match `patterns`, and `listed` ones.
    fn redacting(patterns: &[&str], listed: Vec<(String, String)>) -> Self {
        let mut secrets = Redactor::from_env(std::env::vars(), patterns);
        secrets.extend(listed);
        Self {
            replan: None,
            replan_timeout: Duration::from_secs(600),
            grace: Duration::from_secs(3),
            output_cap: 16 * 1024 * 1024,
            history_cap: 1024 * 1024,
            workspace: WorkspaceMode::Auto,
            repo: None,
            redactor: std::sync::Arc::new(Redactor::new(secrets)),
        }
    }

    fn of(s: &SettingsFile, listed: Vec<(String, String)>) -> Self {
        let patterns: Vec<&str> = match &s.redact_env {
            Some(names) => names.iter().map(String::as_str).collect(),
            None => DEFAULT_ENV_PATTERNS.to_vec(),
        };
        let d = Self::redacting(&patterns, listed);
        Self {
            redactor: d.redactor.clone(),
            replan: s.replan.clone(),
            replan_timeout: s
                .replan_timeout_ms
                .map_or(d.replan_timeout, Duration::from_millis),
            grace: s.kill_grace_ms.map_or(d.grace, Duration::from_millis),
            output_cap: s
                .output_cap_bytes
                .map_or(d.output_cap, |b| usize::try_from(b).unwrap_or(usize::MAX)),
            history_cap: s
                .history_cap_bytes
                .map_or(d.history_cap, |b| usize::try_from(b).unwrap_or(usize::MAX)),
            workspace: match s.workspace.as_deref() {
                Some("git") => WorkspaceMode::Git,
                Some("none") => WorkspaceMode::None,
                _ => WorkspaceMode::Auto,
            },
            repo: s.repo.clone(),
        }
    }
}

/// `[[task]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskFile {
    /// Stable id.
    pub id: String,
    /// What to do.
    #[serde(default)]
    pub description: String,
    /// The agent command.
    pub run: Option<String>,
    /// The test command.
    pub test: Option<String>,
    /// The evaluator command.
    pub eval: Option<String>,
    /// Dependencies.
    #[serde(default)]
    pub after: Vec<String>,
    /// Parent group.
    pub parent: Option<String>,
    /// Files it touches.
    #[serde(default)]
    pub files: Vec<String>,
    /// Whether it is destructive (default: guessed from the description).
    pub destructive: Option<bool>,
    /// Supervisor stage (default: the task id).
    pub stage: Option<String>,
    /// Retry strategy.
    pub retry: Option<RetryFile>,
    /// Checkpoints required before it may resolve.
    #[serde(default)]
    pub checkpoints: Vec<String>,
    /// `false` skips testing.
    pub requires_testing: Option<bool>,
    /// The pytest file that tests it, beside the workflow (instead of `test`).
    pub test_file: Option<String>,
    /// Another workflow file this task runs as a child run (a sub-project), instead of `run`.
    pub workflow: Option<String>,
    /// The task's own cost and token budget.
    pub budget: Option<LimitsFile>,
}

/// `max = 3` or `max = "unlimited"`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum MaxFile {
    /// A number of retries.
    Count(u32),
    /// `"unlimited"`.
    Word(String),
}

/// `[task.retry]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetryFile {
    /// Retries after the first attempt, or "unlimited".
    pub max: Option<MaxFile>,
    /// Bounds for unlimited retries.
    pub budget: Option<BudgetFile>,
    /// Delay before the first retry.
    pub delay_ms: Option<u64>,
    /// Multiplier for each further delay.
    pub backoff: Option<f64>,
    /// Per-attempt timeout.
    pub timeout_ms: Option<u64>,
    /// Consecutive stage failures that open the circuit (0: never).
    pub circuit_after: Option<u32>,
}

/// `budget = { attempts = 20, ms = 600000 }`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetFile {
    /// Total attempts.
    pub attempts: Option<u32>,
    /// Milliseconds from the first start.
    pub ms: Option<u64>,
}

/// A workflow ready to run.
#[derive(Debug, Clone)]
pub struct Workflow {
    /// Absolute path of the file.
    pub path: PathBuf,
    /// The directory commands run in.
    pub dir: PathBuf,
    /// blake3 of the file.
    pub hash: Hash,
    /// Name.
    pub name: String,
    /// Settings.
    pub settings: Settings,
    /// How the runner treats its processes.
    pub runner: RunnerSettings,
    /// The tasks.
    pub tasks: Vec<TaskSpec>,
    /// The test commands found by convention, recorded right after the run starts.
    pub discovered: Vec<Discovery>,
    /// The sub-project tasks and the workflow each runs as a child run: `(task, workflow)`.
    pub sub_projects: Vec<(String, String)>,
    /// Prices and budgets.
    pub cost: CostPolicy,
}

/// The 1-based line where `id = "…"` for a task appears, to point errors at it.
fn line_of_task(text: &str, id: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim();
            l.starts_with("id") && l.contains(&format!("\"{id}\""))
        })
        .map(|i| i + 1)
}

/// `line N, task "ID", `: where a task's field error is.
fn task_place(text: &str, id: &str) -> String {
    match line_of_task(text, id) {
        Some(line) => format!("line {line}, task {id:?}, "),
        None => format!("task {id:?}, "),
    }
}

impl Workflow {
    /// Reads and validates a workflow file; nothing runs if this fails.
    pub fn load(path: &Path) -> Result<Self, WorkflowError> {
        Self::load_within(path, None)
    }

    /// Reads and validates a workflow file that runs as a sub-project, with `depth_left`
    /// levels of nesting left under its parent's `max_depth` (nesting counts across runs).
    pub fn load_within(path: &Path, depth_left: Option<u32>) -> Result<Self, WorkflowError> {
        let text = std::fs::read_to_string(path).map_err(|source| WorkflowError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse_within(&text, path, depth_left)
    }

    /// Validates a workflow file's text; `path` names it in errors and anchors its commands.
    pub fn parse(text: &str, path: &Path) -> Result<Self, WorkflowError> {
        Self::parse_within(text, path, None)
    }

    fn parse_within(
        text: &str,
        path: &Path,
        depth_left: Option<u32>,
    ) -> Result<Self, WorkflowError> {
        let file: WorkflowFile = toml::from_str(text).map_err(|e| WorkflowError::Syntax {
            path: path.to_path_buf(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        Self::from_file(&file, text, path, Commands::Required, depth_left)
    }

    /// A start-run command as a person or an orchestrator writes it, with the defaults of a
    /// workflow file: `{"command": "start-run", "run": "r1", "tasks": [{"id": "a"}]}`, plus
    /// optional `"workflow"` (its name, default the run id) and `"settings"`. Tasks need no
    /// `run` command: whoever emits the run's commands does the work. `None` when `line` is
    /// not a start-run command at all.
    pub fn short_start(line: &str) -> Option<Result<CommandKind, WorkflowError>> {
        let serde_json::Value::Object(mut obj) = serde_json::from_str(line).ok()? else {
            return None;
        };
        if obj.remove("command")? != "start-run" {
            return None;
        }
        let path = Path::new("start-run");
        let syntax = |message: String| WorkflowError::Syntax {
            path: path.to_path_buf(),
            message,
        };
        let Some(serde_json::Value::String(run)) = obj.remove("run") else {
            return Some(Err(syntax(
                "a start-run command needs \"run\": \"ID\"".into(),
            )));
        };
        let name = obj
            .remove("workflow")
            .unwrap_or_else(|| serde_json::Value::String(run.clone()));
        obj.insert("name".into(), name);
        Some(
            serde_json::from_value::<WorkflowFile>(serde_json::Value::Object(obj))
                .map_err(|e| syntax(e.to_string()))
                .and_then(|file| Self::from_file(&file, line, path, Commands::Optional, None))
                .map(|wf| wf.start_command(RunId::from(run.as_str()))),
        )
    }

    fn from_file(
        file: &WorkflowFile,
        text: &str,
        path: &Path,
        commands: Commands,
        depth_left: Option<u32>,
    ) -> Result<Self, WorkflowError> {
        let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        let d = Settings::default();
        let s = &file.settings;
        let settings = Settings {
            eval_threshold: s.eval_threshold.unwrap_or(d.eval_threshold),
            auto_rescue: s.auto_rescue.unwrap_or(d.auto_rescue),
            max_eval_rescues: s.max_eval_rescues.unwrap_or(d.max_eval_rescues),
            max_test_retries: s.max_test_retries.unwrap_or(d.max_test_retries),
            // A sub-project nests inside its parent task: what is left of the parent's depth.
            max_depth: s
                .max_depth
                .unwrap_or(d.max_depth)
                .min(depth_left.unwrap_or(u32::MAX)),
            jobs: s.jobs.unwrap_or(d.jobs),
            history_warn_events: s.history_warn_events.unwrap_or(d.history_warn_events),
        };
        if let Some(w) = s
            .workspace
            .as_deref()
            .filter(|w| !["git", "none"].contains(w))
        {
            return Err(WorkflowError::Field {
                path,
                place: "[settings], ".into(),
                field: "workspace",
                message: format!("{w:?} is not a workspace: \"git\" or \"none\""),
            });
        }
        if let Some(cap) = s.output_cap_bytes.filter(|c| *c < MIN_OUTPUT_CAP) {
            return Err(WorkflowError::Field {
                path,
                place: "[settings], ".into(),
                field: "output_cap_bytes",
                message: format!("{cap} is too small: at least {MIN_OUTPUT_CAP} bytes"),
            });
        }
        let mut tasks = Vec::new();
        let groups = file.groups();
        for t in &file.tasks {
            let is_group = groups.contains(t.id.as_str());
            let field_error = |(field, message): (&'static str, String)| WorkflowError::Field {
                path: path.clone(),
                place: task_place(text, &t.id),
                field,
                message,
            };
            let must_test = s.requires_testing.unwrap_or(false);
            tasks.push(
                t.to_spec(is_group, commands, must_test)
                    .map_err(field_error)?,
            );
            if is_group && t.workflow.is_some() {
                return Err(field_error((
                    "workflow",
                    "a group's work is its children; a sub-project task has no children".into(),
                )));
            }
        }
        let mut wf = Workflow {
            hash: Hash::of(text.as_bytes()),
            name: file.name.clone(),
            settings,
            runner: RunnerSettings::of(&file.settings, redact_file(s, &dir, &path)?),
            tasks,
            discovered: Vec::new(),
            sub_projects: Vec::new(),
            cost: cost_policy(file, text, &path)?,
            dir,
            path,
        };
        // The plan rules (ids, dependencies, cycles, depth, settings) are the engine's own:
        // ask `decide` now, before anything runs.
        if let Err(r) = decide(
            &RunState::default(),
            Command::new(Timestamp(0), wf.start_command(RunId::from("check"))),
        ) {
            let task = match &r {
                runlog_core::Rejection::UnknownDependency { task, .. }
                | runlog_core::Rejection::UnknownParent { task, .. }
                | runlog_core::Rejection::DuplicateTask { task }
                | runlog_core::Rejection::TooDeep { task, .. } => Some(task.0.clone()),
                _ => None,
            };
            let place = task
                .and_then(|t| line_of_task(text, &t))
                .map(|l| format!("line {l}: "))
                .unwrap_or_default();
            return Err(WorkflowError::Plan {
                path: wf.path,
                place,
                rejection: Box::new(r),
            });
        }
        if commands == Commands::Required {
            wf.check_sub_projects(file, text)?;
            wf.discover_tests(file, text)?;
        }
        Ok(wf)
    }

    /// Each sub-project's workflow is read and validated now, recursively, with the depth its
    /// task leaves it: a wrong or too deeply nested child stops the parent before it starts.
    fn check_sub_projects(&mut self, file: &WorkflowFile, text: &str) -> Result<(), WorkflowError> {
        for t in &file.tasks {
            let Some(child) = &t.workflow else {
                continue;
            };
            let depth = runlog_core::depth_among(&self.tasks, &TaskId(t.id.clone()));
            let left = self.settings.max_depth.saturating_sub(depth);
            if left == 0 {
                return Err(WorkflowError::Field {
                    path: self.path.clone(),
                    place: task_place(text, &t.id),
                    field: "workflow",
                    message: format!(
                        "the task is at depth {depth}, and max_depth {} leaves its sub-project no level (nesting counts across runs)",
                        self.settings.max_depth
                    ),
                });
            }
            Self::load_within(&self.dir.join(child), Some(left))?;
            self.sub_projects.push((t.id.clone(), child.clone()));
        }
        Ok(())
    }

    /// Each task the runner must test and has no `test` for gets one by the conventions, tried
    /// beside the workflow; a task that matches none is refused now, before the run starts.
    fn discover_tests(&mut self, file: &WorkflowFile, text: &str) -> Result<(), WorkflowError> {
        let groups = file.groups();
        for (spec, t) in self.tasks.iter_mut().zip(&file.tasks) {
            let is_group = groups.contains(t.id.as_str());
            // A sub-project's tasks are tested in its own run.
            if is_group || t.workflow.is_some() || !spec.requires_testing || spec.test.is_some() {
                continue;
            }
            let found = match discovery::discover(&self.dir, &t.id, t.test_file.as_deref()) {
                Ok(Some(found)) => found,
                Ok(None) => {
                    return Err(WorkflowError::NoTests {
                        path: self.path.clone(),
                        place: line_of_task(text, &t.id)
                            .map(|l| format!("line {l}: "))
                            .unwrap_or_default(),
                        task: t.id.clone(),
                    })
                }
                Err(message) => {
                    return Err(WorkflowError::Field {
                        path: self.path.clone(),
                        place: task_place(text, &t.id),
                        field: "test_file",
                        message,
                    })
                }
            };
            spec.test = Some(found.test.clone());
            self.discovered.push(found);
        }
        Ok(())
    }

    /// How the run records where its workflow is: relative to the current directory when the
    /// file is under it (a run belongs to the directory its `.runlog` store is in), else absolute.
    pub fn recorded_path(&self) -> String {
        let here = std::env::current_dir()
            .ok()
            .and_then(|d| std::fs::canonicalize(d).ok());
        match here.as_deref().and_then(|d| self.path.strip_prefix(d).ok()) {
            Some(rel) => rel.display().to_string(),
            None => self.path.display().to_string(),
        }
    }

    /// The commands that start a run of this workflow: the start, then the record of each test
    /// command found by convention.
    pub fn start_commands(&self, run: RunId) -> Vec<CommandKind> {
        std::iter::once(self.start_command(run))
            .chain(self.discovered.iter().map(Discovery::command))
            .chain(self.sub_projects.iter().map(|(task, workflow)| {
                CommandKind::DeclareSubProject {
                    task: TaskId(task.clone()),
                    workflow: workflow.clone(),
                }
            }))
            .collect()
    }

    /// The command that starts a run of this workflow.
    pub fn start_command(&self, run: RunId) -> CommandKind {
        CommandKind::StartRun {
            run,
            workflow: self.recorded_path(),
            workflow_hash: self.hash,
            settings: self.settings.clone(),
            tasks: self.tasks.clone(),
            cost: self.cost.clone(),
        }
    }
}

/// The workflow's prices and budgets, each checked where it is written.
/// The secrets of `[settings] redact_file`, read now: a file that cannot be read refuses the
/// workflow (a run must never start believing it hides what it does not).
fn redact_file(
    s: &SettingsFile,
    dir: &Path,
    path: &Path,
) -> Result<Vec<(String, String)>, WorkflowError> {
    let Some(file) = &s.redact_file else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(dir.join(file)).map_err(|e| WorkflowError::Field {
        path: path.to_path_buf(),
        place: "[settings], ".into(),
        field: "redact_file",
        message: format!("cannot read {file}: {e}"),
    })?;
    Ok(Redactor::parse_file(&text))
}

fn cost_policy(file: &WorkflowFile, text: &str, path: &Path) -> Result<CostPolicy, WorkflowError> {
    let field = |place: String, field: &'static str, message: String| WorkflowError::Field {
        path: path.to_path_buf(),
        place,
        field,
        message,
    };
    let mut prices = runlog_core::usage::Prices::new();
    for (model, p) in &file.prices {
        let price = runlog_core::usage::Price {
            input: p.input,
            output: p.output,
            cache_read: p.cache_read,
            cache_write: p.cache_write,
        };
        if let Some(why) = price.invalid() {
            return Err(field(format!("[prices.{model:?}], "), "price", why));
        }
        prices.insert(model.clone(), price);
    }
    let s = &file.settings;
    let budget = LimitsFile {
        max_cost_usd: s.max_cost_usd,
        max_tokens: s.max_tokens,
    }
    .limits();
    if let Some(why) = budget.invalid() {
        return Err(field("[settings], ".into(), "max_cost_usd", why));
    }
    let mut task_budgets = std::collections::BTreeMap::new();
    for t in &file.tasks {
        let Some(b) = t.budget else { continue };
        if let Some(why) = b.limits().invalid() {
            return Err(field(task_place(text, &t.id), "budget", why));
        }
        task_budgets.insert(TaskId(t.id.clone()), b.limits());
    }
    Ok(CostPolicy {
        prices,
        budget,
        task_budgets,
    })
}

impl TaskFile {
    /// The spec this task declares; `is_group` when other tasks name it as their parent.
    /// Errors name the field.
    /// The task's spec; `must_test`: the workflow asks every task to be tested (a task with a
    /// `test` is tested either way).
    pub fn to_spec(
        &self,
        is_group: bool,
        commands: Commands,
        must_test: bool,
    ) -> Result<TaskSpec, (&'static str, String)> {
        let retry = match &self.retry {
            None => RetryStrategy::default(),
            Some(r) => retry_strategy(r).map_err(|m| ("retry", m))?,
        };
        if self.test_file.is_some() && self.test.is_some() {
            return Err((
                "test_file",
                "give `test` (a command) or `test_file` (a pytest file), not both".into(),
            ));
        }
        if self.workflow.is_some() && (self.run.is_some() || self.test_file.is_some()) {
            return Err((
                "workflow",
                "a sub-project task runs its workflow: leave out `run` and `test_file`".into(),
            ));
        }
        if self.run.is_none()
            && self.workflow.is_none()
            && !is_group
            && commands == Commands::Required
        {
            return Err((
                "run",
                "a task needs a `run` command unless it is a group (has children)".into(),
            ));
        }
        Ok(TaskSpec {
            id: TaskId(self.id.clone()),
            description: if self.description.is_empty() {
                self.id.clone()
            } else {
                self.description.clone()
            },
            after: self.after.iter().map(|a| TaskId(a.clone())).collect(),
            parent: self.parent.clone().map(TaskId),
            files: self.files.clone(),
            destructive: self.destructive,
            run: self.run.clone(),
            test: self.test.clone(),
            eval: self.eval.clone(),
            requires_testing: self
                .requires_testing
                .unwrap_or(must_test || self.test.is_some() || self.test_file.is_some()),
            stage: self.stage.clone().map(StageId),
            retry,
            checkpoints: self.checkpoints.clone(),
        })
    }
}

/// The specs of tasks added to a live run (a plan revision, an agent's `add_tasks`). Their
/// test commands are not discovered: a `test_file` is refused, since only a workflow file's
/// tasks are checked against the files beside it before the run starts.
pub fn added_specs(files: &[TaskFile]) -> Result<Vec<TaskSpec>, String> {
    files
        .iter()
        .map(|t| {
            if t.workflow.is_some() {
                return Err(format!(
                    "added task {:?}, field workflow: sub-projects are declared in a workflow file, not added to a live run",
                    t.id
                ));
            }
            if t.test_file.is_some() {
                return Err(format!(
                    "added task {:?}, field test_file: read only in a workflow file; give the added task a `test` command",
                    t.id
                ));
            }
            if t.budget.is_some() {
                return Err(format!(
                    "added task {:?}, field budget: a task's budget is set in a workflow file, or on the live run by a person",
                    t.id
                ));
            }
            let is_group = files.iter().any(|c| c.parent.as_deref() == Some(&t.id));
            t.to_spec(is_group, Commands::Required, false)
                .map_err(|(field, m)| format!("added task {:?}, field {field}: {m}", t.id))
        })
        .collect()
}

fn retry_strategy(r: &RetryFile) -> Result<RetryStrategy, String> {
    let d = RetryStrategy::default();
    let limit = match &r.max {
        None => d.limit,
        Some(MaxFile::Count(n)) => RetryLimit::Max(*n),
        Some(MaxFile::Word(w)) if w == "unlimited" => RetryLimit::Unlimited,
        Some(MaxFile::Word(w)) => {
            return Err(format!("max is {w:?}; allowed: a number or \"unlimited\""))
        }
    };
    Ok(RetryStrategy {
        limit,
        budget: r.budget.as_ref().map_or(d.budget, |b| Budget {
            max_attempts: b.attempts,
            max_elapsed_ms: b.ms,
        }),
        delay_ms: r.delay_ms.unwrap_or(d.delay_ms),
        backoff: r.backoff.unwrap_or(d.backoff),
        timeout_ms: r.timeout_ms.or(d.timeout_ms),
        circuit_after: r.circuit_after.unwrap_or(d.circuit_after),
    })
}

/// A plan revision as a replan command prints it and `runlog replan --file` reads it:
/// `{"cancel": [ids], "add": [tasks, as in a workflow], "replaces": {"new": "old"}, "reason": "..."}`,
/// alone or, as an LLM prints it, inside prose or a ```json fence (the last such object).
/// `answers`: the seq of the board the plan was made from (see `CommandKind::RevisePlan`).
pub fn parse_revision(
    text: &str,
    default_reason: &str,
    answers: Option<u64>,
) -> Result<CommandKind, String> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Plan {
        #[serde(default)]
        cancel: Vec<String>,
        #[serde(default)]
        add: Vec<TaskFile>,
        #[serde(default)]
        replaces: std::collections::BTreeMap<String, String>,
        #[serde(default)]
        reason: String,
    }
    let refuse = |e: serde_json::Error| {
        format!(
            "not a plan ({e}); expected {{\"cancel\": [...], \"add\": [...], \"replaces\": {{\"new\": \"old\"}}, \"reason\": \"...\"}}; it began: {:?}",
            super::protocol::beginning(text, 200)
        )
    };
    let plan: Plan = match serde_json::from_str(text.trim()) {
        Ok(plan) => plan,
        Err(whole) => {
            match super::protocol::last_object_with(text, &["cancel", "add", "replaces"]) {
                Some(obj) => {
                    serde_json::from_value(serde_json::Value::Object(obj)).map_err(refuse)?
                }
                None => return Err(refuse(whole)),
            }
        }
    };
    let add = added_specs(&plan.add)?;
    Ok(CommandKind::RevisePlan {
        cancel: plan.cancel.into_iter().map(TaskId).collect(),
        add,
        replaces: plan
            .replaces
            .into_iter()
            .map(|(new, old)| runlog_core::Replacement {
                old: TaskId(old),
                new: TaskId(new),
            })
            .collect(),
        reason: if plan.reason.is_empty() {
            default_reason.to_owned()
        } else {
            plan.reason
        },
        answers,
    })
}
