//! The one way to follow a run: its history from a seq, then each event as it is appended,
//! read through the store's own subscription (which works across processes and hosts), each
//! seq once and in order, a follower that falls too far behind stopped instead of waited for.
//! `runlog log --follow`, `runlog run` following a server's run and the API's event stream all
//! follow through it.

use runlog_core::{Event, EventKind};
use runlog_replay::ReplayError;
use runlog_store::{Direction, EventLog, Record};
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

/// Events a follower may fall behind the run (appended, not yet taken) before it is stopped.
pub const MAX_LAG: usize = 10_000;

/// Events read from the history at once.
const PAGE: u64 = 1_024;

/// When following stops by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ends {
    /// Once the run has finished or been interrupted (at once for a run that had, when the
    /// history is read).
    AtRunEnd,
    /// Never: the follower goes on until its reader leaves (the API's event stream, which a
    /// rollback and a resume may bring more events to).
    Never,
}

/// What one step of following brings.
#[derive(Debug)]
pub enum Followed {
    /// The next event of the run.
    Event(u64, Event),
    /// Nothing within the wait: the reader may look at what else it waits for.
    Idle,
}

/// Why following stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// The reader fell more than [`MAX_LAG`] events behind the run.
    #[error("this reader fell more than {MAX_LAG} events behind run {run} (at seq {next})")]
    Lagged {
        /// The run.
        run: String,
        /// The first seq not delivered.
        next: u64,
    },
    /// The store's subscription closed (the store went away).
    #[error("lost the store while following run {run} (at seq {next})")]
    Closed {
        /// The run.
        run: String,
        /// The first seq not delivered.
        next: u64,
    },
    /// Reading or decoding the history failed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// A run followed from a seq. See the module documentation.
#[derive(Debug)]
pub struct Follower {
    log: Arc<dyn EventLog>,
    run: String,
    live: crossbeam_channel::Receiver<Record>,
    ends: Ends,
    /// The first seq not delivered yet.
    next: u64,
    /// Records read from the log, not delivered yet.
    pending: VecDeque<Record>,
    /// The history up to the head as it was when the follower started has been read.
    caught_up: bool,
    /// The run is running, as the events delivered so far say.
    running: bool,
    /// Nothing more comes: the run ended, or the reader asked to stop at the head.
    done: bool,
    /// The reader asked to stop at the head (see [`Follower::stop_at_head`]).
    closing: bool,
}

impl Follower {
    /// Follows `run` from seq `from` (1 for the whole history). The subscription is taken
    /// before the history is read, so nothing appended in between is missed.
    pub fn new(log: Arc<dyn EventLog>, run: &str, from: u64, ends: Ends) -> Self {
        let live = log.subscribe(Some(run));
        // From a later seq, whether the run is running is not in what will be delivered.
        let running = from > 1
            && runlog_replay::Replay::new(log.as_ref())
                .head_state(run)
                .map_or(true, |s| s.status == runlog_core::RunStatus::Running);
        Self {
            log,
            run: run.to_owned(),
            live,
            ends,
            next: from.max(1),
            pending: VecDeque::new(),
            caught_up: false,
            running,
            done: false,
            closing: false,
        }
    }

    /// The first seq not delivered yet: where a reader that stopped continues from.
    pub fn next_seq(&self) -> u64 {
        self.next
    }

    /// Whether the run was running after the last event delivered.
    pub fn running(&self) -> bool {
        self.running
    }

    /// Stops once what the log holds now is delivered (the reader knows nothing more will be
    /// appended: the run's runner is gone).
    pub fn stop_at_head(&mut self) {
        self.closing = true;
        self.caught_up = false;
    }

    /// The next event, [`Followed::Idle`] after `wait` without one, or `None` once following
    /// is over (see [`Ends`] and [`Follower::stop_at_head`]).
    pub fn next(&mut self, wait: Duration) -> Result<Option<Followed>, FollowError> {
        loop {
            if let Some(record) = self.pending.pop_front() {
                if let Some(step) = self.deliver(record)? {
                    return Ok(Some(step));
                }
                continue;
            }
            if self.done {
                return Ok(None);
            }
            if !self.caught_up {
                self.read_page()?;
                continue;
            }
            if self.closing {
                self.done = true;
                continue;
            }
            if self.ends == Ends::AtRunEnd && !self.running {
                // The history ends with the run's end (or an interruption).
                self.done = true;
                continue;
            }
            if self.live.len() > MAX_LAG {
                return Err(FollowError::Lagged {
                    run: self.run.clone(),
                    next: self.next,
                });
            }
            match self.live.recv_timeout(wait) {
                Ok(record) if record.seq < self.next => {}
                Ok(record) if record.seq == self.next => self.pending.push_back(record),
                // A gap (a subscription rerouted to a new owner of the store): read it.
                Ok(_) => self.caught_up = false,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    return Ok(Some(Followed::Idle))
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                    return Err(FollowError::Closed {
                        run: self.run.clone(),
                        next: self.next,
                    })
                }
            }
        }
    }

    /// Reads the next page of the log; a short page means the head is reached.
    fn read_page(&mut self) -> Result<(), FollowError> {
        let to = self.next.saturating_add(PAGE - 1);
        let page = self
            .log
            .read(&self.run, self.next, to, Direction::Forward)
            .map_err(ReplayError::from)?;
        if (page.len() as u64) < PAGE {
            self.caught_up = true;
        }
        self.pending.extend(page);
        Ok(())
    }

    /// Decodes the record if it is the next seq; `None` for one already delivered.
    fn deliver(&mut self, record: Record) -> Result<Option<Followed>, FollowError> {
        if record.seq != self.next {
            return Ok(None);
        }
        let event = runlog_replay::events::decode(&self.run, record.seq, &record.body)?;
        self.next = record.seq + 1;
        match event.kind {
            EventKind::RunFinished { .. } | EventKind::RunInterrupted { .. } => {
                self.running = false;
                // Live, an end ends the following; in the history, only the last one does.
                if self.ends == Ends::AtRunEnd && self.caught_up && self.pending.is_empty() {
                    self.done = true;
                }
            }
            EventKind::RunStarted { .. } | EventKind::RunResumed { .. } => self.running = true,
            _ => {}
        }
        Ok(Some(Followed::Event(record.seq, event)))
    }
}
