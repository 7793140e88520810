//! What the three dialects share in words: a content block (text, a tool call, a tool's
//! result), OpenAI's `tool_calls`, and text cut to one line.

use serde_json::{Map, Value};

/// One content block in words.
pub(crate) fn block(b: &Map<String, Value>, max: usize) -> Option<String> {
    let text = |key: &str| b.get(key).and_then(Value::as_str).map(|t| cut(t, max));
    match b.get("type").and_then(Value::as_str)? {
        "text" | "input_text" | "output_text" => text("text"),
        "tool_use" => Some(tool_call(
            b,
            &b.get("input").map(Value::to_string).unwrap_or_default(),
            max,
        )),
        "tool_result" => {
            let content = match b.get("content") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            };
            Some(format!("tool result: {}", cut(&content, max)))
        }
        other => Some(format!("[{other}]")),
    }
}

/// OpenAI Chat's `tool_calls` of a message, in words.
pub(crate) fn tool_calls(m: &Map<String, Value>, max: usize) -> Vec<String> {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("function").and_then(Value::as_object))
        .map(|f| tool_call(f, arguments(f), max))
        .collect()
}

/// A tool call in words: the `name` that `call` holds and its `arguments`, cut.
pub(crate) fn tool_call(call: &Map<String, Value>, arguments: &str, max: usize) -> String {
    let name = call.get("name").and_then(Value::as_str).unwrap_or("?");
    format!("tool call {name}({})", cut(arguments, max))
}

/// A call's `arguments`, JSON as text (OpenAI's).
pub(crate) fn arguments(call: &Map<String, Value>) -> &str {
    call.get("arguments")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Content blocks in words, each cut to `max` characters.
pub(crate) fn blocks(list: &[Value], max: usize) -> Vec<String> {
    list.iter()
        .filter_map(Value::as_object)
        .filter_map(|b| block(b, max))
        .collect()
}

/// `text` on one line, cut to `max` characters.
pub(crate) fn cut(text: &str, max: usize) -> String {
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let kept: String = one_line.chars().take(max).collect();
    format!("{kept}…")
}
