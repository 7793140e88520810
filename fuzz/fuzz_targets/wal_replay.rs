#![no_main]
//! Fuzz target: see `runlog_cli::fuzz::wal_replay`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| runlog_cli::fuzz::wal_replay(data));
