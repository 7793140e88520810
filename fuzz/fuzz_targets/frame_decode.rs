#![no_main]
//! Fuzz target: see `runlog_cli::fuzz::frame_decode`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| runlog_cli::fuzz::frame_decode(data));
