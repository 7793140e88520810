//! A rerun recorded on its fork, and the calls of it that diverge from the recording.

use super::{find, require_started};
use crate::event::EventKind;
use crate::experiment::ExperimentRerun;
use crate::rejection::Rejection;
use crate::relocate::AnswerMapped;
use crate::rerun::{Divergence, Rerun};
use crate::state::RunState;

pub(super) fn start_rerun(state: &RunState, rerun: Rerun) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    let invalid = |reason: String| Rejection::InvalidRerun { reason };
    for t in &rerun.tasks {
        find(state, &t.task)?;
    }
    for spec in &rerun.specs {
        let task = find(state, &spec.id)?;
        // What waits on what stays as recorded: the rerun is of the same plan.
        if task.spec.after != spec.after || task.spec.parent != spec.parent {
            return Err(invalid(format!(
                "task {} would change what it waits for",
                spec.id
            )));
        }
    }
    Ok(vec![EventKind::RerunStarted(Box::new(rerun))])
}

pub(super) fn record_divergence(
    state: &RunState,
    divergence: Divergence,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    find(state, &divergence.task)?;
    Ok(vec![EventKind::CallDiverged(Box::new(divergence))])
}

pub(super) fn record_answer_mapped(
    state: &RunState,
    mapped: AnswerMapped,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    find(state, &mapped.task)?;
    Ok(vec![EventKind::AnswerMapped(Box::new(mapped))])
}

pub(super) fn join_experiment(
    state: &RunState,
    lineage: ExperimentRerun,
) -> Result<Vec<EventKind>, Rejection> {
    require_started(state)?;
    // Only a rerun not yet driven: its lineage is read third, right after `rerun-started`.
    if state.seq != 2 {
        return Err(Rejection::InvalidRerun {
            reason: format!(
                "{} joins an experiment right after its rerun starts, not at seq {}",
                lineage.rerun, state.seq
            ),
        });
    }
    Ok(vec![EventKind::ExperimentRerun(Box::new(lineage))])
}
