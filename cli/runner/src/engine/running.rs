//! What the engine keeps of the processes it started, and the channels its loop waits on.

use crate::process::{Commands, Outcome};
use crate::step::Phase;
use runlog_core::dispatch::Job;
use runlog_core::TaskId;
use runlog_store::EventLog;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

/// The processes the engine started and the channel they report back on.
pub(super) struct Processes {
    /// Each task's process.
    pub(super) busy: HashMap<TaskId, Running>,
    /// The replanner, while it runs.
    pub(super) replanning: Option<Replanning>,
    /// No replanner will run (none is set, or its revision was refused): the run pauses.
    pub(super) replan_gave_up: bool,
    pub(super) tx: mpsc::UnboundedSender<Done>,
    pub(super) rx: mpsc::UnboundedReceiver<Done>,
    /// Where they run.
    pub(super) commands: Arc<dyn Commands>,
}

impl Processes {
    pub(super) fn new(commands: Arc<dyn Commands>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            commands,
            busy: HashMap::new(),
            replanning: None,
            replan_gave_up: false,
            tx,
            rx,
        }
    }

    /// Stops every process gently and waits up to `within` for each to end; whatever does not
    /// end in time is abandoned, which kills its group (see `process`).
    pub(super) async fn stop_all(&mut self, within: Duration) {
        let mut all: Vec<Running> = self.busy.drain().map(|(_, r)| r).collect();
        all.extend(self.replanning.take().map(|r| r.running));
        for r in &all {
            r.stop();
        }
        let deadline = std::time::Instant::now() + within;
        for mut r in all {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if tokio::time::timeout(left, &mut r.handle).await.is_err() {
                r.handle.abort();
            }
        }
    }
}

/// A process the engine started: its task and the switch that stops it gently.
pub(super) struct Running {
    pub(super) handle: JoinHandle<()>,
    pub(super) stop: watch::Sender<bool>,
    /// Where its task stood when it started: a decision made elsewhere that moves the task
    /// (a rollback undoing the attempt, a cancel, an approval) makes its result moot.
    pub(super) phase: Option<Phase>,
    /// Which of the engine's files for running commands (feedback, history) it was given.
    pub(super) slot: usize,
    /// An attempt in a git workspace: the places outside its worktree as it started.
    pub(super) outside: Option<crate::workspace::Watch>,
}

impl Running {
    pub(super) fn start<F>(job: impl FnOnce(watch::Receiver<bool>) -> F) -> Self
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let (stop, stopped) = watch::channel(false);
        Self {
            handle: tokio::spawn(job(stopped)),
            stop,
            phase: None,
            slot: 0,
            outside: None,
        }
    }

    pub(super) fn stop(&self) {
        // The job may have ended already; then there is nothing to stop.
        let _ = self.stop.send(true);
    }
}

/// The seqs appended to the engine's run by anyone (its own appends included), from a thread
/// that blocks on the store's subscription so the engine's loop does not.
pub(super) struct Foreign {
    pub(super) appended: mpsc::UnboundedReceiver<u64>,
    pub(super) stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Foreign {
    pub(super) fn watch(log: &dyn EventLog, run: &str) -> Self {
        use std::sync::atomic::Ordering;
        let records = log.subscribe(Some(run));
        let (tx, appended) = mpsc::unbounded_channel();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let _ = std::thread::Builder::new()
            .name("runlog-engine-watch".into())
            .spawn(move || {
                while !stopped.load(Ordering::Acquire) {
                    match records.recv_timeout(Duration::from_millis(100)) {
                        Ok(r) if tx.send(r.seq).is_err() => return,
                        Ok(_) | Err(crossbeam_channel::RecvTimeoutError::Timeout) => {}
                        Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return,
                    }
                }
            });
        Self { appended, stop }
    }
}

impl Foreign {
    /// The last seq announced so far, `first` included: a burst of appends (other workers')
    /// is taken in with one catch-up and one dispatch, not one per event.
    pub(super) fn latest(&mut self, first: u64) -> u64 {
        let mut last = first;
        while let Ok(seq) = self.appended.try_recv() {
            last = last.max(seq);
        }
        last
    }
}

impl Drop for Foreign {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Release);
    }
}

/// The replan command while it runs: the seq of the board it was given and the task whose
/// request it answers (its output is recorded under that task).
pub(super) struct Replanning {
    pub(super) running: Running,
    pub(super) seen: u64,
    pub(super) after: TaskId,
}

/// A process's end, sent back to the engine's loop.
#[derive(Debug)]
pub(super) enum Done {
    /// One of a task's commands.
    Task(TaskId, Job, Outcome),
    /// The replan command.
    Replan(Outcome),
}

/// The driver's stop switch: `asked` ends once it turns true; never without one, or once its
/// sender is gone (a driver that can no longer ask).
pub(super) struct StopSwitch(pub(super) Option<watch::Receiver<bool>>);

impl StopSwitch {
    pub(super) async fn asked(&mut self) {
        let asked = match self.0.as_mut() {
            Some(stop) => stop.wait_for(|yes| *yes).await.is_ok(),
            None => false,
        };
        if !asked {
            std::future::pending::<()>().await;
        }
    }
}
