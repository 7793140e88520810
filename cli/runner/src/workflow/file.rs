//! A workflow file as written: the TOML's shape (`deny_unknown_fields` everywhere, so a typo is
//! refused with the fields there are), and a task as written turned into a task's spec.

use runlog_core::usage::Limits;
use runlog_core::{Budget, RetryLimit, RetryStrategy, StageId, TaskId, TaskSpec};
use serde::Deserialize;

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
    /// `[providers.NAME]`: the upstreams of the model gateway.
    #[serde(default)]
    pub providers: std::collections::BTreeMap<String, ProviderFile>,
    /// `[[alerts]]`: where a run's alerts go.
    #[serde(default)]
    pub alerts: Vec<AlertFile>,
}

/// `[[alerts]]`: a receiver of a run's alerts.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlertFile {
    /// Where they are posted (`https://...`).
    pub url: String,
    /// `"slack"` (an incoming webhook's `{"text"}`) or `"json"` (default).
    pub format: Option<crate::alerting::AlertFormat>,
    /// What it is told of: any of `"run-failed"`, `"waiting"`, `"budget"`, `"diverged"`
    /// (default: all).
    pub on: Option<Vec<String>>,
    /// The variable of the runner's environment holding the key of the `X-Runlog-Signature`
    /// header (HMAC-SHA256 of the body); none: unsigned.
    pub secret_env: Option<String>,
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
    /// The most output tokens the model gives one answer: the bound runlog gives a request
    /// that sets none, under a budget (its worst case is judged with it).
    pub max_output_tokens: Option<u64>,
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
    pub(crate) fn limits(self) -> Limits {
        Limits {
            max_cost_usd: self.max_cost_usd,
            max_tokens: self.max_tokens,
        }
    }
}

impl WorkflowFile {
    /// Ids of the tasks some task names as its parent.
    pub(crate) fn groups(&self) -> std::collections::HashSet<&str> {
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
    pub workspace: Option<WorkspaceMode>,
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
    /// The output bound runlog gives a model request that sets none, under a budget, when
    /// the model's `[prices]` name none (default 16,384).
    pub max_output_tokens: Option<u64>,
    /// The environment variables whose values are secrets, never recorded: names, `*` for any
    /// characters (default `*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, `*_HEADERS`; `[]` for none).
    pub redact_env: Option<Vec<String>>,
    /// A file of more secrets, one per line (`NAME=VALUE`, or a bare value), relative to the
    /// workflow's directory.
    pub redact_file: Option<String>,
    /// Whether commands reach their models through the runner's gateway: `on` (the default
    /// with a `[providers]` table, or when the runner's environment holds `ANTHROPIC_API_KEY`
    /// or `OPENAI_API_KEY`) or `off` (commands keep the runner's environment as it is).
    pub gateway: Option<GatewayMode>,
    /// The verdicts a person reviews before the gate's decision takes effect: `none` (the
    /// default), `failing` (each rescue or fail) or `all`.
    pub review: Option<runlog_core::review::ReviewMode>,
    /// The share of the other verdicts reviewed too, in [0, 1] (default 0), the same ones
    /// whenever the run is replayed.
    pub review_sample: Option<f64>,
    /// What an attempt that wrote outside its worktree (in the repository's checkout, or in
    /// another run's worktrees) means: `warn` (the default: recorded and shown) or `fail`
    /// (the attempt fails, naming the paths). A git workspace only.
    pub outside_writes: Option<runlog_core::outside::OutsidePolicy>,
}

/// `[settings] gateway`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatewayMode {
    /// Every command's model calls go through the gateway and are recorded.
    On,
    /// Commands reach their providers as the runner's environment says.
    Off,
}

/// `[providers.NAME]`: an upstream the gateway passes calls to.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderFile {
    /// `anthropic` (Messages) or `openai` (Chat Completions, Responses).
    pub kind: runlog_gateway::ProviderKind,
    /// Where it listens (`http://HOST:PORT`, with an optional path such as `/v1`).
    pub base_url: String,
    /// The variable of the runner's environment that holds its key (default
    /// `ANTHROPIC_API_KEY` or `OPENAI_API_KEY`, by kind).
    pub api_key_env: Option<String>,
    /// CA certificates (PEM, relative to the workflow's directory) an `https://` address is
    /// also trusted by, beside the system's (a proxy in between).
    pub ca_file: Option<String>,
    /// Calls a minute to it, for all runs the runner executes.
    pub requests_per_minute: Option<u32>,
    /// Input and output tokens a minute (a call counted at its worst until answered).
    pub tokens_per_minute: Option<u64>,
    /// Calls in flight to it at once.
    pub concurrent: Option<u32>,
    /// Milliseconds a call over a limit waits for its turn before it is answered 429
    /// (default 5,000).
    pub limit_wait_ms: Option<u64>,
}

/// Where a run's tasks work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkspaceMode {
    /// Git when the workflow's directory is in a repository, else none (what a file that
    /// names no `workspace` gets; not a value it can write).
    #[default]
    #[serde(skip)]
    Auto,
    /// Each task in a git worktree of its own.
    Git,
    /// Every command in the workflow's directory.
    None,
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
    ) -> Result<TaskSpec, FieldError> {
        let retry = match &self.retry {
            None => RetryStrategy::default(),
            Some(r) => retry_strategy(r)?,
        };
        if self.test_file.is_some() && self.test.is_some() {
            return Err(FieldError::new(
                "test_file",
                "give `test` (a command) or `test_file` (a pytest file), not both",
            ));
        }
        if self.workflow.is_some() && (self.run.is_some() || self.test_file.is_some()) {
            return Err(FieldError::new(
                "workflow",
                "a sub-project task runs its workflow: leave out `run` and `test_file`",
            ));
        }
        if self.run.is_none()
            && self.workflow.is_none()
            && !is_group
            && commands == Commands::Required
        {
            return Err(FieldError::new(
                "run",
                "a task needs a `run` command unless it is a group (has children)",
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

pub(crate) fn retry_strategy(r: &RetryFile) -> Result<RetryStrategy, FieldError> {
    let d = RetryStrategy::default();
    let limit = match &r.max {
        None => d.limit,
        Some(MaxFile::Count(n)) => RetryLimit::Max(*n),
        Some(MaxFile::Word(w)) if w == "unlimited" => RetryLimit::Unlimited,
        Some(MaxFile::Word(w)) => {
            return Err(FieldError::new(
                "retry",
                format!("max is {w:?}; allowed: a number or \"unlimited\""),
            ))
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

/// A field of a task as written whose value is not allowed, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("field {field}: {message}")]
pub struct FieldError {
    /// The field.
    pub field: &'static str,
    /// What is wrong, and what is allowed.
    pub message: String,
}

impl FieldError {
    /// `field`'s value is not allowed: `message` says why.
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}
