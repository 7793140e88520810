//! Rate limits of a provider (`[providers.NAME] requests_per_minute`, `tokens_per_minute`,
//! `concurrent`), held for every run the process executes: a provider's limits are its key's,
//! whichever run spends them. A call over them waits for its turn up to a bound, then is
//! answered 429 with the time to come back (`retry-after`) in the provider's own shape.
//!
//! Requests and tokens are metered by the generic cell rate algorithm: each admitted call moves
//! a theoretical arrival time on by its share of a minute (one request, or its tokens), and a
//! call may go while that time is less than a minute ahead of now. A call's tokens are judged at
//! their worst (as the providers judge them) and settled to what the answer counted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// How long a call waits for its turn by default before it is answered 429.
pub const DEFAULT_LIMIT_WAIT: Duration = Duration::from_secs(5);

/// A provider's rate limits; none bounds nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RateLimits {
    /// Calls a minute.
    pub requests_per_minute: Option<u32>,
    /// Input and output tokens a minute (a call counted at its worst until it is answered).
    pub tokens_per_minute: Option<u64>,
    /// Calls in flight at once.
    pub concurrent: Option<u32>,
    /// How long a call over a limit waits for its turn before it is answered 429.
    pub wait: Option<Duration>,
}

impl RateLimits {
    /// Whether it bounds anything.
    pub fn is_none(&self) -> bool {
        self.requests_per_minute.is_none()
            && self.tokens_per_minute.is_none()
            && self.concurrent.is_none()
    }
}

/// A call over a limit: which, and when to come back.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Limited {
    /// The limit, in words (`requests_per_minute = 30`).
    pub limit: String,
    /// When a call could go again.
    pub retry_after: Duration,
}

/// Where one provider's calls stand against its limits.
#[derive(Debug)]
pub(crate) struct Limiter {
    limits: RateLimits,
    meters: Mutex<Meters>,
    slots: Option<Arc<tokio::sync::Semaphore>>,
}

#[derive(Debug)]
struct Meters {
    /// The theoretical arrival time of the next request, and of the next token.
    requests: Instant,
    tokens: Instant,
}

/// A call admitted: its slot among the concurrent calls, and its tokens to settle.
#[derive(Debug)]
pub(crate) struct Permit {
    limiter: Arc<Limiter>,
    tokens: u64,
    _slot: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl Permit {
    /// The call counted `used` tokens where `tokens` were judged: the rest are given back.
    pub(crate) fn settle(self, used: u64) {
        let Some(per) = self.limiter.per_token() else {
            return;
        };
        let back =
            per.saturating_mul(u32::try_from(self.tokens.saturating_sub(used)).unwrap_or(u32::MAX));
        if let Ok(mut m) = self.limiter.meters.lock() {
            let now = Instant::now();
            m.tokens = m.tokens.checked_sub(back).unwrap_or(now).max(now);
        }
    }
}

/// Limiters by provider address and key variable.
type Registry = Mutex<HashMap<(String, String), Arc<Limiter>>>;

/// The limiters of the process.
fn registry() -> &'static Registry {
    static LIMITERS: OnceLock<Registry> = OnceLock::new();
    LIMITERS.get_or_init(Default::default)
}

/// The limiter of the provider at `base_url` with the key in `key_env`, shared by every run of
/// the process; a run whose workflow gives other limits replaces it.
pub(crate) fn limiter(base_url: &str, key_env: &str, limits: RateLimits) -> Option<Arc<Limiter>> {
    if limits.is_none() {
        return None;
    }
    let mut all = registry().lock().ok()?;
    let key = (base_url.to_owned(), key_env.to_owned());
    match all.get(&key) {
        Some(l) if l.limits == limits => Some(l.clone()),
        _ => {
            let l = Arc::new(Limiter::new(limits));
            all.insert(key, l.clone());
            Some(l)
        }
    }
}

impl Limiter {
    fn new(limits: RateLimits) -> Limiter {
        let now = Instant::now();
        Limiter {
            limits,
            meters: Mutex::new(Meters {
                requests: now,
                tokens: now,
            }),
            slots: limits
                .concurrent
                .map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1) as usize))),
        }
    }

    fn per_request(&self) -> Option<Duration> {
        let n = self.limits.requests_per_minute?.max(1);
        Some(Duration::from_secs(60) / n)
    }

    fn per_token(&self) -> Option<Duration> {
        let n = self.limits.tokens_per_minute?.max(1);
        Some(Duration::from_nanos(60_000_000_000 / n))
    }

    /// Admits a call of at most `tokens`, waiting for its turn up to the limits' bound.
    pub(crate) async fn admit(self: &Arc<Self>, tokens: u64) -> Result<Permit, Limited> {
        let bound = self.limits.wait.unwrap_or(DEFAULT_LIMIT_WAIT);
        let started = Instant::now();
        let turn = self.turn(tokens, bound)?;
        if let Some(at) = turn {
            tokio::time::sleep_until(at.into()).await;
        }
        let slot = match &self.slots {
            None => None,
            Some(slots) => {
                let left = bound.saturating_sub(started.elapsed());
                match tokio::time::timeout(left, slots.clone().acquire_owned()).await {
                    Ok(Ok(slot)) => Some(slot),
                    _ => {
                        return Err(Limited {
                            limit: format!(
                                "concurrent = {}",
                                self.limits.concurrent.unwrap_or_default()
                            ),
                            retry_after: Duration::from_secs(1),
                        })
                    }
                }
            }
        };
        Ok(Permit {
            limiter: self.clone(),
            tokens,
            _slot: slot,
        })
    }

    /// Takes the call's turn by requests and tokens: now (`None`), or at a time within
    /// `bound`; over it, nothing is taken and the call is told when to come back.
    fn turn(&self, tokens: u64, bound: Duration) -> Result<Option<Instant>, Limited> {
        let minute = Duration::from_secs(60);
        let now = Instant::now();
        let mut m = self.meters.lock().map_err(|_| Limited {
            limit: "the limiter".into(),
            retry_after: Duration::from_secs(1),
        })?;
        let request_cost = self.per_request();
        let token_cost = self
            .per_token()
            .map(|per| per.saturating_mul(u32::try_from(tokens).unwrap_or(u32::MAX)));
        if token_cost.is_some_and(|c| c > minute) {
            return Err(Limited {
                limit: format!(
                    "tokens_per_minute = {}: this call could use {tokens} tokens, more than a minute's",
                    self.limits.tokens_per_minute.unwrap_or_default()
                ),
                retry_after: minute,
            });
        }
        // The time each meter lets this call go: its arrival time once moved on, less a minute.
        let after = |tat: Instant, cost: Duration| (tat.max(now) + cost).checked_sub(minute);
        let by_requests = request_cost.and_then(|c| after(m.requests, c));
        let by_tokens = token_cost.and_then(|c| after(m.tokens, c));
        let at = [by_requests, by_tokens].into_iter().flatten().max();
        let wait = at.map_or(Duration::ZERO, |at| at.saturating_duration_since(now));
        if wait > bound {
            let limit = if by_requests >= by_tokens {
                format!(
                    "requests_per_minute = {}",
                    self.limits.requests_per_minute.unwrap_or_default()
                )
            } else {
                format!(
                    "tokens_per_minute = {}",
                    self.limits.tokens_per_minute.unwrap_or_default()
                )
            };
            return Err(Limited {
                limit,
                retry_after: wait,
            });
        }
        if let Some(c) = request_cost {
            m.requests = m.requests.max(now) + c;
        }
        if let Some(c) = token_cost {
            m.tokens = m.tokens.max(now) + c;
        }
        Ok((wait > Duration::ZERO).then(|| now + wait))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rpm: Option<u32>, tpm: Option<u64>) -> Arc<Limiter> {
        Arc::new(Limiter::new(RateLimits {
            requests_per_minute: rpm,
            tokens_per_minute: tpm,
            concurrent: None,
            wait: Some(Duration::from_secs(5)),
        }))
    }

    #[test]
    fn a_minutes_requests_go_at_once_and_the_next_waits_its_share_of_a_minute() {
        let l = limits(Some(30), None);
        for _ in 0..30 {
            assert_eq!(l.turn(0, Duration::from_secs(5)), Ok(None));
        }
        // The 31st goes 2 s later, the 32nd 4 s later, the 33rd is past the 5 s bound.
        let second = |r: Result<Option<Instant>, Limited>| {
            r.map(|at| at.map(|at| at.duration_since(Instant::now()).as_secs_f64().round()))
        };
        assert_eq!(second(l.turn(0, Duration::from_secs(5))), Ok(Some(2.0)));
        assert_eq!(second(l.turn(0, Duration::from_secs(5))), Ok(Some(4.0)));
        let over = l.turn(0, Duration::from_secs(5)).unwrap_err();
        assert_eq!(over.limit, "requests_per_minute = 30");
        assert_eq!(over.retry_after.as_secs_f64().round(), 6.0);
    }

    #[test]
    fn tokens_are_judged_at_their_worst_and_given_back_once_counted() {
        let l = limits(None, Some(10_000));
        assert_eq!(l.turn(8_000, Duration::ZERO), Ok(None));
        assert!(
            l.turn(4_000, Duration::ZERO).is_err(),
            "12,000 at once is over"
        );
        Permit {
            limiter: l.clone(),
            tokens: 8_000,
            _slot: None,
        }
        .settle(1_000);
        assert_eq!(l.turn(4_000, Duration::ZERO), Ok(None), "7,000 came back");
        let huge = l.turn(20_000, Duration::from_secs(600)).unwrap_err();
        assert!(
            huge.limit.contains("more than a minute's"),
            "{}",
            huge.limit
        );
    }
}
