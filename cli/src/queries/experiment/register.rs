//! An experiment's register: the run (named `.experiment.NAME`, a name no run can take) that
//! records its definition, its reruns as they start and its budget's changes, appended with
//! the head expected, so two hosts cannot define one name twice.

use super::ExperimentError;
use runlog_core::experiment::{named_by_register, register_of, Experiment, ExperimentRerun};
use runlog_core::{Event, EventKind, Timestamp};
use runlog_replay::ReplayError;
use runlog_store::EventLog;

/// An experiment as its register has it.
#[derive(Debug, Clone)]
pub struct Register {
    /// Its definition (the budget as last set).
    pub experiment: Experiment,
    /// When it was defined.
    pub defined_at: Timestamp,
    /// Its reruns, in the order they started.
    pub reruns: Vec<ExperimentRerun>,
}

/// Appends `kinds` to experiment `name`'s register (creating it when `kinds` defines it).
pub fn append(
    log: &dyn EventLog,
    name: &str,
    at: Timestamp,
    kinds: Vec<EventKind>,
) -> Result<(), ExperimentError> {
    let run = register_of(name);
    let bodies = kinds
        .into_iter()
        .map(|kind| {
            runlog_core::codec::encode_event(&Event { at, kind }).map_err(|cause| {
                ReplayError::Encode {
                    run: run.clone(),
                    cause,
                }
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let head = log.head(&run)?.map_or(0, |h| h.seq);
    log.append(&run, Some(head), bodies)?;
    Ok(())
}

/// Experiment `name`, read from its register.
pub fn read(log: &dyn EventLog, name: &str) -> Result<Register, ExperimentError> {
    let run = register_of(name);
    let unknown = || ExperimentError::Unknown {
        name: name.to_owned(),
    };
    let head = log.head(&run)?.ok_or_else(unknown)?.seq;
    let mut found: Option<Register> = None;
    runlog_replay::events::for_each(log, &run, 1, head, &mut |_, e| {
        match (e.kind, found.as_mut()) {
            (EventKind::ExperimentDefined(x), None) => {
                found = Some(Register {
                    experiment: *x,
                    defined_at: e.at,
                    reruns: Vec::new(),
                });
            }
            (EventKind::ExperimentRerun(r), Some(reg)) => reg.reruns.push(*r),
            (EventKind::ExperimentBudgetSet { max_cost_usd }, Some(reg)) => {
                reg.experiment.max_cost_usd = max_cost_usd;
            }
            _ => {}
        }
        Ok(true)
    })?;
    found.ok_or_else(unknown)
}

/// Every experiment's name, sorted.
pub fn names(log: &dyn EventLog) -> Result<Vec<String>, ExperimentError> {
    Ok(log
        .runs()?
        .into_iter()
        .filter_map(|m| named_by_register(&m.run).map(str::to_owned))
        .collect())
}
