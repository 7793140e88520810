//! OpenAI Responses (`POST /v1/responses`): input items and output items (messages, function
//! calls), a stream of `response.*` events closed by the response it completed (or failed, or
//! left incomplete).

use super::parts::{turn, Turn};
use super::{key, kind, Input, TextAt};
use serde_json::{Map, Value};

/// The lines of the events that close a stream.
pub(super) const CLOSING: &[&str] = &[
    "event: response.completed",
    "event: response.failed",
    "event: response.incomplete",
];

/// Where an event carries a piece of text: a `*.delta` event's delta (JSON text for a
/// function call's arguments).
pub(super) fn text_at(event: &Value) -> Vec<TextAt> {
    let kind = kind(event);
    if !kind.ends_with(".delta") || !event.get("delta").is_some_and(Value::is_string) {
        return Vec::new();
    }
    let number = |k: &str| event.get(k).and_then(Value::as_u64).unwrap_or(0);
    vec![(
        format!(
            "{kind}:{}:{}:{}",
            number("output_index"),
            number("content_index"),
            number("summary_index")
        ),
        vec![key("delta")],
        kind.contains("arguments"),
    )]
}

/// The response a stream closes with.
pub(super) fn assemble(events: Vec<Map<String, Value>>) -> Option<Value> {
    events
        .into_iter()
        .filter(|e| {
            matches!(
                e.get("type").and_then(Value::as_str).unwrap_or(""),
                "response.completed" | "response.failed" | "response.incomplete"
            )
        })
        .filter_map(|e| e.get("response").cloned())
        .next_back()
}

/// A request's input: its items, or a text.
pub(super) fn input(request: &Map<String, Value>) -> Input<'_> {
    match request.get("input") {
        Some(Value::String(s)) => Input::Text(s),
        Some(Value::Array(items)) => Input::Items(items),
        _ => Input::Nothing,
    }
}

/// A whole answer's output items, each a turn (the model's message, a function call, its
/// reasoning), as the next request sends them back.
pub(super) fn answer_turns(whole: &Map<String, Value>) -> Vec<Turn> {
    let Some(Value::Array(items)) = whole.get("output") else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(Value::as_object)
        .map(turn)
        .collect()
}
