//! The tools, each named after the command a person already knows and taking its flags by their
//! long names: what it asks of `/v1` (the route whose view it answers with, and so whose
//! `outputSchema` it has), the scope a token needs for it, and what it tells a client about
//! itself (`readOnlyHint`, `destructiveHint`).

use super::super::tokens::Scope;
use axum::http::Method;
use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// What a tool does to the store, as the client is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    /// Reads only.
    Looks,
    /// Records commands or starts runs; history is only added to.
    Acts,
    /// Records a rollback: the run's state goes back (its history stays).
    Destroys,
}

/// One request of `/v1`, as a tool's arguments make it.
#[derive(Debug)]
pub(super) struct Ask {
    pub method: Method,
    /// The path with its query, encoded.
    pub uri: String,
    pub body: Option<Value>,
    /// The last seq of a page of events the tool chose itself (none was asked): past it, the
    /// answer's `next` goes on.
    pub window: Option<u64>,
}

/// Events a `log` page reads at most when no `to` is asked (then cut to fit the answer's size).
pub(super) const LOG_PAGE: u64 = 200;

/// A tool's arguments.
pub(super) trait Args: DeserializeOwned + JsonSchema {
    /// The request; `who` is the caller's name, the `by` of a decision that names none.
    fn ask(self, who: &str) -> Ask;
}

/// A tool's request, and the one run it is about (if it is about one).
pub(super) type Asked = (Ask, Option<String>);

/// A tool.
pub(super) struct Tool {
    pub name: &'static str,
    pub description: &'static str,
    pub scope: Scope,
    pub effect: Effect,
    /// The route whose answer the tool returns: method, path template, success status.
    pub route: (&'static str, &'static str, &'static str),
    /// An answer that is a list is returned under this key (structured content is an object).
    pub wrap: Option<&'static str>,
    /// The input schema.
    pub input: fn() -> schemars::Schema,
    /// The arguments read: the request and the run they are about, or why they are refused.
    pub read: fn(Value, &str) -> Result<Asked, String>,
}

fn input<A: Args>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<A>()
}

/// The arguments read; a tool about one run names it as `run` (a token valid for one run may
/// ask only about it).
fn read<A: Args>(args: Value, who: &str) -> Result<Asked, String> {
    let run = args.get("run").and_then(Value::as_str).map(str::to_owned);
    let a: A = serde_json::from_value(args).map_err(|e| e.to_string())?;
    Ok((a.ask(who), run))
}

macro_rules! tool {
    ($name:literal, $args:ty, $scope:ident, $effect:ident, ($m:literal, $p:expr, $s:literal), $wrap:expr, $doc:literal) => {
        Tool {
            name: $name,
            description: $doc,
            scope: Scope::$scope,
            effect: Effect::$effect,
            route: ($m, $p, $s),
            wrap: $wrap,
            input: input::<$args>,
            read: read::<$args>,
        }
    };
}

/// Every tool, in the order `tools/list` gives them: the ones that look, then the ones that act.
pub(super) fn all() -> Vec<Tool> {
    use super::super::api::paths as p;
    vec![
        tool!("runs", RunsArgs, Read, Looks, ("get", p::RUNS, "200"), Some("runs"),
            "The runs in the store, newest first: status, outcome, events, when, lineage (fork of, sub-project of). Filter by status, outcome or workflow; limit how many."),
        tool!("status", StatusArgs, Read, Looks, ("get", p::RUN, "200"), None,
            "A run's board at its head or at any seq (`at`): each task's status, attempts, rescues, score, spend, and what it waits for."),
        tool!("log", LogArgs, Read, Looks, ("get", p::EVENTS, "200"), None,
            "A run's events, each with its words, filtered by task or kind, a page at a time: when the answer has `next`, call again with `from` set to it."),
        tool!("show", ShowArgs, Read, Looks, ("get", p::TASK, "200"), None,
            "One task's whole story: its spec, every event about it with its words (each attempt's output, test output, verdicts with the judge's notes, the changes it recorded with the patch) and its model calls."),
        tool!("audit", AuditArgs, Read, Looks, ("get", p::AUDIT, "200"), None,
            "Every evaluation decision of a run: score, threshold, outcome, the judge's notes, and who approved, rejected or reopened after it."),
        tool!("judges", JudgesArgs, Read, Looks, ("get", p::JUDGES, "200"), None,
            "Each judge audited across runs: agreement with people's decisions (accuracy, Cohen's kappa, n), false passes and fails against what happened later, spread, drift."),
        tool!("review", ReviewArgs, Read, Looks, ("get", p::REVIEW, "200"), Some("waiting"),
            "The verdicts waiting for a person's review, each with its score, notes and the change judged; `approve` and `reject` decide them."),
        tool!("diff", DiffArgs, Read, Looks, ("get", p::DIFF, "200"), None,
            "Two runs compared task by task; when one is a rerun of the other, how its model calls were answered and each attempt's first divergence."),
        tool!("cost", CostArgs, Read, Looks, ("get", p::COST, "200"), None,
            "What a run's model calls used and cost, by task, model or provider, and its budgets."),
        tool!("experiments", ExperimentsArgs, Read, Looks, ("get", p::EXPERIMENTS, "200"), Some("experiments"),
            "The experiments in the store: each variant's reruns of a suite of recorded runs, and how far they are."),
        tool!("experiment", ExperimentArgs, Read, Looks, ("get", p::EXPERIMENT, "200"), None,
            "One experiment's report: each variant against the recording, with intervals, per run and task."),
        tool!("approve", ApproveArgs, Steer, Acts, ("post", p::COMMANDS, "200"), None,
            "Approve a task waiting for a person (a verdict in review, or a task in pending-eval): recorded with who asked."),
        tool!("reject", RejectArgs, Steer, Acts, ("post", p::COMMANDS, "200"), None,
            "Reject a task waiting for a person, with a reason: failed, or open again with `reopen`."),
        tool!("reopen", ReopenArgs, Steer, Acts, ("post", p::COMMANDS, "200"), None,
            "Put a failed task back to open, to be attempted again."),
        tool!("rollback", RollbackArgs, Steer, Destroys, ("post", p::COMMANDS, "200"), None,
            "Return a run to an earlier seq (`to`), with a reason: the tasks' state goes back to what it was there; the history after it is kept and the rollback recorded."),
        tool!("fork", ForkArgs, Steer, Acts, ("post", p::FORK, "201"), None,
            "A new run that shares this run's history up to a seq (`at`, default its head) and goes on from there."),
        tool!("budget", BudgetArgs, Steer, Acts, ("post", p::BUDGET, "200"), None,
            "Set a run's (or one task's) budget: the most its model calls may cost or the most tokens they may use."),
        tool!("rerun", RerunArgs, Run, Acts, ("post", p::RERUN, "201"), None,
            "Run a recorded run again as a new run, its model calls answered from the recording while they ask what was asked; executed by the server."),
        tool!("resume", ResumeArgs, Run, Acts, ("post", p::RESUME, "201"), None,
            "Drive an interrupted, crashed or paused run on from its log; executed by the server."),
    ]
}

/// `template` with each `{name}` replaced by its value, encoded as a path segment.
fn path(template: &str, values: &[(&str, &str)]) -> String {
    values.iter().fold(template.to_owned(), |p, (k, v)| {
        p.replace(
            &format!("{{{k}}}"),
            &utf8_percent_encode(v, NON_ALPHANUMERIC).to_string(),
        )
    })
}

/// A GET of `path` with the query `q` (its fields that are `None`, or marked
/// `skip_serializing` as they go in the path, left out).
fn get(path: String, q: &impl Serialize) -> Ask {
    let query = serde_urlencoded::to_string(q).unwrap_or_default();
    let uri = if query.is_empty() {
        path
    } else {
        format!("{path}?{query}")
    };
    Ask {
        method: Method::GET,
        uri,
        body: None,
        window: None,
    }
}

fn post(path: String, body: Value) -> Ask {
    Ask {
        method: Method::POST,
        uri: path,
        body: Some(body),
        window: None,
    }
}

/// Nothing to add to a request.
const NO_QUERY: [(&str, &str); 0] = [];

/// `runs`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RunsArgs {
    /// Only runs with this status: running, finished, interrupted, paused, damaged…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    /// Only runs that ended so: succeeded, failed, partial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    outcome: Option<String>,
    /// Only runs started from this workflow file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    workflow: Option<String>,
    /// At most this many (the newest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    limit: Option<u32>,
}

impl Args for RunsArgs {
    fn ask(self, _: &str) -> Ask {
        get(super::super::api::paths::RUNS.to_owned(), &self)
    }
}

/// `status`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct StatusArgs {
    /// The run.
    #[serde(skip_serializing)]
    run: String,
    /// The seq to show the board at [default: its head].
    #[serde(default)]
    at: Option<u64>,
}

impl Args for StatusArgs {
    fn ask(self, _: &str) -> Ask {
        get(
            path(super::super::api::paths::RUN, &[("run", &self.run)]),
            &self,
        )
    }
}

/// A list as the API's query takes it: `a,b` (left out when empty).
fn joined<S: serde::Serializer>(list: &[String], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&list.join(","))
}

/// `log`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LogArgs {
    /// The run.
    #[serde(skip_serializing)]
    run: String,
    /// The first seq (the `next` of the page before) [default: 1].
    #[serde(default)]
    from: Option<u64>,
    /// The last seq [default: its head].
    #[serde(default)]
    to: Option<u64>,
    /// Only the events about this task.
    #[serde(default)]
    task: Option<String>,
    /// Only the events of this kind (`tests-failed`, `eval-scored`, `rolled-back`…).
    #[serde(default)]
    kind: Option<String>,
}

impl Args for LogArgs {
    fn ask(mut self, _: &str) -> Ask {
        let p = path(super::super::api::paths::EVENTS, &[("run", &self.run)]);
        let window = match self.to {
            Some(_) => None,
            None => Some(self.from.unwrap_or(1).max(1).saturating_add(LOG_PAGE - 1)),
        };
        self.to = self.to.or(window);
        Ask {
            window,
            ..get(p, &self)
        }
    }
}

/// `show`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ShowArgs {
    /// The run.
    run: String,
    /// The task.
    task: String,
}

impl Args for ShowArgs {
    fn ask(self, _: &str) -> Ask {
        let p = path(
            super::super::api::paths::TASK,
            &[("run", &self.run), ("task", &self.task)],
        );
        get(p, &NO_QUERY)
    }
}

/// `audit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AuditArgs {
    /// The run.
    run: String,
}

impl Args for AuditArgs {
    fn ask(self, _: &str) -> Ask {
        get(
            path(super::super::api::paths::AUDIT, &[("run", &self.run)]),
            &NO_QUERY,
        )
    }
}

/// `judges`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct JudgesArgs {
    /// Only these runs [default: every run].
    #[serde(
        default,
        serialize_with = "joined",
        skip_serializing_if = "Vec::is_empty"
    )]
    runs: Vec<String>,
    /// Only runs started on or after this date (YYYY-MM-DD).
    #[serde(default)]
    since: Option<String>,
    /// Only runs of this workflow.
    #[serde(default)]
    workflow: Option<String>,
    /// Only this evaluator (its command).
    #[serde(default)]
    evaluator: Option<String>,
    /// What the decisions would have been at this threshold.
    #[serde(default)]
    threshold: Option<f64>,
    /// What the scores would have been with these dimension weights: `DIM=W,DIM=W`.
    #[serde(default)]
    weights: Option<String>,
}

impl Args for JudgesArgs {
    fn ask(self, _: &str) -> Ask {
        get(super::super::api::paths::JUDGES.to_owned(), &self)
    }
}

/// `review`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ReviewArgs {
    /// Only these runs [default: every run].
    #[serde(
        default,
        serialize_with = "joined",
        skip_serializing_if = "Vec::is_empty"
    )]
    runs: Vec<String>,
}

impl Args for ReviewArgs {
    fn ask(self, _: &str) -> Ask {
        get(super::super::api::paths::REVIEW.to_owned(), &self)
    }
}

/// `diff`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DiffArgs {
    /// One run (the original, for a rerun).
    left: String,
    /// The other.
    right: String,
}

impl Args for DiffArgs {
    fn ask(self, _: &str) -> Ask {
        get(super::super::api::paths::DIFF.to_owned(), &self)
    }
}

/// `cost`.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CostArgs {
    /// The run.
    #[serde(skip_serializing)]
    run: String,
    /// At this seq [default: its head].
    #[serde(default)]
    at: Option<u64>,
    /// Grouped by `task`, `model`, `provider`, `stage` or `attempt` (comma-separated).
    #[serde(default)]
    by: Option<String>,
}

impl Args for CostArgs {
    fn ask(self, _: &str) -> Ask {
        get(
            path(super::super::api::paths::COST, &[("run", &self.run)]),
            &self,
        )
    }
}

/// `experiments`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ExperimentsArgs {}

impl Args for ExperimentsArgs {
    fn ask(self, _: &str) -> Ask {
        get(super::super::api::paths::EXPERIMENTS.to_owned(), &NO_QUERY)
    }
}

/// `experiment show`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ExperimentArgs {
    /// The experiment.
    name: String,
}

impl Args for ExperimentArgs {
    fn ask(self, _: &str) -> Ask {
        get(
            path(
                super::super::api::paths::EXPERIMENT,
                &[("name", &self.name)],
            ),
            &NO_QUERY,
        )
    }
}

/// A command for a run, as `runlog emit` takes it.
fn command(run: &str, body: Value) -> Ask {
    post(
        path(super::super::api::paths::COMMANDS, &[("run", run)]),
        body,
    )
}

/// `approve`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ApproveArgs {
    /// The run.
    run: String,
    /// The task.
    task: String,
    /// Who decides [default: the token's name, or the user who started the server].
    #[serde(default)]
    by: Option<String>,
}

impl Args for ApproveArgs {
    fn ask(self, who: &str) -> Ask {
        let by = self.by.unwrap_or_else(|| who.to_owned());
        command(
            &self.run,
            json!({"command": "approve", "task": self.task, "by": by}),
        )
    }
}

/// `reject`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RejectArgs {
    /// The run.
    run: String,
    /// The task.
    task: String,
    /// Why.
    reason: String,
    /// Back to open, to be attempted again, instead of failed.
    #[serde(default)]
    reopen: bool,
    /// Who decides [default: the token's name, or the user who started the server].
    #[serde(default)]
    by: Option<String>,
}

impl Args for RejectArgs {
    fn ask(self, who: &str) -> Ask {
        let by = self.by.unwrap_or_else(|| who.to_owned());
        command(
            &self.run,
            json!({"command": "reject", "task": self.task, "by": by, "reopen": self.reopen, "reason": self.reason}),
        )
    }
}

/// `reopen`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ReopenArgs {
    /// The run.
    run: String,
    /// The failed task.
    task: String,
    /// Who decides [default: the token's name, or the user who started the server].
    #[serde(default)]
    by: Option<String>,
}

impl Args for ReopenArgs {
    fn ask(self, who: &str) -> Ask {
        let by = self.by.unwrap_or_else(|| who.to_owned());
        command(
            &self.run,
            json!({"command": "reopen", "task": self.task, "by": by}),
        )
    }
}

/// `rollback`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RollbackArgs {
    /// The run.
    run: String,
    /// The seq to return to.
    #[schemars(range(min = 1))]
    to: u64,
    /// Why.
    reason: String,
    /// Who decides [default: the token's name, or the user who started the server].
    #[serde(default)]
    by: Option<String>,
}

impl Args for RollbackArgs {
    fn ask(self, who: &str) -> Ask {
        let by = self.by.unwrap_or_else(|| who.to_owned());
        command(
            &self.run,
            json!({"command": "rollback", "to_seq": self.to, "reason": self.reason, "by": by}),
        )
    }
}

/// `fork`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ForkArgs {
    /// The run.
    run: String,
    /// The seq to fork at [default: its head].
    #[serde(default)]
    at: Option<u64>,
    /// The new run's id [default: RUN-fork-N].
    #[serde(default, rename = "as")]
    new: Option<String>,
}

impl Args for ForkArgs {
    fn ask(self, _: &str) -> Ask {
        let body = json!({"at": self.at, "as": self.new});
        post(
            path(super::super::api::paths::FORK, &[("run", &self.run)]),
            without_nulls(body),
        )
    }
}

/// `value` without its `null` fields (a body's field left out keeps its default).
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(m) => Value::Object(m.into_iter().filter(|(_, v)| !v.is_null()).collect()),
        other => other,
    }
}

/// `budget`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BudgetArgs {
    /// The run.
    run: String,
    /// This task's budget [default: the run's].
    #[serde(default)]
    task: Option<String>,
    /// The most its model calls may cost, in US dollars.
    #[serde(default)]
    max_cost_usd: Option<f64>,
    /// The most tokens its model calls may use.
    #[serde(default)]
    max_tokens: Option<u64>,
    /// Who decides [default: the token's name, or the user who started the server].
    #[serde(default)]
    by: Option<String>,
}

impl Args for BudgetArgs {
    fn ask(self, who: &str) -> Ask {
        let by = self.by.unwrap_or_else(|| who.to_owned());
        let body = json!({"task": self.task, "max_cost_usd": self.max_cost_usd,
            "max_tokens": self.max_tokens, "by": by});
        post(
            path(super::super::api::paths::BUDGET, &[("run", &self.run)]),
            without_nulls(body),
        )
    }
}

/// Where a rerun's model calls are answered from.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum Answers {
    /// From the recording while they ask what was asked; refused when they diverge.
    Recorded,
    /// From the providers.
    Live,
    /// From the recording, then from the providers once a call diverges.
    RecordedThenLive,
}

/// `rerun`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RerunArgs {
    /// The run.
    run: String,
    /// The seq to re-execute from [default: before the first attempt].
    #[serde(default)]
    at: Option<u64>,
    /// Run only these tasks again; the others are carried over as done.
    #[serde(default)]
    tasks: Vec<String>,
    /// Where its model calls are answered from [default: recorded].
    #[serde(default)]
    answers: Option<Answers>,
    /// The new run's id [default: RUN-rerun-N].
    #[serde(default, rename = "as")]
    new: Option<String>,
}

impl Args for RerunArgs {
    fn ask(self, _: &str) -> Ask {
        let body =
            json!({"at": self.at, "tasks": self.tasks, "answers": self.answers, "as": self.new});
        post(
            path(super::super::api::paths::RERUN, &[("run", &self.run)]),
            without_nulls(body),
        )
    }
}

/// `resume`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ResumeArgs {
    /// The run.
    run: String,
}

impl Args for ResumeArgs {
    fn ask(self, _: &str) -> Ask {
        post(
            path(super::super::api::paths::RESUME, &[("run", &self.run)]),
            json!({}),
        )
    }
}
