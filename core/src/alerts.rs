//! Alerts: what in a run a person should hear of at once, and the record of each delivery
//! (`alert-sent`). Which event raises which is [`crate::projections::alerts`]'s; sending them
//! is the runner's (`[[alerts]]`).

use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// What an alert is about (`on` in `[[alerts]]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum AlertOn {
    /// The run finished failed.
    RunFailed,
    /// A task waits for a person: a verdict held for review, a merge conflict with no rescue.
    Waiting,
    /// A budget crossed 50, 80 or 100 % of itself.
    Budget,
    /// A rerun's (or an experiment's) call asked something its recording did not.
    Diverged,
    /// Sent by `runlog alerts test`.
    Test,
}

impl AlertOn {
    /// What `[[alerts]] on` may name.
    pub const ALL: [AlertOn; 4] = [
        AlertOn::RunFailed,
        AlertOn::Waiting,
        AlertOn::Budget,
        AlertOn::Diverged,
    ];

    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            AlertOn::RunFailed => "run-failed",
            AlertOn::Waiting => "waiting",
            AlertOn::Budget => "budget",
            AlertOn::Diverged => "diverged",
            AlertOn::Test => "test",
        }
    }
}

/// A delivery of an alert (the `alert-sent` event): where, how many tries, how it ended.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct AlertSent {
    /// What about.
    pub on: AlertOn,
    /// The seq of the event that raised it (0 for a test).
    pub seq: u64,
    /// Where it went: the receiver's scheme and host (its path may be a secret, as Slack's is).
    pub to: String,
    /// Tries made.
    pub attempts: u32,
    /// The last answer's status, when there was one.
    pub status: Option<u16>,
    /// Why it was not delivered, when it was not (the last try's error); none once delivered.
    pub error: Option<String>,
}

impl AlertSent {
    /// In words: `alert run-failed delivered to https://hooks.slack.com (200, 1 try)`.
    pub fn describe(&self) -> String {
        let tries = format!(
            "{} tr{}",
            self.attempts,
            if self.attempts == 1 { "y" } else { "ies" }
        );
        match (&self.error, self.status) {
            (None, status) => format!(
                "alert {} delivered to {} ({}, {tries})",
                self.on.name(),
                self.to,
                status.map_or_else(|| "no status".to_owned(), |s| s.to_string())
            ),
            (Some(error), _) => format!(
                "alert {} to {} not delivered after {tries}: {error}",
                self.on.name(),
                self.to
            ),
        }
    }
}
