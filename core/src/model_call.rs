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
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
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
    /// A rerun answered it from the recording: the recorded run's call at `seq` asked the
    /// same, and its answer was given again. No provider was reached.
    Replayed {
        /// The seq of the recorded call, in the run rerun.
        seq: u64,
    },
    /// A rerun with recorded answers refused it: it asked something the recording did not
    /// (the `call-diverged` event before it says how).
    Diverged,
    /// Refused by runlog before it reached the provider: over a rate limit the workflow gives
    /// the provider; the command was told when to come back (429, `retry-after`).
    RateLimited {
        /// The limit, in words (`requests_per_minute = 30`).
        limit: String,
        /// When the command was told to come back, in milliseconds.
        retry_after_ms: u64,
    },
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
            CallEnd::Replayed { .. } => "replayed",
            CallEnd::Diverged => "diverged",
            CallEnd::RateLimited { .. } => "rate-limited",
        }
    }
}

/// A body kept in the store's blob area: its hash and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Body {
    /// The blob's hash.
    pub blob: Hash,
    /// Its size in bytes.
    pub bytes: u64,
}

/// One model call (the `model-called` event's record).
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
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

    /// What went wrong, when the call got no good answer: how it ended and why.
    pub fn failure(&self) -> Option<String> {
        if self.end == CallEnd::Answered && self.status < 400 {
            return None;
        }
        let why = self.error.clone();
        Some(format!(
            "{}: {}",
            self.end.name(),
            why.unwrap_or_else(|| format!("status {}", self.status))
        ))
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
            CallEnd::RateLimited {
                limit,
                retry_after_ms,
            } => format!(
                "refused over {limit}, told to come back in {:.1} s",
                *retry_after_ms as f64 / 1000.0
            ),
            CallEnd::Replayed { seq } => format!(
                "{} from the recording (seq {seq}) in {} ms",
                self.status, self.duration_ms
            ),
            other => format!("{} after {} ms", other.name(), self.duration_ms),
        };
        let cost = match self.cost_usd {
            Some(c) => format!("{} ({})", usd(c), self.cost.name()),
            None => "unpriced".into(),
        };
        // A refusal's words are its end's already.
        let error = self
            .error
            .as_deref()
            .filter(|_| {
                !matches!(
                    self.end,
                    CallEnd::OverBudget { .. } | CallEnd::RateLimited { .. }
                )
            })
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

/// What a provider's answer says of itself: the model that answered and the tokens it counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measured {
    /// The model the answer names, when it names one.
    pub model: Option<String>,
    /// The tokens its usage objects count.
    pub tokens: Tokens,
}

/// Reads the usage out of an answer as it came: one JSON object, or server-sent events whose
/// `data:` lines are JSON. Each shape counts in its own objects (Anthropic's stream gives the
/// input in `message_start` and the output so far in each `message_delta`; OpenAI's gives one
/// `usage` at the end, Responses' in `response.completed`), so each count is the largest any
/// usage object in the answer holds. An answer without usage counts nothing.
pub fn measure(answer: &[u8], streamed: bool) -> Measured {
    let text = String::from_utf8_lossy(answer);
    let mut out = Measured::default();
    let mut take = |object: &serde_json::Map<String, serde_json::Value>| {
        for holder in [
            Some(object),
            nested(object, "message"),
            nested(object, "response"),
        ]
        .into_iter()
        .flatten()
        {
            if let Some(serde_json::Value::String(m)) = holder.get("model") {
                if !m.trim().is_empty() {
                    out.model = Some(m.trim().chars().take(200).collect());
                }
            }
            if let Ok(r) = crate::usage::report(holder) {
                out.tokens = largest(out.tokens, r.tokens);
            }
        }
    };
    if streamed {
        for line in text.lines() {
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(data.trim()) {
                take(&o);
            }
        }
    } else if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(text.trim()) {
        take(&o);
    }
    out
}

fn nested<'a>(
    o: &'a serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<&'a serde_json::Map<String, serde_json::Value>> {
    o.get(key).and_then(serde_json::Value::as_object)
}

fn largest(a: Tokens, b: Tokens) -> Tokens {
    Tokens {
        input: a.input.max(b.input),
        output: a.output.max(b.output),
        cache_read: a.cache_read.max(b.cache_read),
        cache_write: a.cache_write.max(b.cache_write),
        reasoning: a.reasoning.max(b.reasoning),
    }
}

#[cfg(test)]
mod tests {
    use super::{measure, Measured};
    use crate::usage::Tokens;

    fn tokens(input: u64, output: u64, cache_read: u64) -> Tokens {
        Tokens {
            input,
            output,
            cache_read,
            ..Tokens::default()
        }
    }

    #[test]
    fn an_anthropic_stream_counts_its_input_at_the_start_and_its_output_at_the_end() {
        let sse = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4\",\"usage\":{\"input_tokens\":20,\"cache_read_input_tokens\":1000,\"output_tokens\":1}}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n\
event: message_delta\n\
data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":15}}\n\n\
event: message_delta\n\
data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":42}}\n\n";
        assert_eq!(
            measure(sse.as_bytes(), true),
            Measured {
                model: Some("claude-sonnet-4".into()),
                tokens: tokens(1020, 42, 1000),
            }
        );
    }

    #[test]
    fn openai_answers_count_their_one_usage_object() {
        let chat = r#"{"id":"c","model":"gpt-5","choices":[],"usage":{"prompt_tokens":300,"completion_tokens":20,"prompt_tokens_details":{"cached_tokens":100}}}"#;
        assert_eq!(measure(chat.as_bytes(), false).tokens, tokens(300, 20, 100));
        let responses = "data: {\"type\":\"response.created\",\"response\":{\"model\":\"gpt-5\",\"usage\":null}}\n\n\
data: {\"type\":\"response.completed\",\"response\":{\"model\":\"gpt-5\",\"usage\":{\"input_tokens\":50,\"output_tokens\":7}}}\n\n";
        let m = measure(responses.as_bytes(), true);
        assert_eq!(
            (m.model.as_deref(), m.tokens),
            (Some("gpt-5"), tokens(50, 7, 0))
        );
    }

    #[test]
    fn an_answer_without_usage_counts_nothing() {
        assert_eq!(measure(b"not json", false), Measured::default());
        assert_eq!(measure(b"data: [DONE]\n\n", true), Measured::default());
        assert_eq!(
            measure(br#"{"error":{"type":"overloaded_error"}}"#, false),
            Measured::default()
        );
    }
}
