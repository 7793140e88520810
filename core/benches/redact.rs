//! What keeping secrets out of the log costs: the redaction every command's output goes
//! through before it is recorded, over agent-like output (log lines, a JSON result, a stack
//! trace) with and without secrets in it, for a redactor knowing 5 and 50 secret values.
//!
//! `cargo bench -p runlog-core --bench redact`. Prints MB/s per case; asserts nothing about
//! time.

use runlog_core::redact::{Counts, Redactor};
use std::time::Instant;

fn output(bytes: usize, leaks: bool) -> String {
    let mut out = String::with_capacity(bytes + 256);
    let mut i = 0u64;
    while out.len() < bytes {
        i += 1;
        out.push_str(&format!(
            "2026-11-24T12:00:{:02} INFO step {i}: edited src/module_{i}.rs, ran 12 tests, 0 failed\n",
            i % 60
        ));
        if leaks && i % 500 == 0 {
            out.push_str("Traceback: auth failed with key value-of-secret-3-abcdef and AKIAIOSFODNN7EXAMPLE\n");
        }
    }
    out.push_str("{\"summary\":\"done\",\"result\":{\"files\":3}}\n");
    out
}

fn main() {
    for secrets in [5usize, 50] {
        let r = Redactor::new((0..secrets).map(|n| {
            (
                format!("SECRET_{n}_KEY"),
                format!("value-of-secret-{n}-abcdef"),
            )
        }));
        for (name, leaks) in [("clean", false), ("leaking", true)] {
            for size in [64 * 1024, 16 * 1024 * 1024] {
                let text = output(size, leaks);
                let rounds = (256 * 1024 * 1024 / text.len()).clamp(1, 200);
                let mut counts = Counts::new();
                let began = Instant::now();
                for _ in 0..rounds {
                    let _ = r.redact(&text, &mut counts);
                }
                let secs = began.elapsed().as_secs_f64();
                let mb = (text.len() * rounds) as f64 / 1e6;
                println!(
                    "{secrets:>3} secrets, {name:<7} output of {:>8} KiB: {:>7.0} MB/s ({} replaced per pass)",
                    text.len() / 1024,
                    mb / secs,
                    counts.values().sum::<u32>() as usize / rounds
                );
            }
        }
    }
}
