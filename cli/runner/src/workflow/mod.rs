//! Workflow files: TOML in, a validated plan out, with errors that name the file, the line,
//! the field and what is allowed.

pub mod alerts;
pub(crate) mod discovery;
pub(crate) mod file;
mod providers;

use crate::error::WorkflowError;
use discovery::Discovery;
use runlog_core::redact::{Redactor, DEFAULT_ENV_PATTERNS};
use runlog_core::{
    decide, Command, CommandKind, CostPolicy, Hash, RunId, RunState, Settings, TaskId, TaskSpec,
    Timestamp,
};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::workflow::file::{
    AlertFile, BudgetFile, Commands, FieldError, GatewayMode, LimitsFile, MaxFile, PriceFile,
    ProviderFile, RetryFile, SettingsFile, TaskFile, WorkflowFile, WorkspaceMode,
};

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
    /// The names of the environment variables whose values are secrets (`redact_env`).
    pub redact_env: Vec<String>,
    /// The `redact_file`'s secrets.
    pub redact_listed: Vec<(String, String)>,
    /// Whether commands reach their models through the gateway, and to which providers.
    pub gateway: GatewayPlan,
    /// What a write outside an attempt's worktree means (`outside_writes`).
    pub outside_writes: runlog_core::outside::OutsidePolicy,
    /// The output bounds given to model requests without one, under a budget.
    pub output_bounds: runlog_gateway::OutputBounds,
    /// Where the run's alerts go (`[[alerts]]`).
    pub alerts: Vec<crate::alerting::AlertTarget>,
}

/// The smallest `output_cap_bytes`: below it the head and tail could not hold an agent's report.
pub const MIN_OUTPUT_CAP: u64 = 4 * 1024;

impl Default for RunnerSettings {
    fn default() -> Self {
        Self {
            replan: None,
            replan_timeout: Duration::from_secs(600),
            grace: Duration::from_secs(3),
            output_cap: 16 * 1024 * 1024,
            history_cap: 1024 * 1024,
            workspace: WorkspaceMode::Auto,
            repo: None,
            redact_env: DEFAULT_ENV_PATTERNS
                .iter()
                .map(|p| (*p).to_owned())
                .collect(),
            redact_listed: Vec::new(),
            gateway: GatewayPlan::IfKeys,
            outside_writes: Default::default(),
            output_bounds: Default::default(),
            alerts: Vec::new(),
        }
    }
}

impl RunnerSettings {
    fn of(
        file: &WorkflowFile,
        dir: &Path,
        listed: Vec<(String, String)>,
        alerts: Vec<crate::alerting::AlertTarget>,
    ) -> Self {
        let d = Self::default();
        let s = &file.settings;
        Self {
            gateway: providers::plan(file, dir),
            redact_env: s.redact_env.clone().unwrap_or(d.redact_env),
            redact_listed: listed,
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
            workspace: s.workspace.unwrap_or_default(),
            repo: s.repo.clone(),
            outside_writes: s.outside_writes.unwrap_or_default(),
            output_bounds: runlog_gateway::OutputBounds {
                by_model: file
                    .prices
                    .iter()
                    .filter_map(|(model, p)| Some((model.clone(), p.max_output_tokens?)))
                    .collect(),
                workflow: s.max_output_tokens.unwrap_or(d.output_bounds.workflow),
            },
            alerts,
        }
    }
}

/// When commands reach their models through the gateway, and to which providers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GatewayPlan {
    /// `gateway = "off"`: commands keep the runner's environment as it is.
    Off,
    /// `gateway = "on"` or a `[providers]` table: to the file's providers, and the public
    /// provider of a kind it names none of.
    On(Vec<runlog_gateway::Provider>),
    /// Nothing said: on, to the public providers whose keys the runner's environment holds
    /// (off when it holds none).
    IfKeys,
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
    /// The verdicts a person reviews.
    pub review: runlog_core::review::ReviewPolicy,
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
            cause: source,
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
        if s.max_output_tokens == Some(0) {
            return Err(WorkflowError::Field {
                path,
                place: "[settings], ".into(),
                field: "max_output_tokens",
                message: "0 leaves no room for an answer: at least 1 token".into(),
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
            let field_error = |FieldError { field, message }: FieldError| WorkflowError::Field {
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
                return Err(field_error(FieldError::new(
                    "workflow",
                    "a group's work is its children; a sub-project task has no children",
                )));
            }
        }
        let mut wf = Workflow {
            hash: Hash::of(text.as_bytes()),
            name: file.name.clone(),
            settings,
            runner: RunnerSettings::of(
                file,
                &dir,
                redact_file(s, &dir, &path)?,
                alerts::targets(&file.alerts).map_err(|(field, message)| WorkflowError::Field {
                    path: path.clone(),
                    place: "[[alerts]], ".into(),
                    field,
                    message,
                })?,
            ),
            tasks,
            discovered: Vec::new(),
            sub_projects: Vec::new(),
            cost: cost_policy(file, text, &path)?,
            review: review_policy(s, &path)?,
            dir,
            path,
        };
        providers::check(file, &wf.runner.gateway, &wf.path)?;
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
            review: self.review,
        }
    }
}

/// `[settings] review` and `review_sample`, the sample checked where it is written.
fn review_policy(
    s: &SettingsFile,
    path: &Path,
) -> Result<runlog_core::review::ReviewPolicy, WorkflowError> {
    let policy = runlog_core::review::ReviewPolicy {
        mode: s.review.unwrap_or_default(),
        sample: s.review_sample.unwrap_or(0.0),
    };
    match policy.invalid() {
        None => Ok(policy),
        Some(message) => Err(WorkflowError::Field {
            path: path.to_path_buf(),
            place: "[settings], ".into(),
            field: "review_sample",
            message,
        }),
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
        if p.max_output_tokens == Some(0) {
            let why = "0 leaves no room for an answer: at least 1 token".to_owned();
            return Err(field(
                format!("[prices.{model:?}], "),
                "max_output_tokens",
                why,
            ));
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
