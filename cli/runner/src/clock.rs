//! Time for the runner: the wall clock, or a fixed clock for reproducible runs
//! (`RUNLOG_TEST_CLOCK=START_MS`, read by [`crate::Host`]): it ticks one second per reading and
//! never sleeps.

use runlog_core::Timestamp;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The runner's clock.
#[derive(Debug)]
pub enum Clock {
    /// Wall time.
    Real,
    /// Starts at a fixed time and advances one second per reading.
    Fixed(AtomicU64),
}

impl Clock {
    /// A fixed clock from `start` (for tests and recorded fixtures), else wall time.
    pub fn new(start: Option<u64>) -> Self {
        match start {
            Some(start) => Clock::Fixed(AtomicU64::new(start)),
            None => Clock::Real,
        }
    }

    /// Now.
    pub fn now(&self) -> Timestamp {
        match self {
            Clock::Real => Timestamp(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64),
            ),
            Clock::Fixed(t) => Timestamp(t.fetch_add(1_000, Ordering::SeqCst)),
        }
    }

    /// Now, without advancing a fixed clock (for comparisons, not for recording).
    pub fn peek(&self) -> Timestamp {
        match self {
            Clock::Real => self.now(),
            Clock::Fixed(t) => Timestamp(t.load(Ordering::SeqCst)),
        }
    }

    /// How long something took, as recorded: measured, or a fixed second.
    pub fn duration_ms(&self, measured: Duration) -> u64 {
        match self {
            Clock::Real => measured.as_millis() as u64,
            Clock::Fixed(_) => 1_000,
        }
    }

    /// Waits until `due` (the fixed clock jumps there instead).
    pub async fn sleep_until(&self, due: Timestamp) {
        match self {
            Clock::Real => {
                let now = self.now();
                tokio::time::sleep(Duration::from_millis(due.since(now))).await;
            }
            Clock::Fixed(t) => {
                t.fetch_max(due.0, Ordering::SeqCst);
            }
        }
    }
}
