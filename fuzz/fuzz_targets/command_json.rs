#![no_main]
//! Fuzz target: see `runlog_cli::fuzz::command_json`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| runlog_cli::fuzz::command_json(data));
