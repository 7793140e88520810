//! Whatever an agent, a test or an evaluator prints, the run stays readable (issue 13, first
//! defect): arbitrary JSON values (nested past the decoder's limit, huge numbers, any unicode)
//! and arbitrary bytes (invalid UTF-8, NULs, protocol lines with junk) go through the real
//! runner into a real store, and every command that reads a run back answers without an error.

mod common;

use common::{every_reader_answers, runlog, text, workflow};
use proptest::prelude::*;
use std::path::Path;

/// Any JSON value, up to `depth` levels of containers around scalars of every kind.
fn json(depth: u32) -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value as J;
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        any::<i64>().prop_map(J::from),
        any::<u64>().prop_map(J::from),
        any::<f64>().prop_map(J::from), // NaN and infinities become null
        ".{0,40}".prop_map(J::String),
    ];
    leaf.prop_recursive(depth, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(J::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| J::Object(m.into_iter().collect())),
        ]
    })
}

/// A value wrapped `levels` deep in one-key objects: past 64 it cannot be recorded as a value.
fn nested(value: serde_json::Value, levels: usize) -> serde_json::Value {
    (0..levels).fold(value, |v, i| serde_json::json!({ format!("k{i}"): v }))
}

/// What one of the three commands prints: junk bytes, a JSON line, protocol lines with junk.
fn output(json_key: &'static str) -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(any::<u8>(), 0..600),
        json(5),
        0usize..110,
        prop::collection::vec(any::<u8>(), 0..200),
        ".{0,30}",
    )
        .prop_map(move |(junk, value, levels, tail, word)| {
            let mut out = junk;
            out.push(b'\n');
            let line = nested(serde_json::json!({ json_key: value }), levels);
            out.extend_from_slice(line.to_string().as_bytes());
            out.push(b'\n');
            for protocol in ["::checkpoint", "::classify", "::message"] {
                out.extend_from_slice(format!("{protocol} {word}\n").as_bytes());
            }
            out.extend_from_slice(&tail);
            out
        })
}

fn run_and_read(dir: &Path, agent: &[u8], test: &[u8], test_passes: bool, eval: &[u8]) {
    std::fs::write(dir.join("agent.out"), agent).unwrap();
    std::fs::write(dir.join("test.out"), test).unwrap();
    std::fs::write(dir.join("eval.out"), eval).unwrap();
    let wf = workflow(
        dir,
        "hostile",
        &format!(
            "name = \"hostile\"\n[settings]\nmax_test_retries = 0\nauto_rescue = false\n\
             [[task]]\nid = \"a\"\nrun = \"cat agent.out\"\ntest = \"cat test.out; exit {}\"\n\
             eval = \"cat eval.out\"\nretry = {{ max = 0 }}\n",
            if test_passes { 0 } else { 1 }
        ),
    );
    let store = dir.join("store");
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "h", "--quiet"])
        .output()
        .unwrap();
    // The run may fail or wait for a person; it must not be an error of runlog's own.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "run: {}",
        text(&out)
    );
    every_reader_answers(&store, "h", "a", 3);
}

proptest! {
    // Each case runs the binary seventeen times: few cases, each a whole run.
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn any_output_of_agent_test_and_evaluator_leaves_the_run_readable(
        agent in output("result"),
        test in output("details"),
        test_passes in any::<bool>(),
        eval in output("score"),
    ) {
        let dir = tempfile::tempdir().unwrap();
        run_and_read(dir.path(), &agent, &test, test_passes, &eval);
    }
}
