#![no_main]
//! Fuzz target: see `runlog_cli::fuzz::agent_output`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| runlog_cli::fuzz::agent_output(data));
