//! What agents cost: usage reports as model tools print them, normalised to one record, priced,
//! summed and held against budgets.
//!
//! A report is a JSON object on a line of its own with a `usage` object, in any of the shapes
//! the tools already print (OpenAI Chat and Responses, Anthropic, a Claude Code result, a Codex
//! `turn.completed` line), with an optional `model`, `provider` and `cost_usd` (or Claude Code's
//! `total_cost_usd`) beside it. Input tokens are normalised as the OpenTelemetry GenAI
//! conventions count them: cached tokens included.

use crate::ids::TaskId;
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;

/// A count beyond this in a report is absurd (a trillion tokens), not usage: refused.
pub const MAX_TOKENS: u64 = 1_000_000_000_000;

/// A cost beyond this in a report (a million dollars for one call) is refused as absurd.
pub const MAX_REPORTED_COST_USD: f64 = 1_000_000.0;

/// Which of an attempt's commands used the tokens.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode, Serialize, Deserialize,
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum UsageStage {
    /// The task's agent.
    Agent,
    /// The task's tests.
    Tests,
    /// The task's evaluator.
    Evaluator,
    /// The replan command, charged to the task whose completion asked for it.
    Replanner,
}

impl UsageStage {
    /// Every stage, in the order an attempt runs them.
    pub const ALL: [UsageStage; 4] = [
        UsageStage::Agent,
        UsageStage::Tests,
        UsageStage::Evaluator,
        UsageStage::Replanner,
    ];

    /// The kebab-case name used in JSON and on screen.
    pub fn name(self) -> &'static str {
        match self {
            UsageStage::Agent => "agent",
            UsageStage::Tests => "tests",
            UsageStage::Evaluator => "evaluator",
            UsageStage::Replanner => "replanner",
        }
    }
}

/// Where a recorded cost comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum CostSource {
    /// The report carried its cost (a reported cost wins over a price).
    Reported,
    /// runlog priced the tokens with the workflow's `[prices]` for the model.
    Priced,
    /// Neither: the cost is unknown (shown as unpriced, never as free).
    Unpriced,
}

impl CostSource {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            CostSource::Reported => "reported",
            CostSource::Priced => "priced",
            CostSource::Unpriced => "unpriced",
        }
    }
}

/// Token counts, normalised.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Encode, Decode, Serialize, Deserialize,
)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Tokens {
    /// Input tokens, cached ones included.
    pub input: u64,
    /// Output tokens, reasoning included.
    pub output: u64,
    /// Of the input, read from a cache.
    pub cache_read: u64,
    /// Of the input, written to a cache.
    pub cache_write: u64,
    /// Of the output, spent reasoning.
    pub reasoning: u64,
}

impl Tokens {
    /// Input and output: what a token budget counts.
    pub fn total(&self) -> u64 {
        self.input.saturating_add(self.output)
    }

    /// The sum of two counts (saturating: a sum of bounded reports cannot wrap).
    pub fn plus(self, o: Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_add(o.input),
            output: self.output.saturating_add(o.output),
            cache_read: self.cache_read.saturating_add(o.cache_read),
            cache_write: self.cache_write.saturating_add(o.cache_write),
            reasoning: self.reasoning.saturating_add(o.reasoning),
        }
    }
}

/// One report, normalised.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct UsageReport {
    /// The model, when the report names it.
    pub model: Option<String>,
    /// The provider: named, or known from the usage object's shape.
    pub provider: Option<String>,
    /// The tokens.
    pub tokens: Tokens,
    /// The cost in USD, when the report carries it.
    pub cost_usd: Option<f64>,
}

/// A model's prices in USD per million tokens (`[prices."MODEL"]` in a workflow).
#[derive(Debug, Clone, Copy, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Price {
    /// Per million input tokens not read from or written to a cache.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million tokens read from a cache; the input price when not given.
    pub cache_read: Option<f64>,
    /// Per million tokens written to a cache; the input price when not given.
    pub cache_write: Option<f64>,
}

impl Price {
    /// What `tokens` cost at this price.
    pub fn cost(&self, t: &Tokens) -> f64 {
        let cached = t.cache_read.saturating_add(t.cache_write);
        let fresh = t.input.saturating_sub(cached) as f64;
        let per = |n: u64, price: f64| n as f64 * price / 1_000_000.0;
        fresh * self.input / 1_000_000.0
            + per(t.cache_read, self.cache_read.unwrap_or(self.input))
            + per(t.cache_write, self.cache_write.unwrap_or(self.input))
            + per(t.output, self.output)
    }

    /// Why this price cannot be used, or `None`.
    pub fn invalid(&self) -> Option<String> {
        let fields = [
            ("input", Some(self.input)),
            ("output", Some(self.output)),
            ("cache_read", self.cache_read),
            ("cache_write", self.cache_write),
        ];
        fields.into_iter().find_map(|(name, v)| match v {
            Some(v) if !v.is_finite() || v < 0.0 => {
                Some(format!("{name} is {v}; a price is a number of USD ≥ 0"))
            }
            _ => None,
        })
    }
}

/// Prices by model name.
pub type Prices = BTreeMap<String, Price>;

/// A budget's bounds; `None` is no bound.
#[derive(Debug, Clone, Copy, Default, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Limits {
    /// USD, reported or priced (unpriced usage cannot count).
    pub max_cost_usd: Option<f64>,
    /// Input and output tokens.
    pub max_tokens: Option<u64>,
}

impl Limits {
    /// No bound at all.
    pub fn is_unbounded(&self) -> bool {
        self.max_cost_usd.is_none() && self.max_tokens.is_none()
    }

    /// Which bound `spend` has reached, or `None` while there is budget left.
    pub fn spent_by(&self, spend: &Spend) -> Option<(BudgetKind, f64, f64)> {
        if let Some(max) = self.max_cost_usd {
            if spend.cost_usd >= max {
                return Some((BudgetKind::CostUsd, max, spend.cost_usd));
            }
        }
        if let Some(max) = self.max_tokens {
            let used = spend.tokens.total();
            if used >= max {
                return Some((BudgetKind::Tokens, max as f64, used as f64));
            }
        }
        None
    }

    /// Why these bounds cannot be used, or `None`.
    pub fn invalid(&self) -> Option<String> {
        match self.max_cost_usd {
            Some(v) if !v.is_finite() || v < 0.0 => {
                Some(format!("max_cost_usd is {v}; it is a number of USD ≥ 0"))
            }
            _ => None,
        }
    }
}

/// What a budget bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum BudgetKind {
    /// Dollars.
    CostUsd,
    /// Tokens.
    Tokens,
}

impl BudgetKind {
    /// A figure of this kind in words: `$1.2345` or `1200 tokens`.
    pub fn show(self, figure: f64) -> String {
        match self {
            BudgetKind::CostUsd => usd(figure),
            BudgetKind::Tokens => format!("{figure:.0} tokens"),
        }
    }

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            BudgetKind::CostUsd => "cost-usd",
            BudgetKind::Tokens => "tokens",
        }
    }
}

/// What a budget's scope has spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Spend {
    /// Tokens used.
    pub tokens: Tokens,
    /// USD, reported or priced.
    pub cost_usd: f64,
    /// Usage records whose cost is unknown (their tokens count, their dollars cannot).
    pub unpriced: u32,
}

impl Spend {
    /// Adds another spend (runs summed).
    pub fn plus(&mut self, o: &Spend) {
        self.tokens = self.tokens.plus(o.tokens);
        self.cost_usd += o.cost_usd;
        self.unpriced = self.unpriced.saturating_add(o.unpriced);
    }

    /// Adds one recorded usage.
    pub fn add(&mut self, tokens: &Tokens, cost_usd: Option<f64>) {
        self.tokens = self.tokens.plus(*tokens);
        match cost_usd {
            Some(c) => self.cost_usd += c,
            None => self.unpriced = self.unpriced.saturating_add(1),
        }
    }
}

/// A budget found spent, and whose.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct BudgetStop {
    /// The task whose own budget it is, or none for the run's.
    pub budget: Option<TaskId>,
    /// Dollars or tokens.
    pub kind: BudgetKind,
    /// The limit in force.
    pub limit: f64,
    /// What was spent.
    pub spent: f64,
}

impl BudgetStop {
    /// The command that raises it: `runlog budget RUN [TASK] --max-cost-usd USD`.
    pub fn raise_command(&self, run: &str) -> String {
        let task = self
            .budget
            .as_ref()
            .map(|t| format!(" {t}"))
            .unwrap_or_default();
        let flag = match self.kind {
            BudgetKind::CostUsd => "--max-cost-usd USD",
            BudgetKind::Tokens => "--max-tokens N",
        };
        format!("runlog budget {run}{task} {flag}")
    }

    /// In words: `the run's cost budget of $1.0000 is spent ($1.0200)`, or, stopped with
    /// something left (a call's worst case did not fit), `... cannot cover the next call
    /// ($0.9000 spent)`.
    pub fn describe(&self) -> String {
        let whose = match &self.budget {
            Some(t) => format!("task {t}'s"),
            None => "the run's".into(),
        };
        let what = match self.kind {
            BudgetKind::CostUsd => "cost",
            BudgetKind::Tokens => "token",
        };
        if self.spent < self.limit {
            return format!(
                "{whose} {what} budget of {} cannot cover the next call ({} spent)",
                self.kind.show(self.limit),
                self.kind.show(self.spent)
            );
        }
        format!(
            "{whose} {what} budget of {} is spent ({})",
            self.kind.show(self.limit),
            self.kind.show(self.spent)
        )
    }
}

/// One usage record as the state keeps it (the `usage-recorded` event's fields).
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct UsageRecord {
    /// The task.
    pub task: TaskId,
    /// The attempt.
    pub attempt: u32,
    /// Which command.
    pub stage: UsageStage,
    /// The model, when reported.
    pub model: Option<String>,
    /// The provider, when known.
    pub provider: Option<String>,
    /// The tokens.
    pub tokens: Tokens,
    /// The cost, when known.
    pub cost_usd: Option<f64>,
    /// Where the cost comes from.
    pub cost: CostSource,
    /// How many reports were added up into it.
    pub reports: u32,
}

impl UsageRecord {
    /// In words: `agent used 1200 input and 300 output tokens on sonnet: $0.0125 (priced)`.
    pub fn describe(&self) -> String {
        let model = self
            .model
            .as_deref()
            .map(|m| format!(" on {m}"))
            .unwrap_or_default();
        let t = &self.tokens;
        let cached = if t.cache_read + t.cache_write > 0 {
            format!(" ({} cached)", t.cache_read + t.cache_write)
        } else {
            String::new()
        };
        let cost = match self.cost_usd {
            Some(c) => format!("{} ({})", usd(c), self.cost.name()),
            None => "unpriced".into(),
        };
        format!(
            "{} used {} input{cached} and {} output tokens{model}: {cost}",
            self.stage.name(),
            t.input,
            t.output
        )
    }
}

/// Dollars as runlog shows them: four decimals, as agent calls cost fractions of a cent.
pub fn usd(cost: f64) -> String {
    format!("${cost:.4}")
}

/// The spend of `records` per key, in the order each key was first seen.
pub fn spend_by<'a, K: Eq + std::hash::Hash + Clone>(
    records: impl IntoIterator<Item = &'a UsageRecord>,
    key: impl Fn(&UsageRecord) -> K,
) -> Vec<(K, Spend)> {
    let mut at: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    let mut out: Vec<(K, Spend)> = Vec::new();
    for r in records {
        let k = key(r);
        let i = *at.entry(k.clone()).or_insert_with(|| {
            out.push((k, Spend::default()));
            out.len() - 1
        });
        if let Some((_, spend)) = out.get_mut(i) {
            spend.add(&r.tokens, r.cost_usd);
        }
    }
    out
}

/// The usage reports in a command's output and the lines that looked like one and were not,
/// with why. A usage line is a JSON object on a line of its own with a `usage` key.
pub fn reports_in(text: &str) -> (Vec<UsageReport>, Vec<String>) {
    let mut reports = Vec::new();
    let mut problems = Vec::new();
    for line in text.lines() {
        match usage_line(line) {
            None => {}
            Some(Ok(r)) => reports.push(r),
            Some(Err(why)) => problems.push(format!("a usage line was not recorded: {why}")),
        }
    }
    (reports, problems)
}

/// Whether `obj` is a usage report (then it is not a stage result).
pub fn is_usage_object(obj: &Map<String, Json>) -> bool {
    obj.contains_key("usage")
}

/// One line read as a usage report: `None` when it is not one.
pub fn usage_line(line: &str) -> Option<Result<UsageReport, UsageError>> {
    let t = line.trim();
    if !t.starts_with('{') || !t.contains("\"usage\"") {
        return None;
    }
    match serde_json::from_str::<Json>(t) {
        Ok(Json::Object(o)) if is_usage_object(&o) => Some(report(&o)),
        _ => None,
    }
}

/// Reads a report object (its `usage` and what stands beside it).
pub fn report(o: &Map<String, Json>) -> Result<UsageReport, UsageError> {
    let Some(Json::Object(u)) = o.get("usage") else {
        return Err(UsageError::NotAnObject);
    };
    let shape = Shape::of(o, u);
    let tokens = shape.tokens(u)?;
    let cost_usd = match o.get("cost_usd").or_else(|| o.get("total_cost_usd")) {
        None | Some(Json::Null) => None,
        Some(v) => Some(cost(v)?),
    };
    let text = |key: &str| match o.get(key) {
        Some(Json::String(s)) if !s.trim().is_empty() => Some(s.trim().chars().take(200).collect()),
        _ => None,
    };
    let model = text("model").or_else(|| single_model(o));
    let provider = text("provider").or_else(|| shape.provider().map(str::to_owned));
    Ok(UsageReport {
        model,
        provider,
        tokens,
        cost_usd,
    })
}

/// A Claude Code result names its model only as the one key of `modelUsage`.
fn single_model(o: &Map<String, Json>) -> Option<String> {
    match o.get("modelUsage") {
        Some(Json::Object(m)) if m.len() == 1 => m.keys().next().cloned(),
        _ => None,
    }
}

/// Which tool's usage object this is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    OpenAiChat,
    OpenAiResponses,
    Codex,
    Anthropic,
}

impl Shape {
    fn of(o: &Map<String, Json>, u: &Map<String, Json>) -> Shape {
        let has = |k: &str| u.contains_key(k);
        if has("prompt_tokens") || has("completion_tokens") {
            Shape::OpenAiChat
        } else if o.get("type").and_then(Json::as_str) == Some("turn.completed")
            || has("cached_input_tokens")
            || has("reasoning_output_tokens")
        {
            Shape::Codex
        } else if has("cache_creation_input_tokens")
            || has("cache_read_input_tokens")
            || o.get("type").and_then(Json::as_str) == Some("result")
        {
            Shape::Anthropic
        } else {
            // `input_tokens`/`output_tokens` alone mean the same in both remaining shapes.
            Shape::OpenAiResponses
        }
    }

    fn provider(self) -> Option<&'static str> {
        match self {
            Shape::OpenAiChat | Shape::OpenAiResponses | Shape::Codex => Some("openai"),
            Shape::Anthropic => Some("anthropic"),
        }
    }

    fn tokens(self, u: &Map<String, Json>) -> Result<Tokens, UsageError> {
        let n = |key: &str| count(u.get(key), key);
        let nested = |outer: &str, key: &str| match u.get(outer) {
            None | Some(Json::Null) => Ok(0),
            Some(Json::Object(d)) => count(d.get(key), &format!("{outer}.{key}")),
            Some(other) => Err(UsageError::NotAnObjectAt {
                key: outer.to_owned(),
                found: other.to_string(),
            }),
        };
        let t = match self {
            Shape::OpenAiChat => Tokens {
                input: n("prompt_tokens")?,
                output: n("completion_tokens")?,
                cache_read: nested("prompt_tokens_details", "cached_tokens")?,
                cache_write: 0,
                reasoning: nested("completion_tokens_details", "reasoning_tokens")?,
            },
            Shape::OpenAiResponses => Tokens {
                input: n("input_tokens")?,
                output: n("output_tokens")?,
                cache_read: nested("input_tokens_details", "cached_tokens")?,
                cache_write: 0,
                reasoning: nested("output_tokens_details", "reasoning_tokens")?,
            },
            Shape::Codex => Tokens {
                input: n("input_tokens")?,
                output: n("output_tokens")?,
                cache_read: n("cached_input_tokens")?,
                cache_write: 0,
                reasoning: n("reasoning_output_tokens")?,
            },
            Shape::Anthropic => {
                // Anthropic counts cached input apart from `input_tokens`.
                let (fresh, write, read) = (
                    n("input_tokens")?,
                    n("cache_creation_input_tokens")?,
                    n("cache_read_input_tokens")?,
                );
                Tokens {
                    input: fresh.saturating_add(write).saturating_add(read),
                    output: n("output_tokens")?,
                    cache_read: read,
                    cache_write: write,
                    reasoning: 0,
                }
            }
        };
        if t.input > MAX_TOKENS || t.output > MAX_TOKENS {
            return Err(UsageError::TooManyTokens {
                input: t.input,
                output: t.output,
            });
        }
        if t.cache_read.saturating_add(t.cache_write) > t.input {
            return Err(UsageError::PartExceedsWhole {
                part: "cached",
                count: t.cache_read.saturating_add(t.cache_write),
                whole: "input",
                of: t.input,
            });
        }
        if t.reasoning > t.output {
            return Err(UsageError::PartExceedsWhole {
                part: "reasoning",
                count: t.reasoning,
                whole: "output",
                of: t.output,
            });
        }
        Ok(t)
    }
}

fn count(v: Option<&Json>, key: &str) -> Result<u64, UsageError> {
    match v {
        None | Some(Json::Null) => Ok(0),
        Some(Json::Number(n)) => match n.as_u64() {
            Some(c) if c <= MAX_TOKENS => Ok(c),
            Some(c) => Err(UsageError::CountTooLarge {
                key: key.to_owned(),
                count: c,
            }),
            None => Err(UsageError::NotACount {
                key: key.to_owned(),
                found: n.to_string(),
            }),
        },
        Some(other) => Err(UsageError::NotACount {
            key: key.to_owned(),
            found: other.to_string(),
        }),
    }
}

fn cost(v: &Json) -> Result<f64, UsageError> {
    match v.as_f64() {
        Some(c) if c.is_finite() && (0.0..=MAX_REPORTED_COST_USD).contains(&c) => Ok(c),
        Some(c) => Err(UsageError::CostOutOfRange { cost: c }),
        None => Err(UsageError::CostNotANumber {
            found: v.to_string(),
        }),
    }
}

/// Why a usage report cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UsageError {
    /// `usage` is there and not an object.
    #[error("\"usage\" is not an object")]
    NotAnObject,
    /// A nested part of `usage` is not an object.
    #[error("{key} is {found}, not an object")]
    NotAnObjectAt {
        /// Where.
        key: String,
        /// What stands there.
        found: String,
    },
    /// A count is not a whole number of tokens.
    #[error("{key} is {found}, not a count of tokens")]
    NotACount {
        /// Where.
        key: String,
        /// What stands there.
        found: String,
    },
    /// A count is beyond what a report may hold.
    #[error("{key} is {count}, more than {MAX_TOKENS}")]
    CountTooLarge {
        /// Where.
        key: String,
        /// The count.
        count: u64,
    },
    /// The input or output count is beyond what a report may hold.
    #[error(
        "{input} input and {output} output tokens is more than the {MAX_TOKENS} a report may hold"
    )]
    TooManyTokens {
        /// Input tokens.
        input: u64,
        /// Output tokens.
        output: u64,
    },
    /// A part (cached, reasoning) counts more than the whole it is part of.
    #[error("{count} {part} tokens are more than the {of} {whole} tokens they are part of")]
    PartExceedsWhole {
        /// The part's name.
        part: &'static str,
        /// Its count.
        count: u64,
        /// The whole's name.
        whole: &'static str,
        /// Its count.
        of: u64,
    },
    /// The reported cost is out of range.
    #[error("the cost {cost} is not a number of USD between 0 and {MAX_REPORTED_COST_USD}")]
    CostOutOfRange {
        /// The cost.
        cost: f64,
    },
    /// The reported cost is not a number.
    #[error("the cost {found} is not a number")]
    CostNotANumber {
        /// What stands there.
        found: String,
    },
}

/// Why a report (from a command, not a line) cannot be recorded, or `None`.
pub fn invalid_report(r: &UsageReport) -> Option<String> {
    let t = &r.tokens;
    if [t.input, t.output, t.cache_read, t.cache_write, t.reasoning]
        .iter()
        .any(|n| *n > MAX_TOKENS)
    {
        return Some(format!("a count is more than {MAX_TOKENS}"));
    }
    if t.cache_read.saturating_add(t.cache_write) > t.input || t.reasoning > t.output {
        return Some("cached or reasoning tokens are more than the tokens they are part of".into());
    }
    match r.cost_usd {
        Some(c) if !c.is_finite() || !(0.0..=MAX_REPORTED_COST_USD).contains(&c) => Some(format!(
            "the cost {c} is not a number of USD between 0 and {MAX_REPORTED_COST_USD}"
        )),
        _ => None,
    }
}

/// Reports added up into records: one per model and per whether the cost was reported (a
/// reported cost wins; the rest priced with `prices`, or unpriced). In first-seen order.
pub fn records(
    task: &TaskId,
    attempt: u32,
    stage: UsageStage,
    reports: &[UsageReport],
    prices: &Prices,
) -> Vec<UsageRecord> {
    let mut out: Vec<UsageRecord> = Vec::new();
    for r in reports {
        let (cost, cost_usd) = match (r.cost_usd, r.model.as_ref().and_then(|m| prices.get(m))) {
            (Some(c), _) => (CostSource::Reported, Some(c)),
            (None, Some(price)) => (CostSource::Priced, Some(price.cost(&r.tokens))),
            (None, None) => (CostSource::Unpriced, None),
        };
        let same = |rec: &&mut UsageRecord| {
            rec.model == r.model && rec.provider == r.provider && rec.cost == cost
        };
        match out.iter_mut().find(|rec| same(rec)) {
            Some(rec) => {
                rec.tokens = rec.tokens.plus(r.tokens);
                rec.cost_usd = rec.cost_usd.zip(cost_usd).map(|(a, b)| a + b);
                rec.reports = rec.reports.saturating_add(1);
            }
            None => out.push(UsageRecord {
                task: task.clone(),
                attempt,
                stage,
                model: r.model.clone(),
                provider: r.provider.clone(),
                tokens: r.tokens,
                cost_usd,
                cost,
                reports: 1,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(line: &str) -> UsageReport {
        match usage_line(line) {
            Some(Ok(r)) => r,
            other => unreachable!("{line}: {other:?}"),
        }
    }

    fn refused(line: &str) -> String {
        match usage_line(line) {
            Some(Err(why)) => why.to_string(),
            other => unreachable!("{line}: {other:?}"),
        }
    }

    #[test]
    fn openai_chat() {
        let r = one(
            r#"{"model": "gpt-4o", "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "prompt_tokens_details": {"cached_tokens": 400}, "completion_tokens_details": {"reasoning_tokens": 50}}}"#,
        );
        assert_eq!(
            r.tokens,
            Tokens {
                input: 1000,
                output: 200,
                cache_read: 400,
                cache_write: 0,
                reasoning: 50
            }
        );
        assert_eq!(
            (r.model.as_deref(), r.provider.as_deref()),
            (Some("gpt-4o"), Some("openai"))
        );
    }

    #[test]
    fn openai_responses() {
        let r = one(
            r#"{"usage": {"input_tokens": 900, "output_tokens": 100, "input_tokens_details": {"cached_tokens": 300}, "output_tokens_details": {"reasoning_tokens": 60}}, "model": "o3", "cost_usd": 0.0123}"#,
        );
        assert_eq!(
            r.tokens,
            Tokens {
                input: 900,
                output: 100,
                cache_read: 300,
                cache_write: 0,
                reasoning: 60
            }
        );
        assert_eq!(r.cost_usd, Some(0.0123));
    }

    #[test]
    fn anthropic_counts_cache_inside_input() {
        let r = one(
            r#"{"model": "claude-sonnet-4", "usage": {"input_tokens": 100, "output_tokens": 50, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 700}}"#,
        );
        assert_eq!(
            r.tokens,
            Tokens {
                input: 1000,
                output: 50,
                cache_read: 700,
                cache_write: 200,
                reasoning: 0
            }
        );
        assert_eq!(r.provider.as_deref(), Some("anthropic"));
    }

    #[test]
    fn claude_code_result() {
        let r = one(
            r#"{"type": "result", "subtype": "success", "total_cost_usd": 0.42, "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 90}, "modelUsage": {"claude-opus-4": {"inputTokens": 10}}}"#,
        );
        assert_eq!(r.cost_usd, Some(0.42));
        assert_eq!(r.model.as_deref(), Some("claude-opus-4"));
        assert_eq!(r.tokens.input, 100);
    }

    #[test]
    fn codex_turn_completed() {
        let r = one(
            r#"{"type": "turn.completed", "usage": {"input_tokens": 24763, "cached_input_tokens": 24448, "output_tokens": 122}}"#,
        );
        assert_eq!(
            r.tokens,
            Tokens {
                input: 24763,
                output: 122,
                cache_read: 24448,
                cache_write: 0,
                reasoning: 0
            }
        );
        assert_eq!(r.provider.as_deref(), Some("openai"));
    }

    #[test]
    fn bad_reports_say_why() {
        assert!(refused(r#"{"usage": {"prompt_tokens": -1}}"#).contains("not a count"));
        assert!(refused(r#"{"usage": {"prompt_tokens": 1.5}}"#).contains("not a count"));
        assert!(refused(r#"{"usage": {"input_tokens": 2000000000000}}"#).contains("more than"));
        assert!(refused(r#"{"usage": {"input_tokens": 1}, "cost_usd": -0.1}"#).contains("cost"));
        assert!(refused(r#"{"usage": 3}"#).contains("not an object"));
        assert!(refused(
            r#"{"usage": {"prompt_tokens": 1, "prompt_tokens_details": {"cached_tokens": 5}}}"#
        )
        .contains("cached"));
        assert!(usage_line("{\"result\": 1}").is_none());
        assert!(usage_line("usage: 3").is_none());
        let (reports, problems) =
            reports_in("{\"usage\": {\"input_tokens\": 3}}\n{\"usage\": \"x\"}\nhello");
        assert_eq!((reports.len(), problems.len()), (1, 1));
    }

    #[test]
    fn records_add_up_per_model_and_source() {
        let mut prices = Prices::new();
        prices.insert(
            "m".into(),
            Price {
                input: 3.0,
                output: 15.0,
                cache_read: Some(0.3),
                cache_write: Some(3.75),
            },
        );
        let t = |i, o| Tokens {
            input: i,
            output: o,
            ..Tokens::default()
        };
        let r = |model: &str, i, o, cost| UsageReport {
            model: Some(model.into()),
            provider: None,
            tokens: t(i, o),
            cost_usd: cost,
        };
        let recs = records(
            &TaskId::from("a"),
            1,
            UsageStage::Agent,
            &[
                r("m", 1_000_000, 0, None),
                r("m", 0, 1_000_000, None),
                r("m", 10, 10, Some(0.5)),
                r("x", 1, 1, None),
            ],
            &prices,
        );
        assert_eq!(recs.len(), 3);
        assert_eq!(
            (recs[0].cost, recs[0].cost_usd, recs[0].reports),
            (CostSource::Priced, Some(18.0), 2)
        );
        assert_eq!(
            (recs[1].cost, recs[1].cost_usd),
            (CostSource::Reported, Some(0.5))
        );
        assert_eq!(
            (recs[2].cost, recs[2].cost_usd),
            (CostSource::Unpriced, None)
        );
    }

    #[test]
    fn cached_tokens_are_priced_apart() {
        let p = Price {
            input: 3.0,
            output: 15.0,
            cache_read: Some(0.3),
            cache_write: Some(3.75),
        };
        let t = Tokens {
            input: 3_000_000,
            output: 0,
            cache_read: 1_000_000,
            cache_write: 1_000_000,
            reasoning: 0,
        };
        assert!((p.cost(&t) - (3.0 + 0.3 + 3.75)).abs() < 1e-9);
    }
}
