//! Fault schedules drawn from a seed: which faults, on which worker slot, when, for how long.

use super::proxy::Cut;

/// A small generator (splitmix64): the same seed draws the same schedule.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// In `lo..hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo).max(1)
    }
}

/// One fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The slot's link down for `ms`; `mid_append`: as its next COMMIT passes, not at once.
    Partition {
        slot: usize,
        ms: u64,
        mid_append: bool,
    },
    /// Every slot's link down for `ms`: the database cut off from every worker.
    Isolate { ms: u64 },
    /// PostgreSQL restarted, fast or immediate.
    Restart { immediate: bool },
    /// The slot's proxy cuts its next transaction.
    Cut { slot: usize, at: Cut },
    /// The slot's proxy passes nothing for `ms`.
    Stall { slot: usize, ms: u64 },
    /// The slot's proxy holds each message `by` ms, for `ms`.
    Delay { slot: usize, by: u64, ms: u64 },
    /// The slot's worker stopped (SIGSTOP) for `ms`, then continued.
    Freeze { slot: usize, ms: u64 },
    /// The slot's worker killed with -9 (a new one starts after).
    Kill { slot: usize },
    /// The slot's link down for `ms` as its next push to the shared repository begins.
    PushPartition { slot: usize, ms: u64 },
    /// The slot's host gone in the middle of an append: its link down at its next COMMIT and
    /// its worker killed with -9, the link left down (and no worker started there) until the
    /// run ends. Nothing tells the server the connection is dead.
    Vanish { slot: usize },
}

/// A fault and when it strikes, from the schedule's start.
#[derive(Debug, Clone, Copy)]
pub struct Timed {
    pub at_ms: u64,
    pub fault: Fault,
}

/// What one seed draws.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub seed: u64,
    pub faults: Vec<Timed>,
    /// A slot whose workers' clocks are off, by this many seconds (either way).
    pub skew: Option<(usize, i64)>,
    /// The run works in a git workspace whose shared repository is reached over the network
    /// (even seeds).
    pub git: bool,
}

impl Schedule {
    /// The schedule of `seed` for `slots` workers with leases of `lease_ms`.
    pub fn draw(seed: u64, slots: usize, lease_ms: u64) -> Self {
        let mut r = Rng::new(seed);
        let slots = slots as u64;
        let count = r.range(3, 7);
        let mut faults: Vec<Timed> = (0..count)
            .map(|_| {
                let slot = r.range(0, slots) as usize;
                // Shorter than a lease (rides it out) or well past it (its tasks taken on).
                let ms = if r.next() % 2 == 0 {
                    r.range(lease_ms / 4, lease_ms * 3 / 4)
                } else {
                    r.range(lease_ms * 3 / 2, lease_ms * 3)
                };
                let fault = match r.range(0, 11) {
                    0 | 1 => Fault::Partition {
                        slot,
                        ms,
                        mid_append: r.next() % 2 == 0,
                    },
                    2 => Fault::Isolate {
                        ms: ms.min(lease_ms * 2),
                    },
                    3 => Fault::Restart {
                        immediate: r.next() % 2 == 0,
                    },
                    4 => Fault::Cut {
                        slot,
                        at: [Cut::AfterBegin, Cut::BeforeCommit, Cut::AfterCommit]
                            [r.range(0, 3) as usize],
                    },
                    5 => Fault::Stall { slot, ms },
                    6 => Fault::Delay {
                        slot,
                        by: r.range(20, 200),
                        ms,
                    },
                    7 | 8 => Fault::Freeze {
                        slot,
                        ms: r.range(lease_ms * 3 / 2, lease_ms * 3),
                    },
                    9 => Fault::Kill { slot },
                    _ => Fault::Vanish { slot },
                };
                Timed {
                    at_ms: r.range(200, 5_000),
                    fault,
                }
            })
            .collect();
        faults.sort_by_key(|t| t.at_ms);
        // One host gone at most: the others finish the run.
        let mut gone = false;
        for t in &mut faults {
            if let Fault::Vanish { slot } = t.fault {
                if std::mem::replace(&mut gone, true) {
                    t.fault = Fault::Kill { slot };
                }
            }
        }
        let skew = (r.next() % 2 == 0).then(|| {
            let secs = r.range(60, 600) as i64;
            (
                r.range(0, slots) as usize,
                if r.next() % 2 == 0 { secs } else { -secs },
            )
        });
        // Even seeds work in git: their partitions at a random time strike mid-push instead.
        let git = seed % 2 == 0;
        if git {
            for t in &mut faults {
                if let Fault::Partition {
                    slot,
                    ms,
                    mid_append: false,
                } = t.fault
                {
                    t.fault = Fault::PushPartition { slot, ms };
                }
            }
        }
        Self {
            seed,
            faults,
            skew,
            git,
        }
    }
}
