#![no_main]
//! Fuzz target: see `runlog_cli::fuzz::event_decode`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| runlog_cli::fuzz::event_decode(data));
