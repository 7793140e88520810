#![no_main]
//! Fuzz target: see `runlog_cli::fuzz::usage_output`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| runlog_cli::fuzz::usage_output(data));
