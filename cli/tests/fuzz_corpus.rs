//! Every input the fuzzers kept (`fuzz/corpus/TARGET/`), and every crash they found and we fixed
//! (`fuzz/regressions/TARGET/`), through the same function the fuzz target calls: what once
//! found a bug, or reached new code, keeps being checked by `cargo test` without a fuzzer.

use std::path::Path;

#[test]
fn every_fuzz_corpus_input_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    for (name, target) in runlog_cli::fuzz::TARGETS {
        let mut replayed = 0;
        for dir in ["corpus", "regressions"] {
            let Ok(entries) = std::fs::read_dir(root.join(dir).join(name)) else {
                continue;
            };
            for entry in entries.flatten() {
                let data = std::fs::read(entry.path()).unwrap();
                target(&data);
                replayed += 1;
            }
        }
        assert!(replayed > 0, "fuzz/corpus/{name} holds no inputs");
    }
}
