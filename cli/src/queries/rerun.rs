//! Rerunning a recorded run (`runlog rerun`, `POST /v1/runs/{run}/rerun`): where the rerun
//! starts, which tasks run again, the specs a workflow file changes, then the fork and the
//! rerun's record. Driving it is `resume`'s.

use runlog_core::rerun::{Answers, Rerun, RerunTask};
use runlog_core::{Command, CommandKind, EventKind, RunId, RunState, TaskId, TaskSpec, Timestamp};
use runlog_replay::{Replay, ReplayError, Session};
use runlog_store::EventLog;

/// Why a rerun is refused; nothing is recorded.
#[derive(Debug, thiserror::Error)]
pub enum RerunError {
    /// Reading the run, or recording the rerun, failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The workflow file given cannot be read or is not valid.
    #[error(transparent)]
    Workflow(#[from] Box<runlog_runner::WorkflowError>),
    /// The run has no model call to answer from.
    #[error("run {run} has no recorded model calls to answer from: its commands did not reach their models through runlog's gateway")]
    NoCalls {
        /// The run.
        run: String,
    },
    /// `--task` names a task the run does not have.
    #[error("run {run} has no task {task}")]
    UnknownTask {
        /// The run.
        run: String,
        /// The task.
        task: String,
    },
    /// The workflow file's tasks are not the run's.
    #[error("{path} does not plan the tasks of run {run}: {differences}")]
    OtherTasks {
        /// The file.
        path: String,
        /// The run.
        run: String,
        /// Which tasks differ, in words.
        differences: String,
    },
    /// The workflow file would change what a task waits for.
    #[error("{path} changes what task {task} waits for; a rerun keeps the run's order of work")]
    OtherOrder {
        /// The file.
        path: String,
        /// The task.
        task: String,
    },
}

/// What to rerun, as asked.
#[derive(Debug, Clone)]
pub struct Asked {
    /// The run.
    pub run: String,
    /// The seq it re-executes from (default: before its first attempt).
    pub at: Option<u64>,
    /// The tasks run again (default: all); the others are carried over as done.
    pub tasks: Vec<String>,
    /// Where answers come from.
    pub answers: Answers,
    /// A workflow file whose tasks are given instead of the run's (a what-if).
    pub workflow: Option<std::path::PathBuf>,
    /// The new run's id (default: RUN-rerun-N).
    pub new: Option<String>,
    /// Specs given instead of a workflow file's, with what they come from (an experiment's
    /// variant applied to the run's tasks).
    pub specs: Option<(String, Vec<TaskSpec>)>,
    /// The experiment this rerun is one of: recorded right after it starts.
    pub lineage: Option<runlog_core::experiment::ExperimentRerun>,
}

/// A rerun recorded: the new run and where it starts.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Started {
    /// The new run.
    pub run: String,
    /// The run rerun.
    pub from_run: String,
    /// Its seq the rerun starts from.
    pub at_seq: u64,
    /// The seq of the run it was forked at (the head, when tasks are carried over).
    pub forked_at: u64,
    /// Where answers come from.
    pub answers: &'static str,
    /// The tasks it runs again (all, when none is named).
    pub tasks: Vec<String>,
    /// The tasks whose spec the workflow file changed.
    pub specs_changed: Vec<String>,
}

/// What a pass over the recorded run found.
struct Recording {
    head: u64,
    /// The last seq before the first attempt started.
    start: u64,
    /// Answered calls kept with their bodies.
    calls: usize,
}

fn read(log: &dyn EventLog, run: &str) -> Result<Recording, ReplayError> {
    let head = Replay::new(log).head_seq(run)?;
    let mut found = Recording {
        head,
        start: head,
        calls: 0,
    };
    let mut started = false;
    runlog_replay::events::for_each(log, run, 1, head, &mut |seq, e| {
        match e.kind {
            EventKind::TaskStarted { .. } if !started => {
                started = true;
                found.start = seq.saturating_sub(1).max(1);
            }
            EventKind::ModelCalled(call) if call.response.is_some() => found.calls += 1,
            _ => {}
        }
        Ok(true)
    })?;
    Ok(found)
}

/// Forks `asked.run` and records the rerun on the fork, ready to be driven (`resume`).
pub fn start(log: &dyn EventLog, asked: Asked, now: Timestamp) -> Result<Started, RerunError> {
    let run = asked.run.as_str();
    let recording = read(log, run)?;
    if asked.answers != Answers::Live && recording.calls == 0 {
        return Err(RerunError::NoCalls { run: run.into() });
    }
    let replay = Replay::new(log);
    let at = asked.at.unwrap_or(recording.start);
    let at_state = replay.state_at_or_head(run, Some(at))?;
    for task in &asked.tasks {
        if at_state.task(&TaskId::from(task.as_str())).is_none() {
            return Err(RerunError::UnknownTask {
                run: run.into(),
                task: task.clone(),
            });
        }
    }
    let specs = match (&asked.workflow, &asked.specs) {
        (Some(path), _) => {
            let wf = runlog_runner::Workflow::load(path).map_err(Box::new)?;
            changed_specs(&path.display().to_string(), run, &at_state, &wf.tasks)?
        }
        (None, Some((from, specs))) => changed_specs(from, run, &at_state, specs)?,
        (None, None) => Vec::new(),
    };
    // Carried over as done: the others, at the head; run again: the named ones, from `at`.
    let carried = !asked.tasks.is_empty();
    let forked_at = if carried { recording.head } else { at };
    let fork_state = if carried {
        replay.state_at_or_head(run, Some(forked_at))?
    } else {
        at_state.clone()
    };
    let again: Vec<TaskId> = if carried {
        asked
            .tasks
            .iter()
            .map(|t| TaskId::from(t.as_str()))
            .collect()
    } else {
        // An attempt running at `at` starts again from where it began.
        at_state.running_tasks()
    };
    let tasks = again
        .iter()
        .map(|id| again_from(&at_state, &fork_state, id))
        .collect();
    let new = match asked.new {
        Some(n) => n,
        None => runlog_runner::free_run_id(
            log,
            &runlog_runner::paths::name_from(&format!("{run}-rerun")),
        )
        .map_err(ReplayError::Store)?,
    };
    let rerun = Rerun {
        from_run: RunId::from(run),
        from_seq: at,
        answers: asked.answers,
        tasks,
        specs: specs.clone(),
    };
    replay.fork(run, forked_at, &new, now)?;
    let mut session = Session::existing(log, &new)?;
    session
        .execute(Command::new(
            now,
            CommandKind::StartRerun {
                rerun: Box::new(rerun),
            },
        ))?
        .map_err(ReplayError::Rejected)?;
    if let Some(lineage) = asked.lineage {
        session
            .execute(Command::new(
                now,
                CommandKind::JoinExperiment {
                    lineage: Box::new(lineage),
                },
            ))?
            .map_err(ReplayError::Rejected)?;
    }
    let tasks = match carried {
        true => asked.tasks,
        false => at_state
            .tasks_in_order()
            .map(|t| t.spec.id.to_string())
            .collect(),
    };
    Ok(Started {
        run: new,
        from_run: run.into(),
        at_seq: at,
        forked_at,
        answers: asked.answers.name(),
        tasks,
        specs_changed: specs.iter().map(|s| s.id.to_string()).collect(),
    })
}

/// Task `id` back where it stood at `at`: its code then (in a git workspace, its last commit,
/// else the integration branch's tip), and how far the fork's attempts are ahead of that.
fn again_from(at: &RunState, fork: &RunState, id: &TaskId) -> RerunTask {
    let then = at.task(id);
    let commit = then
        .and_then(|t| t.code.commit.clone())
        .or_else(|| at.workspace.as_ref().map(|w| w.tip.clone()));
    let attempts_then = then.map_or(0, |t| t.attempt);
    // An attempt running then is run again from its start: it counts as one behind.
    let running_then = u32::from(then.is_some_and(|t| t.running));
    let attempts_now = fork.task(id).map_or(0, |t| t.attempt);
    RerunTask {
        task: id.clone(),
        commit,
        attempts_ahead: attempts_now
            .saturating_sub(attempts_then)
            .saturating_add(running_then),
    }
}

/// The specs of `path` that differ from the run's, once its tasks are checked to be the
/// run's, each waiting for what it waited for.
fn changed_specs(
    path: &str,
    run: &str,
    state: &RunState,
    specs: &[TaskSpec],
) -> Result<Vec<TaskSpec>, RerunError> {
    let ours: Vec<&str> = state.tasks_in_order().map(|t| t.spec.id.as_str()).collect();
    let theirs: Vec<&str> = specs.iter().map(|s| s.id.as_str()).collect();
    let missing: Vec<&str> = ours
        .iter()
        .filter(|t| !theirs.contains(t))
        .copied()
        .collect();
    let extra: Vec<&str> = theirs
        .iter()
        .filter(|t| !ours.contains(t))
        .copied()
        .collect();
    if !missing.is_empty() || !extra.is_empty() {
        let mut differences = Vec::new();
        if !missing.is_empty() {
            differences.push(format!("it has no {}", missing.join(", ")));
        }
        if !extra.is_empty() {
            differences.push(format!("the run has no {}", extra.join(", ")));
        }
        return Err(RerunError::OtherTasks {
            path: path.into(),
            run: run.into(),
            differences: differences.join("; "),
        });
    }
    let mut changed = Vec::new();
    for spec in specs {
        let Some(t) = state.task(&spec.id) else {
            continue;
        };
        if t.spec.after != spec.after || t.spec.parent != spec.parent {
            return Err(RerunError::OtherOrder {
                path: path.into(),
                task: spec.id.to_string(),
            });
        }
        let mut spec = spec.clone();
        // A test found by convention is in the run's spec; the file's may leave it implied.
        if spec.test.is_none() {
            spec.test.clone_from(&t.spec.test);
        }
        if spec != t.spec {
            changed.push(spec);
        }
    }
    Ok(changed)
}

/// How a rerun's calls were answered, from its own events.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Answered {
    /// Calls answered from the recording ($0.00).
    pub recorded: usize,
    /// Calls that went to a provider.
    pub live: usize,
    /// What the live calls cost, where priced.
    pub live_cost_usd: f64,
    /// Calls refused as they diverged.
    pub refused: usize,
    /// Each attempt's first divergence, in words.
    pub divergences: Vec<String>,
}

impl Answered {
    /// `12 calls from the recording ($0.00), 3 live ($0.0123), 1 refused`.
    pub fn describe(&self) -> String {
        let mut words = format!(
            "{} calls from the recording ($0.00), {} live ({})",
            self.recorded,
            self.live,
            runlog_core::usage::usd(self.live_cost_usd)
        );
        if self.refused > 0 {
            words.push_str(&format!(", {} refused as they diverged", self.refused));
        }
        words
    }
}

/// How `run`'s calls were answered (its own events only: a fork's inherited ones are the
/// recording's).
pub fn answered(log: &dyn EventLog, run: &str) -> Result<Answered, ReplayError> {
    use runlog_core::model_call::CallEnd;
    let head = Replay::new(log).head_seq(run)?;
    let mut out = Answered::default();
    let mut seen = std::collections::HashSet::new();
    runlog_replay::events::for_each(log, run, 1, head, &mut |_, e| {
        match e.kind {
            EventKind::ModelCalled(call) => match call.end {
                CallEnd::Replayed { .. } => out.recorded += 1,
                CallEnd::Diverged => out.refused += 1,
                _ => {
                    out.live += 1;
                    out.live_cost_usd += call.cost_usd.unwrap_or(0.0);
                }
            },
            EventKind::CallDiverged(d) if seen.insert((d.task.clone(), d.attempt)) => {
                out.divergences.push(d.describe());
            }
            _ => {}
        }
        Ok(true)
    })?;
    Ok(out)
}

/// When one of two runs is a rerun of the other: the rerun and how its calls were answered.
pub fn between(
    log: &dyn EventLog,
    left: &str,
    right: &str,
) -> Result<Option<(String, Answered)>, ReplayError> {
    for (rerun, of) in [(right, left), (left, right)] {
        let from = runlog_replay::control::rerun_of(log, rerun)?;
        if from.is_some_and(|r| r.from_run.as_str() == of) {
            return Ok(Some((rerun.to_owned(), answered(log, rerun)?)));
        }
    }
    Ok(None)
}
