//! Each model API runlog speaks, in one place: Anthropic Messages ([`anthropic`]), OpenAI Chat
//! Completions ([`chat`]) and OpenAI Responses ([`responses`]). A dialect knows the route of its
//! calls, the events that close its stream, how its stream adds up to the answer it would have
//! given whole, where a streamed event carries text (a rerun's answers are mapped there), where
//! a request's turns are and what an answer's parts say. What they share (a turn's parts, and
//! each in words) is in [`parts`]; the usage each reports is read by `crate::usage`, beside the agents' own reports.

mod anthropic;
mod chat;
pub(crate) mod parts;
mod responses;

use crate::model_call::ModelApi;
use serde_json::{Map, Value};

/// A step into a JSON value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

pub(crate) fn key(k: &str) -> Seg {
    Seg::Key(k.to_owned())
}

/// Where a streamed event carries a piece of a block's text: the block it belongs to, the way to
/// the text, and whether that text is JSON (a tool call's arguments, in pieces).
pub(crate) type TextAt = (String, Vec<Seg>, bool);

/// A request's turns as its dialect holds them.
#[derive(Debug)]
pub(crate) enum Input<'a> {
    /// Messages, or input items.
    Items(&'a [Value]),
    /// One text (Responses' `input` as a string).
    Text(&'a str),
    /// None there.
    Nothing,
}

/// An event's `type`.
fn kind(event: &Value) -> &str {
    event.get("type").and_then(Value::as_str).unwrap_or("")
}

/// The dialects, by the API a call spoke (the model list has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// Anthropic Messages (and its token count).
    Anthropic,
    /// OpenAI Chat Completions.
    Chat,
    /// OpenAI Responses.
    Responses,
}

impl Dialect {
    const ALL: [Dialect; 3] = [Dialect::Anthropic, Dialect::Chat, Dialect::Responses];

    pub(crate) fn of(api: ModelApi) -> Option<Dialect> {
        match api {
            ModelApi::Messages | ModelApi::CountTokens => Some(Dialect::Anthropic),
            ModelApi::ChatCompletions => Some(Dialect::Chat),
            ModelApi::Responses => Some(Dialect::Responses),
            ModelApi::Models => None,
        }
    }

    fn closing(self) -> &'static [&'static str] {
        match self {
            Dialect::Anthropic => anthropic::CLOSING,
            Dialect::Chat => chat::CLOSING,
            Dialect::Responses => responses::CLOSING,
        }
    }

    fn assemble(self, events: Vec<Map<String, Value>>) -> Option<Value> {
        match self {
            Dialect::Anthropic => anthropic::assemble(events),
            Dialect::Chat => chat::assemble(events),
            Dialect::Responses => responses::assemble(events),
        }
    }

    /// Where a streamed event carries text.
    pub(crate) fn text_at(self, event: &Value) -> Vec<TextAt> {
        match self {
            Dialect::Anthropic => anthropic::text_at(event),
            Dialect::Chat => chat::text_at(event),
            Dialect::Responses => responses::text_at(event),
        }
    }

    /// A request's turns.
    pub(crate) fn input(self, request: &Map<String, Value>) -> Input<'_> {
        match self {
            Dialect::Anthropic => anthropic::input(request),
            Dialect::Chat => chat::input(request),
            Dialect::Responses => responses::input(request),
        }
    }

    /// What a whole answer says, as the turns the agent sends back with its next request: one
    /// assistant message (Anthropic, Chat), or one per output item (Responses).
    pub(crate) fn answer_turns(self, whole: &Map<String, Value>) -> Vec<parts::Turn> {
        let said = |parts| {
            vec![parts::Turn {
                role: "assistant".to_owned(),
                parts,
            }]
        };
        match self {
            Dialect::Anthropic => said(anthropic::answer_parts(whole)),
            Dialect::Chat => said(chat::answer_parts(whole)),
            Dialect::Responses => responses::answer_turns(whole),
        }
    }
}

/// The API a request speaks, from its method and path (a query such as `?beta=true` aside).
pub fn api_of(method: &str, path: &str) -> Option<ModelApi> {
    match (method, path.trim_end_matches('/')) {
        ("POST", "/v1/messages") => Some(ModelApi::Messages),
        ("POST", "/v1/messages/count_tokens") => Some(ModelApi::CountTokens),
        ("POST", "/v1/chat/completions") => Some(ModelApi::ChatCompletions),
        ("POST", "/v1/responses") => Some(ModelApi::Responses),
        ("GET", "/v1/models") => Some(ModelApi::Models),
        _ => None,
    }
}

/// The whole answer a stream of server-sent events adds up to, as `api` would have answered
/// it whole: Anthropic's `message` with its content blocks, Chat Completions'
/// `chat.completion` with its first choice's text and tool calls, the response a Responses
/// stream closes with; none when it holds no event of the API (an error answered as JSON, say).
pub fn assembled(api: ModelApi, stream: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(stream);
    let events = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| match serde_json::from_str::<Value>(d.trim()) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        })
        .collect();
    Dialect::of(api)?.assemble(events)
}

/// Whether a piece of a streamed answer holds the event that closes its stream (any
/// dialect's): the gateway holds that piece back until the call is recorded, and passes every
/// other at once.
pub fn closes_stream(piece: &[u8]) -> bool {
    let text = String::from_utf8_lossy(piece);
    text.lines().any(|line| {
        let line = line.trim_end();
        Dialect::ALL.iter().any(|d| d.closing().contains(&line))
    })
}

#[cfg(test)]
mod tests {
    use super::{assembled, closes_stream};
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

    #[test]
    fn each_providers_closing_event_closes_its_stream_and_nothing_else_does() {
        for closing in [
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
            "data: {\"choices\":[]}\n\ndata: [DONE]\n\n",
            "event: response.completed\ndata: {}\n\n",
        ] {
            assert!(closes_stream(closing.as_bytes()), "{closing}");
        }
        for not_closing in [
            "event: message_start\ndata: {}\n\n",
            "data: {\"delta\":{\"text\":\"event: message_stop\"}}\n\n",
            "event: response.output_text.delta\ndata: {}\n\n",
        ] {
            assert!(!closes_stream(not_closing.as_bytes()), "{not_closing}");
        }
    }
}
