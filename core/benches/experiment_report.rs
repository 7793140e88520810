//! What an experiment's report costs to make: the figures (`experiment::report::figures`) over
//! 1,000 reruns of 5 tasks each (100 runs × 2 variants × 5 repeats, and the recording), with
//! the intervals, the sign test and the seeded bootstrap. The reading of the reruns from the
//! store is timed by `cli/benches/experiments.rs`.
//!
//! `cargo bench -p runlog-core --bench experiment_report`. Prints its goal (the report in
//! under 1 s); asserts nothing about time.
#![allow(clippy::print_stdout)]

use runlog_core::experiment::report::{figures, Observed, Outcome};
use runlog_core::{RunId, TaskId};
use std::time::Instant;

fn main() {
    let (runs, repeats, tasks) = (100_u32, 5_u32, 5_u32);
    let variants = ["base", "haiku", "strict"];
    let mut observed = Vec::new();
    let mut reruns = 0;
    for r in 0..runs {
        for (v, variant) in variants.iter().enumerate() {
            let executions = if v == 0 { 1 } else { repeats };
            reruns += if v == 0 { 0 } else { executions };
            for k in 0..executions {
                for t in 0..tasks {
                    // A fixed pattern: some tasks broken, some flaky, scores around 0.8.
                    let done = (r + t + k * u32::try_from(v).unwrap_or(0)) % 7 != 0;
                    observed.push(Observed {
                        run: RunId::from(format!("night-{r}")),
                        task: TaskId::from(format!("t{t}")),
                        variant: (*variant).to_owned(),
                        rerun: (v > 0).then(|| RunId::from(format!("x.{variant}.night-{r}.{k}"))),
                        outcome: Some(Outcome {
                            done,
                            tests: Some(done),
                            judged: Some(done),
                            score: Some(0.5 + f64::from((r * 7 + t * 3 + k) % 50) / 100.0),
                            cost_usd: 0.01,
                            saved_usd: 0.008,
                            tokens: 9_000,
                            calls: 11,
                            recorded_calls: 10,
                            wall_ms: 1_300,
                        }),
                    });
                }
            }
        }
    }
    let names: Vec<String> = variants.iter().map(|v| (*v).to_owned()).collect();
    let started = Instant::now();
    let made = figures(&names, &observed, 42);
    let took = started.elapsed().as_secs_f64();
    println!(
        "the figures of {reruns} reruns ({} task executions, {} tasks, {} variants): {:.3} s (goal < 1 s: {})",
        observed.len(),
        made.tasks.len(),
        made.variants.len(),
        took,
        if took < 1.0 { "met" } else { "NOT MET" }
    );
}
