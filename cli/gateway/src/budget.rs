//! The gateway's side of the budgets. The engine tells it where each running task stands
//! ([`Standing`]); a call of a task under a budget has its worst case reserved by the engine
//! before it leaves ([`Reserve`], judged in the run's rules: `runlog_core::reservation`), and
//! waits while calls in flight hold the money it needs. A request that leaves its output
//! unbounded is given the bound its worst case was judged with, so the provider holds it too.

use axum::body::Bytes;
use runlog_core::model_call::ModelApi;
use runlog_core::reservation::{OutputBound, Reservation};
use std::collections::HashMap;
use tokio::sync::oneshot;

/// How long a call waits for calls in flight to settle before it is refused.
pub const RESERVE_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

/// How often a waiting call asks again when no call of this gateway settles (one of another
/// worker's may have).
pub(crate) const ASK_AGAIN: std::time::Duration = std::time::Duration::from_millis(250);

/// Input tokens a provider adds to what a request sends (the system prompt of tool use is
/// 300-odd of Anthropic's), counted in a worst case beside the request's size.
pub const PROVIDER_INPUT_ALLOWANCE: u64 = 1_024;

/// The output bound given to a request that has none, when the workflow names none.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 16_384;

/// Where a running task stands with its budgets (its own and the run's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// A budget is spent: its calls are refused with these words.
    Spent(String),
    /// A budget bounds it: each call's worst case is reserved before it leaves.
    Budgeted,
}

/// A call's worst case, for the engine to judge and record.
#[derive(Debug)]
pub struct Reserve {
    /// The call and its worst case (unpriced: the run's prices are the engine's).
    pub reservation: Reservation,
    /// Told what the engine judged.
    pub judged: oneshot::Sender<Judged>,
}

/// What the engine judged of a reservation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judged {
    /// Reserved: the call goes.
    Go,
    /// It does not fit while calls are in flight: ask again once one settles (the words say why).
    Wait(String),
    /// It does not fit and nothing in flight can free room, or it cannot be reserved at all.
    Refused(String),
}

/// The output bounds given to requests without one: by model (`[prices."MODEL"]
/// max_output_tokens`), else the workflow's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputBounds {
    /// By model.
    pub by_model: HashMap<String, u64>,
    /// The workflow's (`[settings] max_output_tokens`).
    pub workflow: u64,
}

impl Default for OutputBounds {
    fn default() -> Self {
        OutputBounds {
            by_model: HashMap::new(),
            workflow: DEFAULT_MAX_OUTPUT_TOKENS,
        }
    }
}

/// A request's worst case: its input bounded by its size, its output by its own bound (times
/// the answers it asks for) or the one given to it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Worst {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub bound: OutputBound,
    /// The request with the bound written in, when it had none.
    pub bounded: Option<Bytes>,
}

impl Worst {
    /// Input and output tokens at most.
    pub(crate) fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
}

/// The field each API bounds its output with, the one runlog writes when there is none.
fn bound_fields(api: ModelApi) -> Option<(&'static [&'static str], &'static str)> {
    match api {
        ModelApi::Messages => Some((&["max_tokens"], "max_tokens")),
        ModelApi::ChatCompletions => Some((
            &["max_completion_tokens", "max_tokens"],
            "max_completion_tokens",
        )),
        ModelApi::Responses => Some((&["max_output_tokens"], "max_output_tokens")),
        // A token count and the model list cost nothing.
        ModelApi::CountTokens | ModelApi::Models => None,
    }
}

/// Whether a call of `api` spends tokens (and so is reserved).
pub(crate) fn spends(api: ModelApi) -> bool {
    bound_fields(api).is_some()
}

/// The worst case of `request` (`api`'s body asking `model`).
pub(crate) fn worst_case(
    api: ModelApi,
    request: &Bytes,
    model: Option<&str>,
    bounds: &OutputBounds,
) -> Worst {
    // A token is at least a byte of what is sent: the body's size bounds its input, beside
    // what the provider adds.
    let input_tokens = (request.len() as u64).saturating_add(PROVIDER_INPUT_ALLOWANCE);
    let body: Option<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_slice(request).ok();
    let (read, written) = bound_fields(api).unwrap_or((&[], "max_tokens"));
    let own = body.as_ref().and_then(|b| {
        read.iter()
            .find_map(|f| b.get(*f).and_then(serde_json::Value::as_u64))
    });
    // Chat Completions' `n` asks for that many answers, each up to the bound.
    let answers = body
        .as_ref()
        .and_then(|b| b.get("n"))
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(1)
        .clamp(1, 128);
    if let Some(own) = own {
        return Worst {
            input_tokens,
            output_tokens: own.saturating_mul(answers),
            bound: OutputBound::Request,
            bounded: None,
        };
    }
    let (given, bound) = match model.and_then(|m| bounds.by_model.get(m)) {
        Some(n) => (*n, OutputBound::Model),
        None => (bounds.workflow, OutputBound::Workflow),
    };
    let bounded = body.and_then(|mut b| {
        b.insert(written.to_owned(), serde_json::Value::from(given));
        serde_json::to_vec(&b).ok().map(Bytes::from)
    });
    Worst {
        input_tokens,
        output_tokens: given.saturating_mul(answers),
        bound,
        bounded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worst(api: ModelApi, body: &str) -> Worst {
        let bounds = OutputBounds {
            by_model: HashMap::from([("big".to_owned(), 64_000)]),
            workflow: 8_000,
        };
        let model = serde_json::from_str::<serde_json::Value>(body).unwrap()["model"]
            .as_str()
            .map(str::to_owned);
        worst_case(
            api,
            &Bytes::from(body.to_owned()),
            model.as_deref(),
            &bounds,
        )
    }

    #[test]
    fn a_requests_own_bound_is_its_worst_output_and_its_size_its_worst_input() {
        let body = r#"{"model":"m","max_tokens":4096,"messages":[]}"#;
        let w = worst(ModelApi::Messages, body);
        assert_eq!(
            (w.input_tokens, w.output_tokens, w.bound),
            (
                body.len() as u64 + PROVIDER_INPUT_ALLOWANCE,
                4096,
                OutputBound::Request
            )
        );
        assert_eq!(w.bounded, None, "a bounded request is sent as it is");
        let chat = worst(
            ModelApi::ChatCompletions,
            r#"{"model":"m","max_tokens":100,"n":3}"#,
        );
        assert_eq!(chat.output_tokens, 300, "three answers of up to 100 each");
    }

    #[test]
    fn an_unbounded_request_is_given_the_models_bound_or_the_workflows_and_says_so() {
        let w = worst(
            ModelApi::ChatCompletions,
            r#"{"model":"big","messages":[]}"#,
        );
        assert_eq!((w.output_tokens, w.bound), (64_000, OutputBound::Model));
        let sent: serde_json::Value = serde_json::from_slice(&w.bounded.unwrap()).unwrap();
        assert_eq!(sent["max_completion_tokens"], 64_000);
        let w = worst(ModelApi::Responses, r#"{"model":"other","input":"hi"}"#);
        assert_eq!((w.output_tokens, w.bound), (8_000, OutputBound::Workflow));
        let sent: serde_json::Value = serde_json::from_slice(&w.bounded.unwrap()).unwrap();
        assert_eq!(sent["max_output_tokens"], 8_000);
    }
}
