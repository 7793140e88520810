//! A streamed answer put back together as the message the provider would have answered whole:
//! Anthropic's `message` with its content blocks, Chat Completions' `chat.completion` with its
//! first choice's text and tool calls, and the response a Responses stream closes with. Kept
//! beside the raw events of a streamed call, and what its words are read from.

use crate::model_call::ModelApi;
use serde_json::{json, Map, Value};

/// The whole answer a stream of server-sent events adds up to; none when it holds no event of
/// the API (an error answered as JSON, say).
pub fn assembled(api: ModelApi, stream: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(stream);
    let events = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| match serde_json::from_str::<Value>(d.trim()) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        });
    match api {
        ModelApi::Messages | ModelApi::CountTokens => message(events),
        ModelApi::ChatCompletions => completion(events),
        ModelApi::Responses => events
            .filter(|e| {
                matches!(
                    kind(e),
                    "response.completed" | "response.failed" | "response.incomplete"
                )
            })
            .filter_map(|e| e.get("response").cloned())
            .next_back(),
        ModelApi::Models => None,
    }
}

fn kind(e: &Map<String, Value>) -> &str {
    e.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Anthropic: `message_start`'s message, each block from its start and deltas, the stop reason
/// and output usage from `message_delta`.
fn message(events: impl Iterator<Item = Map<String, Value>>) -> Option<Value> {
    let mut message: Option<Map<String, Value>> = None;
    let mut blocks: Vec<Map<String, Value>> = Vec::new();
    let mut partial_json: Vec<String> = Vec::new();
    for e in events {
        match kind(&e) {
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
fn completion(events: impl Iterator<Item = Map<String, Value>>) -> Option<Value> {
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

#[cfg(test)]
mod tests {
    use super::assembled;
    use crate::model_call::ModelApi;
    use serde_json::json;

    #[test]
    fn an_anthropic_stream_is_the_message_it_would_have_answered_whole() {
        let stream = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n\
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Writing \"}}\n\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"it.\"}}\n\n\
data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Write\",\"input\":{}}}\n\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"file_path\\\":\"}}\n\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"a.py\\\"}\"}}\n\n\
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":42}}\n\n\
data: {\"type\":\"message_stop\"}\n\n";
        assert_eq!(
            assembled(ModelApi::Messages, stream.as_bytes()),
            Some(json!({
                "id": "msg_1", "role": "assistant", "model": "claude-x",
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 10, "output_tokens": 42},
                "content": [
                    {"type": "text", "text": "Writing it."},
                    {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "a.py"}},
                ],
            }))
        );
    }

    #[test]
    fn a_chat_stream_is_its_completion_with_tool_calls_put_together_by_index() {
        let stream = "data: {\"id\":\"c1\",\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hel\"}}]}\n\n\
data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"}}]}\n\n\
data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"ls\",\"arguments\":\"{\\\"di\"}}]}}]}\n\n\
data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"r\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n\
data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2}}\n\n\
data: [DONE]\n\n";
        assert_eq!(
            assembled(ModelApi::ChatCompletions, stream.as_bytes()),
            Some(json!({
                "id": "c1", "model": "gpt-x", "object": "chat.completion",
                "usage": {"prompt_tokens": 5, "completion_tokens": 2},
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": "Hello",
                    "tool_calls": [{"id": "call_1", "type": "function",
                                    "function": {"name": "ls", "arguments": "{\"dir\":1}"}}],
                }}],
            }))
        );
    }

    #[test]
    fn a_responses_stream_is_the_response_it_closes_with_and_no_stream_is_nothing() {
        let stream = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"status\":\"in_progress\"}}\n\n\
event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"output\":[]}}\n\n";
        assert_eq!(
            assembled(ModelApi::Responses, stream.as_bytes()),
            Some(json!({"id": "r", "status": "completed", "output": []}))
        );
        assert_eq!(assembled(ModelApi::Messages, b"{\"type\":\"error\"}"), None);
        assert_eq!(assembled(ModelApi::ChatCompletions, b""), None);
    }
}
