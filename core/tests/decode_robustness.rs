//! Decoding never panics or aborts, whatever the bytes: random bytes, truncated and
//! bit-flipped events, huge length claims and deeply nested values all give an error.

use proptest::prelude::*;
use runlog_core::*;

fn sample() -> Event {
    Event {
        at: Timestamp(42),
        kind: EventKind::StageCompleted {
            stage: StageId::from("review"),
            task: TaskId::from("a"),
            result: Value::from(
                serde_json::json!({"score": 65, "issues": ["a", "b"], "ok": false}),
            ),
            duration_ms: 12,
            retry_count: 1,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = codec::decode_event(&bytes);
    }

    #[test]
    fn flipped_or_truncated_events_never_panic(pos in any::<usize>(), bit in 0u8..8, cut in any::<usize>()) {
        let bytes = codec::encode_event(&sample()).unwrap();
        let mut flipped = bytes.clone();
        let i = pos % flipped.len();
        flipped[i] ^= 1 << bit;
        let _ = codec::decode_event(&flipped);
        let _ = codec::decode_event(&bytes[..cut % bytes.len()]);
    }
}

#[test]
fn a_huge_length_claim_is_an_error_not_an_allocation() {
    // RunInterrupted (variant 2) whose reason claims 2^62 bytes.
    let mut bytes = vec![42u8, 2, 0xfd];
    bytes.extend_from_slice(&(1u64 << 62).to_le_bytes());
    assert!(codec::decode_event(&bytes).is_err());
}

#[test]
fn a_deeply_nested_value_is_an_error_not_a_stack_overflow() {
    let cfg = bincode::config::standard().with_limit::<{ 16 * 1024 * 1024 }>();
    let mut bytes = Vec::new();
    for _ in 0..100_000 {
        bytes.extend_from_slice(&[5, 1]); // a list of one list of one...
    }
    bytes.push(0);
    let r: Result<(Value, usize), _> = bincode::decode_from_slice(&bytes, cfg);
    assert!(r.is_err());
    // 64 levels are fine.
    let mut ok = Vec::new();
    for _ in 0..MAX_VALUE_DEPTH {
        ok.extend_from_slice(&[5, 1]);
    }
    ok.push(0);
    let r: Result<(Value, usize), _> = bincode::decode_from_slice(&ok, cfg);
    assert!(r.is_ok());
}

#[test]
fn trailing_bytes_are_reported() {
    let mut bytes = codec::encode_event(&sample()).unwrap();
    bytes.push(0);
    assert!(matches!(
        codec::decode_event(&bytes),
        Err(codec::CodecError::Trailing { .. })
    ));
}

#[test]
fn values_round_trip_through_json() {
    let json = serde_json::json!({"a": [1, 2.5, "x", null, true], "b": {"c": -3}});
    let v = Value::from(json.clone());
    assert_eq!(serde_json::Value::from(&v), json);
    assert_eq!(serde_json::to_value(&v).unwrap(), json);
}

/// A value nested `depth` lists deep around a scalar.
fn nested(depth: usize) -> Value {
    (0..depth).fold(Value::Int(1), |v, _| Value::List(vec![v]))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Whatever the encoder accepts, the decoder reads back: a value the log could record but
    /// never read would make its run unreadable for good.
    #[test]
    fn whatever_encodes_decodes_back(depth in 0usize..200, wide in 0usize..4) {
        let result = Value::Map(
            (0..=wide).map(|i| (format!("k{i}"), nested(depth.saturating_sub(i)))).collect(),
        );
        let event = Event {
            at: Timestamp(1),
            kind: EventKind::StageCompleted {
                stage: StageId::from("s"),
                task: TaskId::from("a"),
                result: result.clone(),
                duration_ms: 0,
                retry_count: 0,
            },
        };
        match codec::encode_event(&event) {
            Ok(bytes) => prop_assert_eq!(codec::decode_event(&bytes).unwrap(), event),
            // What the rules let through (`fits`) always encodes.
            Err(_) => prop_assert!(!result.fits()),
        }
    }
}
