//! Run settings and retry strategies: the knobs the rules read, recorded in `RunStarted`.

use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// Settings in force for a run. Recorded in `RunStarted`, so an audit reads the values that
/// decided, not today's config.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Settings {
    /// A score at or above this passes the eval gate.
    pub eval_threshold: f64,
    /// Below-threshold scores rescue the task (same agent, same worktree) instead of failing it.
    pub auto_rescue: bool,
    /// Rescues allowed per task before a failing score fails it.
    pub max_eval_rescues: u32,
    /// Test failures retried per task before it fails.
    pub max_test_retries: u32,
    /// Deepest allowed nesting of tasks under parents (a top-level task has depth 1).
    pub max_depth: u32,
    /// How many tasks may run at once.
    pub jobs: u32,
    /// Past this many events the run's history is reported as growing large.
    pub history_warn_events: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            eval_threshold: 0.7,
            auto_rescue: true,
            max_eval_rescues: 3,
            max_test_retries: 3,
            max_depth: 3,
            jobs: 4,
            history_warn_events: 100_000,
        }
    }
}

/// How many times a failing stage is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum RetryLimit {
    /// At most this many retries after the first attempt.
    Max(u32),
    /// Never give up; bounded by the budget and the circuit breaker instead.
    Unlimited,
}

/// What bounds an unlimited retry strategy.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Budget {
    /// Total attempts of the task, first one included.
    pub max_attempts: Option<u32>,
    /// Milliseconds from the task's first start.
    pub max_elapsed_ms: Option<u64>,
}

impl Budget {
    /// True when neither bound is set.
    pub fn is_unbounded(&self) -> bool {
        self.max_attempts.is_none() && self.max_elapsed_ms.is_none()
    }
}

/// The supervisor's recovery strategy, per task (or per stage with `StrategySet`).
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct RetryStrategy {
    /// How many retries.
    pub limit: RetryLimit,
    /// Bounds for `Unlimited` (also applied to `Max` when set).
    pub budget: Budget,
    /// Delay before the first retry.
    pub delay_ms: u64,
    /// Each further retry waits this many times longer.
    pub backoff: f64,
    /// Per-attempt timeout; the runner kills the attempt's process group when it passes.
    pub timeout_ms: Option<u64>,
    /// Consecutive failures of a stage that open its circuit; 0 never opens it.
    pub circuit_after: u32,
}

impl Default for RetryStrategy {
    fn default() -> Self {
        Self {
            limit: RetryLimit::Max(3),
            budget: Budget::default(),
            delay_ms: 1_000,
            backoff: 2.0,
            timeout_ms: None,
            circuit_after: 5,
        }
    }
}

/// Longest delay a backoff may reach (one day), so a large multiplier cannot overflow time.
pub const MAX_RETRY_DELAY_MS: u64 = 86_400_000;

impl RetryStrategy {
    /// The delay before retry number `retry` (1-based): `delay_ms × backoff^(retry-1)`, capped.
    pub fn delay_before(&self, retry: u32) -> u64 {
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        let factor = if self.backoff.is_finite() && self.backoff > 0.0 {
            self.backoff.powi(exponent)
        } else {
            1.0
        };
        let delay = self.delay_ms as f64 * factor;
        if delay.is_finite() {
            // `as` saturates for floats, and the cap keeps the figure meaningful.
            (delay as u64).min(MAX_RETRY_DELAY_MS)
        } else {
            MAX_RETRY_DELAY_MS
        }
    }
}

/// A hard bound on walks up and down the hierarchy, so that even a hand-made log with a parent
/// cycle cannot make a fold loop. `max_depth` (a setting, checked by `decide`) is far below it.
pub const MAX_NESTING: u32 = 64;
