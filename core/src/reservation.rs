//! Money held for model calls in flight. Before a call leaves the gateway, its worst case (its
//! input bounded from the request's size, its output by the request's own bound or the one
//! runlog gave it, priced) is reserved against the task's and the run's budgets; the call's
//! record settles it to what the provider counted. Judged on spend alone, eight calls started
//! together with a cent left would all go, and each could spend many times that cent.
//!
//! A call whose worst case does not fit while others are in flight may fit once they settle
//! (they usually cost less than their worst): the gateway waits and asks again. One that does
//! not fit with nothing in flight never will: it is refused.

use crate::ids::TaskId;
use crate::usage::{BudgetKind, BudgetStop, Limits, Prices, Spend, Tokens, UsageStage};
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// The worst case of one call, held while it is in flight (the `model-call-reserved` event).
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Reservation {
    /// The task whose command makes the call.
    pub task: TaskId,
    /// Its attempt.
    pub attempt: u32,
    /// Which of the attempt's commands.
    pub stage: UsageStage,
    /// The call's number among the command's calls (its `model-called` has the same).
    pub n: u32,
    /// The provider it goes to.
    pub provider: String,
    /// The API it speaks.
    pub api: crate::model_call::ModelApi,
    /// The model asked.
    pub model: Option<String>,
    /// Input tokens at most: the request's size in bytes (a token is at least a byte) and
    /// what the provider adds.
    pub input_tokens: u64,
    /// Output tokens at most.
    pub output_tokens: u64,
    /// Where the output bound comes from.
    pub bound: OutputBound,
    /// The worst case in USD at the run's price for the model; none when the model has no
    /// price (then only a token budget holds it, as only tokens of its usage can count).
    pub cost_usd: Option<f64>,
}

/// Where a call's bound on its output comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum OutputBound {
    /// The request's own (`max_tokens`, `max_completion_tokens`, `max_output_tokens`).
    Request,
    /// The request had none: runlog gave it the model's `max_output_tokens` from `[prices]`.
    Model,
    /// The request had none: runlog gave it the workflow's `max_output_tokens`.
    Workflow,
}

impl OutputBound {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            OutputBound::Request => "request",
            OutputBound::Model => "model",
            OutputBound::Workflow => "workflow",
        }
    }
}

impl Reservation {
    /// The call it holds money for: task, attempt, stage and number.
    pub fn key(&self) -> (&TaskId, u32, UsageStage, u32) {
        (&self.task, self.attempt, self.stage, self.n)
    }

    /// Its worst case in tokens.
    pub fn tokens(&self) -> Tokens {
        Tokens {
            input: self.input_tokens,
            output: self.output_tokens,
            ..Tokens::default()
        }
    }

    /// In words: `agent call 3 holds up to $0.0974 (12000 input and 4096 output tokens at
    /// most; its output bound is the request's)`.
    pub fn describe(&self) -> String {
        let worst = self.worst();
        let bound = match self.bound {
            OutputBound::Request => "its output bound is the request's",
            OutputBound::Model => "runlog bounded its output with the model's max_output_tokens",
            OutputBound::Workflow => {
                "runlog bounded its output with the workflow's max_output_tokens"
            }
        };
        format!(
            "{} call {} holds up to {worst} ({} input and {} output tokens at most; {bound})",
            self.stage.name(),
            self.n,
            self.input_tokens,
            self.output_tokens,
        )
    }

    /// The record of its call when the runner stopped while it was in flight (found on
    /// resume): what it used is unknown, and it no longer holds anything.
    pub fn interrupted(&self) -> crate::model_call::ModelCall {
        use crate::model_call::{CallEnd, ModelCall};
        ModelCall {
            task: self.task.clone(),
            attempt: self.attempt,
            stage: self.stage,
            n: self.n,
            provider: self.provider.clone(),
            api: self.api,
            model: self.model.clone(),
            streamed: false,
            status: 0,
            end: CallEnd::Interrupted,
            first_byte_ms: None,
            duration_ms: 0,
            tokens: Tokens::default(),
            cost_usd: None,
            cost: crate::usage::CostSource::Unpriced,
            request: None,
            response: None,
            assembled: None,
            error: Some(format!(
                "the runner stopped while the call was in flight; what it used is unknown (at most {})",
                self.worst()
            )),
        }
    }

    /// Its worst case in words: `$0.0974`, or `16096 tokens (unpriced)`.
    pub fn worst(&self) -> String {
        match self.cost_usd {
            Some(usd) => crate::usage::usd(usd),
            None => format!("{} tokens (unpriced)", self.tokens().total()),
        }
    }

    /// Priced at `prices`: at the model's price, else at the dearest price there is (the
    /// model asked is often not the one that answers, `claude-sonnet-4-5` answered by
    /// `claude-sonnet-4-5-20250929`, and the answer's is the one priced); none when there are
    /// no prices (then no usage has a cost to count either).
    pub fn priced(mut self, prices: &Prices) -> Reservation {
        let dearest = || {
            prices.values().copied().reduce(|a, b| crate::usage::Price {
                input: a.input.max(b.input),
                output: a.output.max(b.output),
                cache_read: None,
                cache_write: None,
            })
        };
        let price = self.model.as_ref().and_then(|m| prices.get(m)).copied();
        self.cost_usd = price.or_else(dearest).map(|p| p.cost(&self.tokens()));
        self
    }
}

/// A call whose worst case did not fit what a budget had left with no call in flight to free
/// room (the `model-call-did-not-fit` event): it was refused, and its task starts no other
/// attempt (their first call would not fit either) until a budget is changed.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct DidNotFit {
    /// The call and its worst case, priced.
    pub reservation: Reservation,
    /// The budget, its limit and what was spent.
    pub budget: BudgetStop,
}

impl DidNotFit {
    /// By how much, as a shortfall with nothing in flight.
    pub fn shortfall(&self) -> Shortfall {
        Shortfall {
            budget: self.budget.clone(),
            held: 0.0,
            in_flight: 0,
            worst: self.worst(),
        }
    }

    /// Its worst case in the budget's kind.
    pub fn worst(&self) -> f64 {
        match self.budget.kind {
            BudgetKind::CostUsd => self.reservation.cost_usd.unwrap_or(0.0),
            BudgetKind::Tokens => self.reservation.tokens().total() as f64,
        }
    }
}

/// What calls in flight hold of one budget's scope.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Held {
    /// Tokens at most.
    pub tokens: u64,
    /// USD at most (of the priced ones).
    pub cost_usd: f64,
    /// How many calls.
    pub calls: u32,
}

impl Held {
    /// What `reservations` hold together.
    pub fn of<'a>(reservations: impl IntoIterator<Item = &'a Reservation>) -> Held {
        reservations.into_iter().fold(Held::default(), |h, r| Held {
            tokens: h.tokens.saturating_add(r.tokens().total()),
            cost_usd: h.cost_usd + r.cost_usd.unwrap_or(0.0),
            calls: h.calls.saturating_add(1),
        })
    }
}

/// A call that does not fit a budget: which, what is spent and held, and its worst case.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Shortfall {
    /// The budget, as a stop names it (its limit and what was spent).
    pub budget: BudgetStop,
    /// What calls in flight hold of it.
    pub held: f64,
    /// How many calls are in flight in its scope: when any are, the call may fit once they settle.
    pub in_flight: u32,
    /// The call's worst case.
    pub worst: f64,
}

impl Shortfall {
    /// In words: `this call could cost up to $0.0400, and the run's cost budget of $0.0100 has
    /// $0.0010 left ($0.0090 spent, $0.0000 held by 0 calls in flight)`.
    pub fn describe(&self) -> String {
        let b = &self.budget;
        let whose = match &b.budget {
            Some(t) => format!("task {t}'s"),
            None => "the run's".into(),
        };
        let (what, could) = match b.kind {
            BudgetKind::CostUsd => ("cost", "cost"),
            BudgetKind::Tokens => ("token", "use"),
        };
        let left = (b.limit - b.spent - self.held).max(0.0);
        format!(
            "this call could {could} up to {}, and {whose} {what} budget of {} has {} left ({} spent, {} held by {} call{} in flight)",
            b.kind.show(self.worst),
            b.kind.show(b.limit),
            b.kind.show(left),
            b.kind.show(b.spent),
            b.kind.show(self.held),
            self.in_flight,
            if self.in_flight == 1 { "" } else { "s" },
        )
    }
}

/// Whether `r`'s worst case fits `limits` beside `spend` and `held` (the budget of `whose`,
/// a task, or the run's); by how much it does not.
pub(crate) fn fits(
    limits: &Limits,
    spend: &Spend,
    held: Held,
    r: &Reservation,
    whose: Option<&TaskId>,
) -> Result<(), Shortfall> {
    let short = |kind, limit: f64, spent: f64, held_here: f64, worst: f64| Shortfall {
        budget: BudgetStop {
            budget: whose.cloned(),
            kind,
            limit,
            spent,
        },
        held: held_here,
        in_flight: held.calls,
        worst,
    };
    if let (Some(max), Some(worst)) = (limits.max_cost_usd, r.cost_usd) {
        if spend.cost_usd + held.cost_usd + worst > max {
            return Err(short(
                BudgetKind::CostUsd,
                max,
                spend.cost_usd,
                held.cost_usd,
                worst,
            ));
        }
    }
    if let Some(max) = limits.max_tokens {
        let worst = r.tokens().total();
        let spent = spend.tokens.total();
        if spent.saturating_add(held.tokens).saturating_add(worst) > max {
            return Err(short(
                BudgetKind::Tokens,
                max as f64,
                spent as f64,
                held.tokens as f64,
                worst as f64,
            ));
        }
    }
    Ok(())
}
