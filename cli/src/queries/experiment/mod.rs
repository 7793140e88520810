//! Experiments (`runlog experiment`, `GET /v1/experiments`): a suite of recorded runs executed
//! again under variants, and how each variant compares with the recording. `define` checks and
//! records one; `plan` lists its reruns; `start_rerun` forks one; `report` makes its figures.

pub mod gate;
pub mod register;
pub mod report;
pub mod suite;
pub mod variant;

use runlog_core::experiment::{
    register_of, rerun_id, Experiment, ExperimentRerun, Skipped, Variant, BASE,
};
use runlog_core::rerun::Answers;
use runlog_core::{EventKind, RunId, Timestamp};
use runlog_replay::{Replay, ReplayError};
use runlog_store::EventLog;
use std::collections::BTreeSet;
use variant::Overlay;

/// Why an experiment cannot be defined, executed or read; nothing is recorded.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// Reading the store failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] runlog_store::StoreError),
    /// The name is not one an experiment can have.
    #[error("{name:?} cannot name an experiment: {why}")]
    Name {
        /// The name.
        name: String,
        /// Why.
        why: String,
    },
    /// No experiment has this name.
    #[error("no experiment {name}")]
    Unknown {
        /// The name.
        name: String,
    },
    /// The suite cannot be chosen.
    #[error("the suite: {why}")]
    Suite {
        /// Why.
        why: String,
    },
    /// A variant file is not one.
    #[error("variant file {file}: {why}")]
    Variant {
        /// The file.
        file: String,
        /// Why.
        why: String,
    },
    /// A rerun cannot be started.
    #[error("rerun {rerun}: {why}")]
    Rerun {
        /// The rerun.
        rerun: String,
        /// Why.
        why: String,
    },
}

/// An experiment as asked.
#[derive(Debug, Clone)]
pub struct Asked {
    /// Its name.
    pub name: String,
    /// The suite.
    pub suite: suite::Choice,
    /// Each variant: its name and its file.
    pub variants: Vec<(String, std::path::PathBuf)>,
    /// Repeats (at least 1).
    pub repeat: u32,
    /// Where answers come from.
    pub answers: Answers,
    /// The budget for live calls.
    pub max_cost_usd: Option<f64>,
}

/// Checks `asked` against the store and records the experiment's definition.
pub fn define(
    log: &dyn EventLog,
    asked: &Asked,
    now: Timestamp,
) -> Result<Experiment, ExperimentError> {
    let name = asked.name.as_str();
    let refused = |why: String| ExperimentError::Name {
        name: name.to_owned(),
        why,
    };
    if let Some(why) = runlog_core::not_a_name(name) {
        return Err(refused(why.to_owned()));
    }
    if log.head(&register_of(name))?.is_some() {
        return Err(refused(
            "an experiment has it already (`runlog experiments` lists them)".into(),
        ));
    }
    if asked.variants.is_empty() {
        return Err(refused("give at least one --variant NAME=FILE".into()));
    }
    let suite = suite::choose(log, &asked.suite)?;
    let replay = Replay::new(log);
    let states = suite
        .iter()
        .map(|s| replay.state_at_or_head(s.run.as_str(), Some(s.head_seq)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut variants = Vec::new();
    let mut skipped = Vec::new();
    let mut names = BTreeSet::new();
    for (vname, path) in &asked.variants {
        let file = path.display().to_string();
        let bad = |why: String| ExperimentError::Variant {
            file: file.clone(),
            why,
        };
        if let Some(why) = runlog_core::not_a_name(vname) {
            return Err(bad(format!("{vname:?} cannot name a variant: {why}")));
        }
        if vname == BASE || !names.insert(vname.clone()) {
            return Err(bad(format!(
                "the variant name {vname} is taken (`base` is the recording)"
            )));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
        let overlay = Overlay::parse(&file, &text)?;
        let keys: Vec<String> = overlay.models.iter().map(|(k, _)| k.clone()).collect();
        if let Some(unknown) = models_not_asked(log, &suite, &keys)?.first() {
            return Err(bad(format!(
                "its [gateway.models] maps {unknown}, which no call of the suite asked"
            )));
        }
        let mut fits_one = overlay.tasks().next().is_none();
        for (s, state) in suite.iter().zip(&states) {
            match overlay.apply(state) {
                Ok(_) => fits_one = true,
                Err(reason) => skipped.push(Skipped {
                    run: s.run.clone(),
                    variant: vname.clone(),
                    reason,
                }),
            }
        }
        if !fits_one {
            return Err(bad(format!(
                "it names tasks ({}) that no run of the suite has",
                overlay.tasks().collect::<Vec<_>>().join(", ")
            )));
        }
        variants.push(Variant {
            name: vname.clone(),
            file,
            text,
            models: overlay.models.clone(),
        });
    }
    let experiment = Experiment {
        name: name.to_owned(),
        suite,
        variants,
        repeat: asked.repeat.max(1),
        answers: asked.answers,
        max_cost_usd: asked.max_cost_usd,
        skipped,
        seed: seed_of(name),
    };
    register::append(
        log,
        name,
        now,
        vec![EventKind::ExperimentDefined(Box::new(experiment.clone()))],
    )?;
    Ok(experiment)
}

/// The bootstrap's seed, from the name: the same report for the same experiment, always.
fn seed_of(name: &str) -> u64 {
    let h = runlog_core::Hash::of(name.as_bytes()).0;
    u64::from_le_bytes([h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]])
}

/// Of `wanted`, the models no call of the suite asked or was answered by. A call's record
/// names the model that answered (`claude-sonnet-4-5-20250929` for `claude-sonnet-4-5`), so
/// the requests are read for the model asked, until every one wanted is found.
fn models_not_asked(
    log: &dyn EventLog,
    suite: &[runlog_core::experiment::SuiteRun],
    wanted: &[String],
) -> Result<Vec<String>, ReplayError> {
    let mut missing: BTreeSet<String> = wanted.iter().cloned().collect();
    for s in suite {
        runlog_replay::events::for_each(log, s.run.as_str(), 1, s.head_seq, &mut |_, e| {
            if let EventKind::ModelCalled(call) = e.kind {
                if let Some(m) = &call.model {
                    missing.remove(m);
                }
                let asked = call
                    .request
                    .and_then(|b| log.get_blob(&b.blob.0).ok().flatten())
                    .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok());
                if let Some(m) = asked.as_ref().and_then(|r| r["model"].as_str()) {
                    missing.remove(m);
                }
            }
            Ok(!missing.is_empty())
        })?;
    }
    Ok(missing.into_iter().collect())
}

/// One rerun of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// The suite run's place in the suite.
    pub index: usize,
    /// The suite run.
    pub run: RunId,
    /// The variant (`base`: the recording again, live).
    pub variant: String,
    /// The repeat, from 1.
    pub repeat: u32,
    /// The rerun's id.
    pub rerun: String,
}

/// Every rerun of `x`, in the order they are executed: repeat by repeat, run by run, variant by
/// variant (`base` too when it repeats), skipped pairs left out.
pub fn plan(x: &Experiment) -> Vec<Planned> {
    let mut variants: Vec<&str> = Vec::new();
    if x.repeat > 1 {
        variants.push(BASE);
    }
    variants.extend(x.variants.iter().map(|v| v.name.as_str()));
    let mut out = Vec::new();
    for repeat in 1..=x.repeat {
        for (index, s) in x.suite.iter().enumerate() {
            for v in &variants {
                if x.skipped.iter().any(|k| k.run == s.run && k.variant == *v) {
                    continue;
                }
                out.push(Planned {
                    index,
                    run: s.run.clone(),
                    variant: (*v).to_owned(),
                    repeat,
                    rerun: rerun_id(&x.name, v, s.run.as_str(), index, repeat),
                });
            }
        }
    }
    out
}

/// Forks `p` as a rerun of its run under its variant, its lineage recorded on it and in the
/// register.
pub fn start_rerun(
    log: &dyn EventLog,
    x: &Experiment,
    p: &Planned,
    now: Timestamp,
) -> Result<(), ExperimentError> {
    let suite = x.suite.get(p.index).ok_or_else(|| ExperimentError::Rerun {
        rerun: p.rerun.clone(),
        why: "its run is not in the suite".into(),
    })?;
    let (specs, models, answers) = match x.variants.iter().find(|v| v.name == p.variant) {
        Some(v) => {
            let state = Replay::new(log).state_at_or_head(p.run.as_str(), Some(suite.head_seq))?;
            let overlay = Overlay::parse(&v.file, &v.text)?;
            let specs = overlay
                .apply(&state)
                .map_err(|why| ExperimentError::Rerun {
                    rerun: p.rerun.clone(),
                    why,
                })?;
            (Some((v.file.clone(), specs)), v.models.clone(), x.answers)
        }
        // The base again: as recorded, every call live.
        None => (None, Vec::new(), Answers::Live),
    };
    let lineage = ExperimentRerun {
        experiment: x.name.clone(),
        run: p.run.clone(),
        variant: p.variant.clone(),
        repeat: p.repeat,
        rerun: RunId::from(p.rerun.as_str()),
        models,
    };
    let asked = crate::queries::rerun::Asked {
        run: p.run.to_string(),
        at: None,
        tasks: suite.tasks.iter().map(ToString::to_string).collect(),
        answers,
        workflow: None,
        new: Some(p.rerun.clone()),
        specs,
        lineage: Some(lineage.clone()),
    };
    crate::queries::rerun::start(log, asked, now).map_err(|e| ExperimentError::Rerun {
        rerun: p.rerun.clone(),
        why: e.to_string(),
    })?;
    register::append(
        log,
        &x.name,
        now,
        vec![EventKind::ExperimentRerun(Box::new(lineage))],
    )?;
    Ok(())
}
