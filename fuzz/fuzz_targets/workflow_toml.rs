#![no_main]
//! Fuzz target: see `runlog_cli::fuzz::workflow_toml`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| runlog_cli::fuzz::workflow_toml(data));
