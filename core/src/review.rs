//! The review queue: which of an evaluator's verdicts wait for a person before the gate's
//! decision takes effect, so that people's labels exist to measure the evaluator against
//! (`[settings] review`, `review_sample`; `runlog review`, `runlog judges`).

use crate::ids::{Hash, TaskId};
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// Which verdicts a person reviews whatever the score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum ReviewMode {
    /// None (the gate decides alone), apart from the sampled share.
    #[default]
    None,
    /// Every verdict the gate would not pass (a rescue or a fail).
    Failing,
    /// Every verdict.
    All,
}

/// The run's review policy, recorded as it starts (`review-set`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct ReviewPolicy {
    /// The verdicts always reviewed.
    pub mode: ReviewMode,
    /// The share of the other verdicts reviewed as well, in [0, 1], chosen by a hash of the
    /// run, the task and the attempt: the same verdicts whenever the run is replayed.
    pub sample: f64,
}

impl ReviewPolicy {
    /// No verdict is ever held.
    pub fn is_none(&self) -> bool {
        self.mode == ReviewMode::None && self.sample <= 0.0
    }

    /// Why the policy cannot be recorded, if it cannot.
    pub fn invalid(&self) -> Option<String> {
        (!(self.sample.is_finite() && (0.0..=1.0).contains(&self.sample)))
            .then(|| format!("review_sample is {}, outside [0, 1]", self.sample))
    }

    /// Whether a verdict waits for a person, the gate having passed it (`passed`) or not.
    pub fn holds(
        &self,
        run: &str,
        task: &TaskId,
        attempt: u32,
        rescues: u32,
        passed: bool,
    ) -> bool {
        match self.mode {
            ReviewMode::All => true,
            ReviewMode::Failing if !passed => true,
            _ => self.sample > 0.0 && draw(run, task, attempt, rescues) < self.sample,
        }
    }
}

/// Who an evaluator said it was beside its score.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Judge {
    /// The model it asked (`"model"`), or empty.
    #[serde(default)]
    pub model: String,
    /// Its own version (`"version"`: a prompt's, a rubric's), or empty.
    #[serde(default)]
    pub version: String,
}

impl Judge {
    /// It said neither.
    pub fn is_empty(&self) -> bool {
        self.model.is_empty() && self.version.is_empty()
    }
}

/// A number in [0, 1) fixed by the verdict's place: the seeded sample.
fn draw(run: &str, task: &TaskId, attempt: u32, rescues: u32) -> f64 {
    let key = format!("review\0{run}\0{task}\0{attempt}\0{rescues}");
    let h = Hash::of(key.as_bytes()).0;
    let mut first = [0u8; 8];
    first.copy_from_slice(&h[..8]);
    (u64::from_le_bytes(first) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_hold_what_they_name() {
        let t = TaskId::from("t");
        let all = ReviewPolicy {
            mode: ReviewMode::All,
            sample: 0.0,
        };
        let failing = ReviewPolicy {
            mode: ReviewMode::Failing,
            sample: 0.0,
        };
        assert!(all.holds("r", &t, 1, 0, true));
        assert!(failing.holds("r", &t, 1, 0, false));
        assert!(!failing.holds("r", &t, 1, 0, true));
        assert!(!ReviewPolicy::default().holds("r", &t, 1, 0, false));
    }

    #[test]
    fn the_sample_takes_about_its_share_and_the_same_verdicts_each_time() {
        let p = ReviewPolicy {
            mode: ReviewMode::None,
            sample: 0.1,
        };
        let sampled = || -> Vec<u32> {
            (0..10_000)
                .filter(|i| p.holds("run", &TaskId::from(format!("t{i}")), 1, 0, true))
                .collect()
        };
        let held = sampled();
        assert!((800..1200).contains(&held.len()), "{}", held.len());
        let again = sampled();
        assert_eq!(held, again);
    }

    #[test]
    fn a_sample_outside_the_unit_is_refused() {
        let bad = ReviewPolicy {
            mode: ReviewMode::None,
            sample: 1.5,
        };
        assert!(bad.invalid().is_some());
        assert!(ReviewPolicy::default().invalid().is_none());
    }
}
