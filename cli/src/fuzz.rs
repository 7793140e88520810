//! What the fuzz targets run (`fuzz/`), and what `cargo test` replays their corpora through
//! (`tests/fuzz_corpus.rs`): every parser of bytes that an agent, a file, a script or the disk
//! hands runlog. Each returns normally on any input, and panics only when an invariant breaks
//! (an event that encodes but does not decode back the same, say): that panic is the finding.

#![allow(clippy::panic)]

use runlog_core::codec::{decode_event, encode_event, CodecError};
use runlog_core::{decide, evolve, RunState, Timestamp};
use runlog_runner::{protocol, Workflow};
use runlog_store::{EventLog, Log};
use std::path::Path;

/// A fuzz target's body: any bytes in, a panic only when an invariant breaks.
pub type Target = fn(&[u8]);

/// The fuzz targets by name, as `fuzz/fuzz_targets/NAME.rs` and `fuzz/corpus/NAME/` call them.
pub const TARGETS: &[(&str, Target)] = &[
    ("event_decode", event_decode),
    ("frame_decode", frame_decode),
    ("wal_replay", wal_replay),
    ("import_lines", import_lines),
    ("workflow_toml", workflow_toml),
    ("evaluator_output", evaluator_output),
    ("agent_output", agent_output),
    ("command_json", command_json),
    ("usage_output", usage_output),
    ("terminal", terminal),
];

/// An event body from the disk: whatever decodes re-encodes to bytes that decode and encode
/// to the same bytes again (bytes, not values: a NaN threshold is never equal to itself).
pub fn event_decode(data: &[u8]) {
    if let Ok(event) = decode_event(data) {
        let bytes = encode_event(&event).unwrap_or_else(|e| panic!("decoded, not encodable: {e}"));
        let again = decode_event(&bytes).unwrap_or_else(|e| panic!("encoded, not decodable: {e}"));
        let bytes_again =
            encode_event(&again).unwrap_or_else(|e| panic!("decoded, not encodable: {e}"));
        assert_eq!(bytes, bytes_again, "an event changed on the way round");
    }
}

/// A frame from sled: walking it either fails with a damage report or yields its records.
pub fn frame_decode(data: &[u8]) {
    let first_seq = 1;
    let _ = runlog_store::frame::walk(data, first_seq, |_, _| Ok(()), |_| false);
}

/// A write-ahead log image: parsing never reads past the bytes and its valid prefix is within
/// them; the prefix parses again to the same entries.
pub fn wal_replay(data: &[u8]) {
    if let Ok((entries, valid)) = runlog_store::wal::parse(data) {
        assert!(
            valid <= data.len(),
            "valid prefix {valid} past {}",
            data.len()
        );
        if let Some(prefix) = data.get(..valid) {
            if let Ok((again, _)) = runlog_store::wal::parse(prefix) {
                assert_eq!(
                    again.len(),
                    entries.len(),
                    "the valid prefix parses differently"
                );
            }
        }
    }
}

/// An export file given to `runlog import`: into a fresh log; what is imported verifies.
pub fn import_lines(data: &[u8]) {
    let Ok(log) = Log::memory() else { return };
    let mut input = std::io::BufReader::new(data);
    if let Ok(imported) = runlog_replay::export::import(&log, &mut input, None) {
        let report = log
            .verify(&imported.run)
            .unwrap_or_else(|e| panic!("imported, not verifiable: {e}"));
        assert!(
            report.is_ok(),
            "an imported run fails verification: {report:?}"
        );
    }
}

/// A workflow file: accepted or refused with an error, never a panic.
pub fn workflow_toml(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = Workflow::parse(text, Path::new("fuzz.toml"));
    }
}

/// What an evaluator printed.
pub fn evaluator_output(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(verdict) = protocol::evaluation(&text) {
        assert!(
            verdict.score.is_finite(),
            "a verdict with score {}",
            verdict.score
        );
    }
}

/// What an agent printed: its report, and what the replanner's answer parses to.
pub fn agent_output(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = protocol::agent_report(&text);
    let _ = runlog_runner::parse_revision(&text, "fuzz", None);
}

/// Lines given to `runlog emit`: each decided on the state the lines before it left; the
/// events they make apply and encode.
pub fn command_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut state = RunState::default();
    for line in text.lines() {
        let Ok(cmd) = crate::intake::parse_line(line, || Timestamp(0), &Default::default()) else {
            continue;
        };
        let Ok(events) = decide(&state, cmd) else {
            continue;
        };
        for event in &events {
            state = evolve(state, event);
            let bytes = encode_event(event);
            assert!(
                bytes.is_ok() || matches!(bytes, Err(CodecError::TooLarge { .. })),
                "a decided event does not encode: {bytes:?}"
            );
        }
    }
}

/// A command's output read for usage reports: whatever an agent prints, each report read is one
/// `decide` would record, its records add up to the reports' tokens, and every cost is a
/// finite number of dollars ≥ 0.
pub fn usage_output(data: &[u8]) {
    use runlog_core::usage::{
        invalid_report, records, reports_in, Price, Prices, Tokens, UsageStage,
    };
    let text = String::from_utf8_lossy(data);
    let (reports, _) = reports_in(&text);
    for r in &reports {
        assert_eq!(
            invalid_report(r),
            None,
            "read a report decide refuses: {r:?}"
        );
    }
    let prices = Prices::from([(
        "gpt-4o".to_owned(),
        Price {
            input: 2.5,
            output: 10.0,
            cache_read: None,
            cache_write: None,
        },
    )]);
    let recs = records(
        &runlog_core::TaskId::from("t"),
        1,
        UsageStage::Agent,
        &reports,
        &prices,
    );
    let sum = |it: &mut dyn Iterator<Item = Tokens>| it.fold(Tokens::default(), Tokens::plus);
    assert_eq!(
        sum(&mut recs.iter().map(|r| r.tokens)),
        sum(&mut reports.iter().map(|r| r.tokens)),
        "records do not add up to the reports"
    );
    for r in &recs {
        if let Some(c) = r.cost_usd {
            assert!(c.is_finite() && c >= 0.0, "a cost of {c}");
        }
    }
}

/// Recorded text on a person's terminal: the bytes as a message an agent posted, a stage's
/// error and a model's name, printed as `runlog log` and `show --calls` print them. No control
/// character but newline and tab, no C1 control and no bidirectional override reaches the
/// terminal (colour off: with it on, runlog's own escapes are the only ones).
pub fn terminal(data: &[u8]) {
    use crate::render::terminal::Terminal;
    use runlog_core::{Event, EventKind, StageId, TaskId};
    use std::io::Write;
    let text = String::from_utf8_lossy(data).into_owned();
    let events = [
        EventKind::MessagePosted {
            task: None,
            from: text.clone(),
            text: text.clone(),
        },
        EventKind::StageFailed {
            stage: StageId::from("s"),
            task: TaskId::from("t"),
            error: text.clone(),
            error_type: runlog_core::ErrorType::Other(text.clone()),
            retry_count: 1,
            duration_ms: 1,
        },
    ];
    let mut shown = Vec::new();
    for (seq, kind) in (1..).zip(events) {
        let event = Event {
            at: Timestamp(0),
            kind,
        };
        let mut out = Terminal(&mut shown);
        crate::render::event::write_event(&mut out, seq, &event, false)
            .unwrap_or_else(|e| panic!("writing to memory failed: {e}"));
        let _ = writeln!(out, "model {text}");
    }
    let shown = String::from_utf8_lossy(&shown);
    let bad = shown.chars().find(|c| {
        (c.is_control() && *c != '\n' && *c != '\t')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    });
    assert!(bad.is_none(), "{bad:?} reached the terminal: {shown:?}");
}
