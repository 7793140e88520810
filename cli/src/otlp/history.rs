//! A run's whole trace, from its history: the same spans and ids each time.

use runlog_core::projections::trace::{Span, TraceBuilder, TraceIds};
use runlog_core::EventKind;
use runlog_replay::{Replay, ReplayError};

/// The trace of a run.
#[derive(Debug)]
pub struct TraceOf {
    /// Its ids.
    pub ids: TraceIds,
    /// Its spans, each once, in the order they ended.
    pub spans: Vec<Span>,
    /// Events read.
    pub events: u64,
}

/// The first record's chain hash of `run`: what its trace id derives from.
pub fn first_hash(replay: &Replay<'_>, run: &str) -> Result<[u8; 32], ReplayError> {
    // An unknown run is refused here, with the runs that exist.
    replay.head_seq(run)?;
    Ok(replay.log().hash_at(run, 1)?.unwrap_or_default())
}

/// The builder for `run`, whose first event is `first` with chain hash `hash` (a fork links to
/// its parent's trace).
pub fn builder(replay: &Replay<'_>, run: &str, hash: &[u8; 32], first: &EventKind) -> TraceBuilder {
    let parent = match first {
        EventKind::Forked { from_run, .. } => first_hash(replay, from_run.as_str())
            .ok()
            .map(|h| TraceIds::of(&h)),
        _ => None,
    };
    TraceBuilder::new(run, hash, parent)
}

/// Every span of `run`, from its history. A span handed out more than once (a run resumed
/// after it finished sends its run span again) is kept in its last form.
pub fn spans_of(replay: &Replay<'_>, run: &str) -> Result<TraceOf, ReplayError> {
    replay.head_seq(run)?;
    let mut builder: Option<TraceBuilder> = None;
    let mut spans: Vec<Span> = Vec::new();
    let mut events = 0;
    let mut head = [0u8; 32];
    replay.walk(run, None, &mut |seq, hash, event, state| {
        events += 1;
        head = *hash;
        let b = builder.get_or_insert_with(|| self::builder(replay, run, hash, &event.kind));
        spans.extend(b.observe(seq, event, state));
    })?;
    let b = builder.unwrap_or_else(|| TraceBuilder::new(run, &[0; 32], None));
    let ids = b.ids();
    spans.extend(b.finish());
    // The last form of each span wins, in the order of first appearance.
    let mut seen = std::collections::HashMap::new();
    let mut unique: Vec<Span> = Vec::new();
    for span in spans {
        match seen.get(&span.span_id) {
            Some(&at) => {
                if let Some(slot) = unique.get_mut(at) {
                    *slot = span;
                }
            }
            None => {
                seen.insert(span.span_id, unique.len());
                unique.push(span);
            }
        }
    }
    let head: String = head.iter().map(|b| format!("{b:02x}")).collect();
    for span in unique.iter_mut().filter(|s| s.parent.is_none()) {
        span.attributes.push((
            "runlog.head_hash".into(),
            runlog_core::projections::trace::AttrValue::Str(head.clone()),
        ));
    }
    Ok(TraceOf {
        ids,
        spans: unique,
        events,
    })
}
