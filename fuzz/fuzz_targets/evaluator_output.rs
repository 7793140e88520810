#![no_main]
//! Fuzz target: see `runlog_cli::fuzz::evaluator_output`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| runlog_cli::fuzz::evaluator_output(data));
