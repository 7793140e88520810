//! What the store benchmarks measure on any `EventLog` alike (sled, PostgreSQL).
#![allow(dead_code)]

use runlog_store::EventLog;
use std::time::Instant;

/// Events per second of `n` events done since `t`.
pub fn rate(n: usize, t: Instant) -> f64 {
    n as f64 / t.elapsed().as_secs_f64()
}

/// Durable appends of one event each, `producers` threads on runs of their own, each waiting
/// for its acknowledgement before the next.
pub fn producers(log: &dyn EventLog, bodies: &[Vec<u8>], producers: usize, each: usize) -> f64 {
    let t = Instant::now();
    std::thread::scope(|s| {
        for p in 0..producers {
            s.spawn(move || {
                let run = format!("producers-{producers}-{p}");
                for i in 0..each {
                    log.append(&run, Some(i as u64), vec![bodies[i % bodies.len()].clone()])
                        .unwrap();
                }
            });
        }
    });
    rate(producers * each, t)
}

/// All of `bodies` into run `run`, `chunk` events per append.
pub fn bulk(log: &dyn EventLog, run: &str, bodies: &[Vec<u8>], chunk: usize) -> f64 {
    let t = Instant::now();
    let mut head = 0;
    for c in bodies.chunks(chunk) {
        head = log.append(run, Some(head), c.to_vec()).unwrap().seq;
    }
    rate(bodies.len(), t)
}
