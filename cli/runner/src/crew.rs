//! Working a run as one worker among many (the shared store). What changes for an engine:
//!
//! - it starts an attempt only by claiming the task in the same append
//!   (`StartTaskAs`), so when two workers race, the log's expected-seq check lets one win and
//!   the other's decision, taken again on the new head, is refused: it records nothing;
//! - it leaves alone the tasks another live worker holds (that worker has their worktrees), and
//!   runs their tests or eval only after claiming them from a worker that was lost;
//! - it abandons the attempts of workers whose lease expired (confirmed on the server under the
//!   lease's row lock, so that a renewal being committed is seen), so their tasks are taken on
//!   elsewhere;
//! - its processes count against the worker's `--jobs` across all the runs it works on;
//! - a signal makes a worker leave (abandoning what it holds) instead of interrupting the run,
//!   unless it is the `runlog run` or `runlog resume` of that run.

use crate::layout::Layout;
use runlog_core::{RunState, TaskId};
use runlog_store::PgLog;
use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often a worker's engine looks for lost workers when nothing else wakes it.
pub const TICK: Duration = Duration::from_millis(500);

/// One worker's identity and what its engines share.
#[derive(Debug, Clone)]
pub struct Crew {
    /// This worker's name (its lease's).
    pub me: String,
    /// A signal interrupts the run (its `runlog run` or `resume`), rather than the worker
    /// leaving it to the others.
    pub owns_run: bool,
    store: Arc<PgLog>,
    /// Processes running across this worker's engines.
    running: Arc<AtomicUsize>,
    /// The live workers as last read, and when.
    alive: Arc<Mutex<(Instant, HashSet<String>)>>,
    /// When this engine last looked for lost workers: once a tick, not at every event (the
    /// look walks every task).
    looked: Arc<Mutex<Instant>>,
}

impl Crew {
    /// A worker named `me` (which has joined with a lease) on the shared store.
    pub fn new(me: String, store: Arc<PgLog>) -> Self {
        Self {
            me,
            owns_run: false,
            store,
            running: Arc::new(AtomicUsize::new(0)),
            alive: Arc::new(Mutex::new((Instant::now() - TICK * 2, HashSet::new()))),
            looked: Arc::new(Mutex::new(Instant::now() - TICK * 2)),
        }
    }

    /// Whether a tick has passed since this engine last looked for lost workers (and it is
    /// time to look again).
    pub(super) fn time_to_look(&self) -> bool {
        let mut looked = self.looked.lock().unwrap_or_else(|p| p.into_inner());
        if looked.elapsed() < TICK {
            return false;
        }
        *looked = Instant::now();
        true
    }

    /// Another worker of this process's (more engines, one `--jobs`): same name and counts.
    pub fn also_for(&self, owns_run: bool) -> Self {
        Self {
            owns_run,
            looked: Arc::new(Mutex::new(Instant::now() - TICK * 2)),
            ..self.clone()
        }
    }

    /// Processes running in all of this worker's engines.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::Acquire)
    }

    pub(super) fn started_one(&self) {
        self.running.fetch_add(1, Ordering::AcqRel);
    }

    pub(super) fn ended(&self, n: usize) {
        let _ = self
            .running
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                Some(r.saturating_sub(n))
            });
    }

    /// Whether another worker holds the task (a lost one too, until its attempt is abandoned).
    pub(super) fn held_elsewhere(&self, state: &RunState, id: &TaskId) -> bool {
        state
            .task(id)
            .and_then(|t| t.held_by())
            .is_some_and(|w| w != self.me)
    }

    /// Whether another worker holds a task that is not finished: the run is not over while
    /// it does.
    pub(super) fn others_at_work(&self, state: &RunState) -> bool {
        state
            .tasks
            .values()
            .any(|t| !t.status.is_terminal() && t.held_by().is_some_and(|w| w != self.me))
    }

    /// Tasks held by workers that are not alive (by the server's clock, read again now), and
    /// this worker's own attempts that no process of its runs (a worker of the same name that
    /// stopped): each with its holder.
    pub(super) fn lost(
        &self,
        state: &RunState,
        mine_running: &dyn Fn(&TaskId) -> bool,
    ) -> Vec<(TaskId, String)> {
        let held: Vec<(TaskId, String, bool)> = state
            .tasks
            .values()
            .filter(|t| !t.status.is_terminal())
            .filter_map(|t| {
                let w = t.held_by()?;
                Some((t.spec.id.clone(), w.to_owned(), t.running))
            })
            .collect();
        let mut lost: Vec<(TaskId, String)> = held
            .iter()
            .filter(|(id, w, running)| *w == self.me && *running && !mine_running(id))
            .map(|(id, w, _)| (id.clone(), w.clone()))
            .collect();
        let mut suspects: Vec<(TaskId, String)> = held
            .into_iter()
            .filter(|(_, w, _)| *w != self.me && !self.alive(w))
            .map(|(id, w, _)| (id, w))
            .collect();
        if suspects.is_empty() {
            return lost;
        }
        // Only what the server confirms now, under the leases' row locks: a worker that just
        // joined or whose renewal is being committed is not lost, a lease confirmed expired is
        // never renewed, and when the server cannot be asked nobody is lost.
        let mut names: Vec<String> = suspects.iter().map(|(_, w)| w.clone()).collect();
        names.sort_unstable();
        names.dedup();
        match self.store.expired(&names) {
            Ok(gone) => {
                suspects.retain(|(_, w)| gone.contains(w));
                lost.extend(suspects);
            }
            Err(e) => tracing::debug!(error = %e, "cannot confirm lost workers: none is lost"),
        }
        lost
    }

    /// Whether `worker` is alive, by the list read at most a tick ago.
    fn alive(&self, worker: &str) -> bool {
        if self
            .alive
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .0
            .elapsed()
            >= TICK
        {
            self.read_alive();
        }
        self.alive
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .contains(worker)
    }

    /// Reads the live workers from the server now. A failed read keeps the last list (which
    /// only picks the suspects [`Crew::lost`] asks the server about).
    fn read_alive(&self) {
        if let Ok(names) = self.store.live_workers() {
            *self.alive.lock().unwrap_or_else(|p| p.into_inner()) =
                (Instant::now(), names.into_iter().collect());
        }
    }

    /// Whether this worker would start the task in a worktree it does not have.
    pub(super) fn fresh(&self, layout: &Layout, state: &RunState, id: &TaskId) -> bool {
        let Some(t) = state.task(id) else {
            return true;
        };
        let worktree = t.worktree.as_deref().unwrap_or(id.as_str());
        !layout.worktree(worktree).exists()
    }
}
