//! A call a command made to a model, as runlog's gateway (or any orchestrator recording
//! through `emit`) saw it: which command, which provider and API, how it ended, what the
//! provider said it used, and where the request and the answer are kept. The usage here is
//! measured where the call passed, not what the command chose to print.

use crate::ids::{Hash, TaskId};
use crate::usage::{usd, CostSource, Tokens, UsageRecord, UsageReport, UsageStage};
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// The provider API a call spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "kebab-case")]
pub enum ModelApi {
    /// Anthropic Messages (`POST /v1/messages`).
    Messages,
    /// Anthropic's token count (`POST /v1/messages/count_tokens`).
    CountTokens,
    /// OpenAI Chat Completions (`POST /v1/chat/completions`).
    ChatCompletions,
    /// OpenAI Responses (`POST /v1/responses`).
    Responses,
    /// The model list (`GET /v1/models`).
    Models,
}

impl ModelApi {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            ModelApi::Messages => "messages",
            ModelApi::CountTokens => "count-tokens",
            ModelApi::ChatCompletions => "chat-completions",
            ModelApi::Responses => "responses",
            ModelApi::Models => "models",
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "end", rename_all = "kebab-case")]
pub enum CallEnd {
    /// The provider answered (its status says how).
    Answered,
    /// The provider could not be reached or stopped answering (the error says how); the
    /// command was told what happened, and runlog tried nothing more.
    UpstreamFailed,
    /// The command hung up before the answer ended; the provider's call was cancelled.
    ClientGone,
    /// Refused by runlog before it reached the provider: a budget was spent.
    OverBudget {
        /// Whose budget, its limit and the spend, in words.
        spent: String,
    },
    /// Refused by runlog before it reached the provider: the request was not one it passes
    /// on (too large, not JSON, an unknown provider); the error says which.
    Refused,
    /// The runner stopped (a kill -9) while the call was in flight: recorded on resume.
    Interrupted,
}

impl CallEnd {
    /// The kebab-case name.
    pub fn name(&self) -> &'static str {
        match self {
            CallEnd::Answered => "answered",
            CallEnd::UpstreamFailed => "upstream-failed",
            CallEnd::ClientGone => "client-gone",
            CallEnd::OverBudget { .. } => "over-budget",
            CallEnd::Refused => "refused",
            CallEnd::Interrupted => "interrupted",
        }
    }
}

/// A body kept in the store's blob area: its hash and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Body {
    /// The blob's hash.
    pub blob: Hash,
    /// Its size in bytes.
    pub bytes: u64,
}

/// One model call (the `model-called` event's record).
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ModelCall {
    /// The task whose command made it (for the replanner, the task whose completion asked
    /// for it).
    pub task: TaskId,
    /// The attempt.
    pub attempt: u32,
    /// Which of the attempt's commands.
    pub stage: UsageStage,
    /// Its number among that command's calls, from 1.
    pub n: u32,
    /// The provider, as the workflow names it (`anthropic`, `openai`, or a `[providers]`
    /// table's name).
    pub provider: String,
    /// The API it spoke.
    pub api: ModelApi,
    /// The model: the one that answered, else the one asked for.
    pub model: Option<String>,
    /// Whether the answer was streamed (server-sent events).
    pub streamed: bool,
    /// The HTTP status the command was given (0 when none was).
    pub status: u16,
    /// How it ended.
    pub end: CallEnd,
    /// Milliseconds from the request to the provider's first byte, when one came.
    pub first_byte_ms: Option<u64>,
    /// Milliseconds from the request to the answer's last byte (or the end).
    pub duration_ms: u64,
    /// The usage the provider returned.
    pub tokens: Tokens,
    /// The cost in USD: the provider's, or priced with the run's prices, or unknown.
    pub cost_usd: Option<f64>,
    /// Where the cost comes from.
    pub cost: CostSource,
    /// The request as sent (secrets replaced).
    pub request: Option<Body>,
    /// The answer as it came: for a stream, its events as they passed.
    pub response: Option<Body>,
    /// For a stream, the message its events put together.
    pub assembled: Option<Body>,
    /// What went wrong, when something did.
    pub error: Option<String>,
}

impl ModelCall {
    /// The call's usage as the run adds it up (one record, for costs by task, model, stage).
    pub fn usage(&self) -> UsageRecord {
        UsageRecord {
            task: self.task.clone(),
            attempt: self.attempt,
            stage: self.stage,
            model: self.model.clone(),
            provider: Some(self.provider.clone()),
            tokens: self.tokens,
            cost_usd: self.cost_usd,
            cost: self.cost,
            reports: 1,
        }
    }

    /// Its usage as a report, to be checked and priced as every report is.
    pub fn report(&self) -> UsageReport {
        UsageReport {
            model: self.model.clone(),
            provider: Some(self.provider.clone()),
            tokens: self.tokens,
            cost_usd: self.cost_usd,
        }
    }

    /// In words: `agent call 3 to anthropic messages (claude-sonnet-4, streamed): 200 in
    /// 1840 ms (first byte 310 ms), 12000 input and 350 output tokens, $0.0412 (priced)`.
    pub fn describe(&self) -> String {
        let model = self.model.as_deref().unwrap_or("no model named");
        let streamed = if self.streamed { ", streamed" } else { "" };
        let first = self
            .first_byte_ms
            .map(|ms| format!(" (first byte {ms} ms)"))
            .unwrap_or_default();
        let how = match &self.end {
            CallEnd::Answered => format!("{} in {} ms{first}", self.status, self.duration_ms),
            CallEnd::OverBudget { spent } => format!("refused: {spent}"),
            other => format!("{} after {} ms", other.name(), self.duration_ms),
        };
        let cost = match self.cost_usd {
            Some(c) => format!("{} ({})", usd(c), self.cost.name()),
            None => "unpriced".into(),
        };
        let error = self
            .error
            .as_deref()
            .map(|e| format!("; {e}"))
            .unwrap_or_default();
        format!(
            "{} call {} to {} {} ({model}{streamed}): {how}, {} input and {} output tokens, {cost}{error}",
            self.stage.name(),
            self.n,
            self.provider,
            self.api.name(),
            self.tokens.input,
            self.tokens.output,
        )
    }
}
