//! OpenAI Chat Completions (`POST /v1/chat/completions`): messages with `tool_calls`, a stream
//! of `chat.completion.chunk`s whose deltas add up by choice and tool call index, closed by
//! `data: [DONE]`.

use super::parts::{content, Part};
use super::{key, Input, Seg, TextAt};
use serde_json::{json, Map, Value};

/// The line of the event that closes a stream.
pub(super) const CLOSING: &[&str] = &["data: [DONE]"];

/// Where a chunk carries a piece of text: each choice's content, and each tool call's
/// arguments (JSON text).
pub(super) fn text_at(event: &Value) -> Vec<TextAt> {
    let mut found = Vec::new();
    let choices = event.get("choices").and_then(Value::as_array);
    for (c, choice) in choices.into_iter().flatten().enumerate() {
        let index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
        let delta = choice.get("delta");
        if delta
            .and_then(|d| d.get("content"))
            .is_some_and(Value::is_string)
        {
            found.push((
                format!("{index}:content"),
                vec![key("choices"), Seg::Index(c), key("delta"), key("content")],
                false,
            ));
        }
        let calls = delta
            .and_then(|d| d.get("tool_calls"))
            .and_then(Value::as_array);
        for (t, call) in calls.into_iter().flatten().enumerate() {
            let arguments = call.get("function").and_then(|f| f.get("arguments"));
            if arguments.is_some_and(Value::is_string) {
                let n = call.get("index").and_then(Value::as_u64).unwrap_or(0);
                found.push((
                    format!("{index}:tool:{n}"),
                    vec![
                        key("choices"),
                        Seg::Index(c),
                        key("delta"),
                        key("tool_calls"),
                        Seg::Index(t),
                        key("function"),
                        key("arguments"),
                    ],
                    true,
                ));
            }
        }
    }
    found
}

/// A request's turns: its messages.
pub(super) fn input(request: &Map<String, Value>) -> Input<'_> {
    match request.get("messages") {
        Some(Value::Array(m)) => Input::Items(m),
        _ => Input::Nothing,
    }
}

/// A whole answer's parts: its first choice's text and tool calls.
pub(super) fn answer_parts(whole: &Map<String, Value>) -> Vec<Part> {
    let Some(m) = whole
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("message"))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    content(m)
}

/// One of Chat Completions' tool calls, put together from its pieces.
#[derive(Default)]
struct ToolCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Chat Completions: the first choice's text and tool calls (each put together by its index),
/// its finish reason, and the usage the last chunk carries.
pub(super) fn assemble(events: Vec<Map<String, Value>>) -> Option<Value> {
    let mut head: Option<Map<String, Value>> = None;
    let mut content: Option<String> = None;
    let mut tools: Vec<ToolCall> = Vec::new();
    let mut finish = Value::Null;
    for e in events {
        let h = head.get_or_insert_with(|| {
            e.iter()
                .filter(|(k, _)| matches!(k.as_str(), "id" | "created" | "model"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        });
        if let Some(usage) = e.get("usage").filter(|u| u.is_object()) {
            h.insert("usage".into(), usage.clone());
        }
        let Some(choice) = e
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            continue;
        };
        if let Some(f) = choice.get("finish_reason").filter(|f| !f.is_null()) {
            finish = f.clone();
        }
        let delta = choice.get("delta");
        if let Some(t) = delta.and_then(|d| d.get("content")).and_then(Value::as_str) {
            content.get_or_insert_with(String::new).push_str(t);
        }
        for call in delta
            .and_then(|d| d.get("tool_calls"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
            let at = match tools.iter().position(|t| t.index == index) {
                Some(at) => at,
                None => {
                    tools.push(ToolCall {
                        index,
                        ..ToolCall::default()
                    });
                    tools.len() - 1
                }
            };
            let Some(tool) = tools.get_mut(at) else {
                continue;
            };
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                tool.id = id.to_owned();
            }
            let f = call.get("function");
            let piece = |key: &str| f.and_then(|f| f.get(key)).and_then(Value::as_str);
            tool.name.push_str(piece("name").unwrap_or_default());
            tool.arguments
                .push_str(piece("arguments").unwrap_or_default());
        }
    }
    let mut whole = head?;
    let mut message = Map::new();
    message.insert("role".into(), json!("assistant"));
    message.insert("content".into(), json!(content));
    if !tools.is_empty() {
        let calls = tools.into_iter().map(|t| {
            json!({"id": t.id, "type": "function",
                   "function": {"name": t.name, "arguments": t.arguments}})
        });
        message.insert("tool_calls".into(), calls.collect());
    }
    whole.insert("object".into(), json!("chat.completion"));
    whole.insert(
        "choices".into(),
        json!([{"index": 0, "message": message, "finish_reason": finish}]),
    );
    Some(Value::Object(whole))
}
