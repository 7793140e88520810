//! What a model call said, in words: what was new in its request (the last turn: a person's
//! or agent's message, or the results of tools) and what the model answered (text and tool
//! calls), read from the bodies as the providers' APIs shape them, streamed or not. Short, for
//! people reading a run's calls; the bodies themselves are kept whole.

use crate::dialect::words::{blocks, cut, tool_calls};
use crate::dialect::{Dialect, Input};
use crate::model_call::ModelApi;
use serde_json::{Map, Value};

/// The longest a piece of text is shown before it is cut.
const SHOWN: usize = 200;

/// The last turn of a request: its last message (or Responses' last input item), in words.
pub fn asked(api: ModelApi, request: &[u8]) -> String {
    let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(request) else {
        return String::new();
    };
    let last = match Dialect::of(api).map(|d| d.input(&o)) {
        Some(Input::Text(s)) => return cut(s, SHOWN),
        Some(Input::Items(items)) => items.last(),
        _ => None,
    };
    last.and_then(Value::as_object)
        .map(|m| message(m, SHOWN))
        .unwrap_or_default()
}

/// What the model answered: its text and the tools it called, in words.
pub fn answered(api: ModelApi, response: &[u8], streamed: bool) -> String {
    reply_cut(api, response, streamed, SHOWN)
}

/// Every message of a request in order, each as its role and all it said in words (uncut): the
/// system prompt first when there is one (Anthropic's `system`, Responses' `instructions`).
pub fn messages(api: ModelApi, request: &[u8]) -> Vec<(String, String)> {
    let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(request) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let system = match o.get("system").or_else(|| o.get("instructions")) {
        Some(Value::String(s)) => cut(s, usize::MAX),
        Some(Value::Array(list)) => blocks(list, usize::MAX).join("\n"),
        _ => String::new(),
    };
    if !system.is_empty() {
        out.push(("system".to_owned(), system));
    }
    let items = match Dialect::of(api).map(|d| d.input(&o)) {
        Some(Input::Text(s)) => {
            out.push(("user".to_owned(), cut(s, usize::MAX)));
            return out;
        }
        Some(Input::Items(items)) => items,
        _ => return out,
    };
    out.extend(items.iter().filter_map(Value::as_object).map(|m| {
        let (role, said) = said(m, usize::MAX);
        let role = match (role.as_str(), m.get("type").and_then(Value::as_str)) {
            ("", Some("function_call_output")) => "tool".to_owned(),
            ("", Some(_)) => "assistant".to_owned(),
            ("", None) => "user".to_owned(),
            _ => role,
        };
        (role, said)
    }));
    out
}

/// What the model answered, in words (uncut).
pub fn reply(api: ModelApi, response: &[u8], streamed: bool) -> String {
    reply_cut(api, response, streamed, usize::MAX)
}

fn reply_cut(api: ModelApi, response: &[u8], streamed: bool, max: usize) -> String {
    let whole = if streamed {
        crate::dialect::assembled(api, response)
    } else {
        serde_json::from_str::<Value>(String::from_utf8_lossy(response).trim()).ok()
    };
    match (Dialect::of(api), whole) {
        (Some(dialect), Some(Value::Object(o))) => dialect.answer_parts(&o, max).join("; "),
        _ => String::new(),
    }
}

/// A message (or input item) in words: its text, tool calls and tool results.
fn message(m: &Map<String, Value>, max: usize) -> String {
    let (role, said) = said(m, max);
    match role.as_str() {
        // A tool's result says so itself.
        "" | "user" | "tool" => said,
        role => format!("{role}: {said}"),
    }
}

/// A message's role and what it said: its text, tool calls and tool results.
fn said(m: &Map<String, Value>, max: usize) -> (String, String) {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    let mut parts = Vec::new();
    match m.get("content") {
        Some(Value::String(s)) => parts.push(cut(s, max)),
        Some(Value::Array(list)) => parts.extend(blocks(list, max)),
        _ => {}
    }
    // OpenAI's tool results and calls stand beside the content.
    if role == "tool" || m.get("type").and_then(Value::as_str) == Some("function_call_output") {
        let output = m.get("output").and_then(Value::as_str).unwrap_or_default();
        let result = if parts.is_empty() {
            output.to_owned()
        } else {
            parts.join(" ")
        };
        return (
            role.to_owned(),
            format!("tool result: {}", cut(&result, max)),
        );
    }
    parts.extend(tool_calls(m, max));
    (role.to_owned(), parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::{answered, asked, messages, reply};
    use crate::model_call::ModelApi;

    #[test]
    fn an_anthropic_turn_of_tool_results_and_a_streamed_tool_call_read_as_words() {
        let request = br#"{"model":"m","messages":[
            {"role":"user","content":"fix the test"},
            {"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"pytest"}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"2 failed,\n 3 passed"}]}]}"#;
        assert_eq!(
            asked(ModelApi::Messages, request),
            "tool result: 2 failed, 3 passed"
        );
        let stream = "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Writing \"}}\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"it.\"}}\n\
data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"name\":\"Write\",\"input\":{}}}\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"file_path\\\":\"}}\n\
data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"a.py\\\"}\"}}\n";
        assert_eq!(
            answered(ModelApi::Messages, stream.as_bytes(), true),
            "Writing it.; tool call Write({\"file_path\":\"a.py\"})"
        );
    }

    #[test]
    fn openai_chat_and_responses_read_as_words() {
        let request = br#"{"messages":[{"role":"system","content":"be brief"},{"role":"tool","tool_call_id":"c","content":"ok"}]}"#;
        assert_eq!(asked(ModelApi::ChatCompletions, request), "tool result: ok");
        let answer = br#"{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}}]}}]}"#;
        assert_eq!(
            answered(ModelApi::ChatCompletions, answer, false),
            "tool call exec_command({\"cmd\":\"ls\"})"
        );
        let stream = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"}}]}\n\ndata: [DONE]\n\n";
        assert_eq!(
            answered(ModelApi::ChatCompletions, stream.as_bytes(), true),
            "Hello"
        );
        assert_eq!(
            asked(ModelApi::Responses, br#"{"input":"list the files"}"#),
            "list the files"
        );
        let done = "data: {\"type\":\"response.completed\",\"response\":{\"output\":[{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"done\"}]}]}}\n\n";
        assert_eq!(answered(ModelApi::Responses, done.as_bytes(), true), "done");
    }

    #[test]
    fn a_request_s_messages_come_whole_with_their_roles_and_the_system_prompt_first() {
        let long = "word ".repeat(100);
        let request = format!(
            r#"{{"system":[{{"type":"text","text":"be careful"}}],"messages":[
            {{"role":"user","content":"{long}"}},
            {{"role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"Bash","input":{{"command":"ls"}}}}]}},
            {{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"a.py"}}]}}]}}"#
        );
        let said = messages(ModelApi::Messages, request.as_bytes());
        let roles: Vec<&str> = said.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(roles, ["system", "user", "assistant", "user"]);
        assert_eq!(said[1].1, long.trim(), "uncut");
        assert_eq!(said[2].1, "tool call Bash({\"command\":\"ls\"})");
        assert_eq!(said[3].1, "tool result: a.py");
        let responses = br#"{"instructions":"be brief","input":[{"role":"user","content":"hi"},{"type":"function_call_output","call_id":"c","output":"done"}]}"#;
        assert_eq!(
            messages(ModelApi::Responses, responses),
            [
                ("system".to_owned(), "be brief".to_owned()),
                ("user".to_owned(), "hi".to_owned()),
                ("tool".to_owned(), "tool result: done".to_owned())
            ]
        );
        let answer = br#"{"content":[{"type":"text","text":"all done"}]}"#;
        assert_eq!(reply(ModelApi::Messages, answer, false), "all done");
    }

    #[test]
    fn bodies_that_are_not_the_apis_read_as_nothing() {
        assert_eq!(asked(ModelApi::Messages, b"\xff not json"), "");
        assert_eq!(answered(ModelApi::Messages, b"", true), "");
        assert_eq!(answered(ModelApi::Responses, b"[1,2]", false), "");
    }
}
