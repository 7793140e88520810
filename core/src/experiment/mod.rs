//! Experiments: recorded runs (the suite) executed again under variants, and the comparison of
//! each variant with the recording (`base`). An experiment is kept in a register of its own
//! ([`register_of`]), a run no run can be named (it starts with '.'): its definition first, then
//! each rerun as it is started; each rerun also carries [`ExperimentRerun`] right after its
//! `rerun-started`, as its lineage. The figures are in [`report`], the statistics in [`stats`].

pub mod report;
pub mod stats;

use crate::ids::{RunId, TaskId};
use crate::rerun::Answers;
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// The variant the recorded runs themselves are (and, with repeats, their live reruns).
pub const BASE: &str = "base";

/// The prefix of an experiment's register.
pub const REGISTER_PREFIX: &str = ".experiment.";

/// The run that records experiment `name`.
pub fn register_of(name: &str) -> String {
    format!("{REGISTER_PREFIX}{name}")
}

/// The experiment a register records, if `run` is one.
pub fn named_by_register(run: &str) -> Option<&str> {
    run.strip_prefix(REGISTER_PREFIX)
}

/// An experiment as defined (the `experiment-defined` event's record, first in its register).
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Experiment {
    /// Its name.
    pub name: String,
    /// The recorded runs it executes again, each pinned at its head then.
    pub suite: Vec<SuiteRun>,
    /// The variants, in the order given (`base` is not among them).
    pub variants: Vec<Variant>,
    /// How many times each variant runs each suite run; above 1, `base` also runs live.
    pub repeat: u32,
    /// Where the reruns' calls are answered from.
    pub answers: Answers,
    /// The most its live calls may cost, in USD (raised by `experiment resume`).
    pub max_cost_usd: Option<f64>,
    /// Suite runs a variant cannot be applied to, with why: counted in the report.
    pub skipped: Vec<Skipped>,
    /// The bootstrap's seed: the report's intervals are the same every time it is made.
    pub seed: u64,
}

/// A recorded run of the suite.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct SuiteRun {
    /// The run.
    pub run: RunId,
    /// Its head when the experiment was defined: what `base` is.
    pub head_seq: u64,
    /// Its chain hash at that seq, hex.
    pub head_hash: String,
    /// The tasks executed again (empty: all of them).
    pub tasks: Vec<TaskId>,
}

/// A variant: an overlay on each recorded run's workflow.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Variant {
    /// Its name.
    pub name: String,
    /// The file it was read from, as given.
    pub file: String,
    /// The file's text, kept whole: each rerun applies it to its run's tasks.
    pub text: String,
    /// Its model map: a call asking the first model is answered by the second.
    pub models: Vec<(String, String)>,
}

/// A suite run a variant is not applied to.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Skipped {
    /// The run.
    pub run: RunId,
    /// The variant.
    pub variant: String,
    /// Why, in words.
    pub reason: String,
}

/// One rerun of an experiment (the `experiment-rerun` event's record): in the register when it
/// is started, and in the rerun itself, third, as its lineage.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct ExperimentRerun {
    /// The experiment.
    pub experiment: String,
    /// The suite run executed again.
    pub run: RunId,
    /// The variant.
    pub variant: String,
    /// Which repeat, from 1.
    pub repeat: u32,
    /// The rerun.
    pub rerun: RunId,
    /// The model map its gateway applies.
    pub models: Vec<(String, String)>,
}

impl ExperimentRerun {
    /// `fix-parser-r1 (variant haiku, repeat 1)`.
    pub fn describe(&self) -> String {
        format!(
            "rerun {} of {} in experiment {} (variant {}, repeat {})",
            self.rerun, self.run, self.experiment, self.variant, self.repeat
        )
    }
}

/// The id of a rerun: `NAME.VARIANT.RUN.K`, or with the run's place in the suite when that is
/// too long to be a name.
pub fn rerun_id(experiment: &str, variant: &str, run: &str, index: usize, repeat: u32) -> String {
    let id = format!("{experiment}.{variant}.{run}.{repeat}");
    match crate::not_a_name(&id) {
        None => id,
        Some(_) => format!("{experiment}.{variant}.{index}.{repeat}"),
    }
}
