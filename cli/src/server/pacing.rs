//! Reads are paced while the server executes runs: at most so many a second for all clients
//! together, each read that comes early waiting (asleep, holding no thread) for its turn.
//!
//! Why: on two cores, 20 clients reading a board in a loop made a hosted run take 1.4 to 1.5
//! times as long. Fewer requests at once did not help; a lower priority for the API's threads
//! helped part way, and would make an approval wait behind busy agents. Each request is
//! processor time that the engine, its log and its agents wait for, so the number of requests
//! is what is bounded. Commands (approve, interrupt, start) and the event stream are never
//! paced.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Reads that may come at once after a quiet spell (a page of the web view asks for several).
pub const BURST: u32 = 16;

/// Reads a second for each processor, by default.
pub const PER_PROCESSOR: u32 = 150;

/// How fast reads are served while runs execute.
#[derive(Debug)]
pub struct Pacing {
    /// Between two reads' turns; `None`: unpaced.
    gap: Option<Duration>,
    /// When the turn after the last one given falls.
    next: Mutex<Option<Instant>>,
}

impl Pacing {
    /// At most `per_second` reads a second (0: unpaced), after a burst of [`BURST`].
    pub fn new(per_second: u32) -> Self {
        Self {
            gap: (per_second > 0).then(|| Duration::from_secs(1) / per_second),
            next: Mutex::new(None),
        }
    }

    /// The default rate: [`PER_PROCESSOR`] for each processor this process may use.
    pub fn default_rate() -> u32 {
        let processors = std::thread::available_parallelism().map_or(1, |n| n.get());
        u32::try_from(processors)
            .unwrap_or(u32::MAX)
            .saturating_mul(PER_PROCESSOR)
    }

    /// When a read arriving at `now` may start: one gap after the turn given last, and no
    /// earlier than a burst's worth of gaps before `now` (so that quiet time is not saved up
    /// beyond a burst).
    fn turn(&self, now: Instant) -> Instant {
        let Some(gap) = self.gap else {
            return now;
        };
        let mut next = self.next.lock().unwrap_or_else(|p| p.into_inner());
        let earliest = now.checked_sub(gap * (BURST - 1)).unwrap_or(now);
        let turn = next.map_or(earliest, |n| n.max(earliest));
        *next = Some(turn + gap);
        turn.max(now)
    }

    /// Waits for this read's turn.
    pub async fn wait(&self) {
        let now = Instant::now();
        let turn = self.turn(now);
        if turn > now {
            tokio::time::sleep_until(turn.into()).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_goes_at_once_and_the_rest_one_gap_apart() {
        let pacing = Pacing::new(100);
        let now = Instant::now() + Duration::from_secs(1);
        let turns: Vec<Duration> = (0..BURST + 3).map(|_| pacing.turn(now) - now).collect();
        let gap = Duration::from_millis(10);
        assert!(turns[..BURST as usize].iter().all(|t| t.is_zero()));
        assert_eq!(turns[BURST as usize..], [gap, gap * 2, gap * 3]);
    }

    #[test]
    fn quiet_time_is_saved_up_to_a_burst_and_no_more() {
        let pacing = Pacing::new(100);
        let start = Instant::now() + Duration::from_secs(1);
        pacing.turn(start);
        let later = start + Duration::from_secs(60);
        let turns: Vec<Duration> = (0..BURST + 1).map(|_| pacing.turn(later) - later).collect();
        assert!(turns[..BURST as usize].iter().all(|t| t.is_zero()));
        assert_eq!(turns[BURST as usize], Duration::from_millis(10));
    }

    #[test]
    fn reads_spaced_wider_than_the_gap_never_wait() {
        let pacing = Pacing::new(100);
        let start = Instant::now() + Duration::from_secs(1);
        for i in 0..1_000 {
            let now = start + Duration::from_millis(11 * i);
            assert_eq!(pacing.turn(now), now);
        }
    }

    #[test]
    fn no_rate_is_no_pacing() {
        let pacing = Pacing::new(0);
        let now = Instant::now();
        assert!((0..10_000).all(|_| pacing.turn(now) == now));
    }
}
