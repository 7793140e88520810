//! Anthropic Messages (`POST /v1/messages`): content blocks, a stream of `message_start`,
//! `content_block_*` and `message_delta` events closed by `message_stop`.

use super::parts::{blocks, Part};
use super::{key, kind, Input, TextAt};
use serde_json::{json, Map, Value};

/// The line of the event that closes a stream.
pub(super) const CLOSING: &[&str] = &["event: message_stop"];

/// Where an event carries a piece of a block's text: a `content_block_delta`'s text, tool
/// input (JSON text) or thinking.
pub(super) fn text_at(event: &Value) -> Vec<TextAt> {
    if kind(event) != "content_block_delta" {
        return Vec::new();
    }
    let number = |k: &str| event.get(k).and_then(Value::as_u64).unwrap_or(0);
    let delta = event.get("delta");
    ["text", "partial_json", "thinking"]
        .into_iter()
        .filter(|f| delta.and_then(|d| d.get(*f)).is_some_and(Value::is_string))
        .map(|f| {
            (
                format!("{}:{f}", number("index")),
                vec![key("delta"), key(f)],
                f == "partial_json",
            )
        })
        .collect()
}

/// A request's turns: its messages.
pub(super) fn input(request: &Map<String, Value>) -> Input<'_> {
    match request.get("messages") {
        Some(Value::Array(m)) => Input::Items(m),
        _ => Input::Nothing,
    }
}

/// A whole answer's parts: its content blocks.
pub(super) fn answer_parts(whole: &Map<String, Value>) -> Vec<Part> {
    match whole.get("content") {
        Some(Value::Array(list)) => blocks(list),
        _ => Vec::new(),
    }
}

/// Anthropic: `message_start`'s message, each block from its start and deltas, the stop reason
/// and output usage from `message_delta`.
pub(super) fn assemble(events: Vec<Map<String, Value>>) -> Option<Value> {
    let mut message: Option<Map<String, Value>> = None;
    let mut blocks: Vec<Map<String, Value>> = Vec::new();
    let mut partial_json: Vec<String> = Vec::new();
    for e in events {
        match e.get("type").and_then(Value::as_str).unwrap_or("") {
            "message_start" => {
                message = e.get("message").and_then(Value::as_object).cloned();
            }
            "content_block_start" => {
                if let Some(b) = e.get("content_block").and_then(Value::as_object) {
                    blocks.push(b.clone());
                    partial_json.push(String::new());
                }
            }
            "content_block_delta" => {
                let Some(delta) = e.get("delta").and_then(Value::as_object) else {
                    continue;
                };
                // A delta with no block started: a block of its kind.
                if blocks.is_empty() {
                    let kind = match delta.get("type").and_then(Value::as_str) {
                        Some("input_json_delta") => "tool_use",
                        Some("thinking_delta" | "signature_delta") => "thinking",
                        _ => "text",
                    };
                    blocks.push(
                        json!({ "type": kind })
                            .as_object()
                            .cloned()
                            .unwrap_or_default(),
                    );
                    partial_json.push(String::new());
                }
                let (Some(block), Some(json)) = (blocks.last_mut(), partial_json.last_mut()) else {
                    continue;
                };
                for (piece, field) in [
                    ("text", "text"),
                    ("thinking", "thinking"),
                    ("signature", "signature"),
                ] {
                    if let Some(t) = delta.get(piece).and_then(Value::as_str) {
                        let kept = block.entry(field).or_insert_with(|| json!(""));
                        if let Value::String(s) = kept {
                            s.push_str(t);
                        }
                    }
                }
                if let Some(j) = delta.get("partial_json").and_then(Value::as_str) {
                    json.push_str(j);
                }
            }
            "message_delta" => {
                let m = message.get_or_insert_with(Map::new);
                if let Some(Value::Object(delta)) = e.get("delta") {
                    m.extend(delta.clone());
                }
                if let Some(Value::Object(usage)) = e.get("usage") {
                    if let Value::Object(u) = m.entry("usage").or_insert_with(|| json!({})) {
                        u.extend(usage.clone());
                    }
                }
            }
            _ => {}
        }
    }
    if message.is_none() && blocks.is_empty() {
        return None;
    }
    // A tool's input arrives as pieces of JSON text: whole, it is the input; cut off, it is
    // kept as the text that came.
    for (block, json) in blocks.iter_mut().zip(partial_json) {
        if !json.is_empty() {
            let input = serde_json::from_str(&json).unwrap_or(Value::String(json));
            block.insert("input".into(), input);
        }
    }
    let mut m = message.unwrap_or_default();
    m.insert(
        "content".into(),
        blocks.into_iter().map(Value::Object).collect(),
    );
    Some(Value::Object(m))
}
