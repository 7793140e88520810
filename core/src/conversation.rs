//! What a model call said: its request's turns and the model's answer as a turn, read from the
//! bodies as the providers' APIs shape them, streamed or not (the conversation the web view
//! draws); and in words, what was new in its request (the last turn: a person's or agent's
//! message, or the results of tools) and what the model answered, short, for people reading a
//! run's calls. The bodies themselves are kept whole.

use crate::dialect::parts::{blocks, turn};
use crate::dialect::{Dialect, Input};
use crate::model_call::ModelApi;
use serde_json::Value;

pub use crate::dialect::parts::{Part, Turn};

/// The longest a piece of text is shown before it is cut.
const SHOWN: usize = 200;

/// Every turn of a request in order, uncut: the system prompt first when there is one
/// (Anthropic's `system`, Responses' `instructions`), then its messages or input items.
pub fn turns(api: ModelApi, request: &[u8]) -> Vec<Turn> {
    let (system, mut said) = split(api, request);
    if !system.is_empty() {
        said.insert(
            0,
            Turn {
                role: "system".to_owned(),
                parts: system,
            },
        );
    }
    said
}

/// A request's system prompt, and its messages or input items as turns.
fn split(api: ModelApi, request: &[u8]) -> (Vec<Part>, Vec<Turn>) {
    let Ok(Value::Object(o)) = serde_json::from_slice::<Value>(request) else {
        return (Vec::new(), Vec::new());
    };
    let system = match o.get("system").or_else(|| o.get("instructions")) {
        Some(Value::String(s)) if !s.is_empty() => vec![Part::Text { text: s.clone() }],
        Some(Value::Array(list)) => blocks(list),
        _ => Vec::new(),
    };
    let said = match Dialect::of(api).map(|d| d.input(&o)) {
        Some(Input::Text(s)) => vec![Turn {
            role: "user".to_owned(),
            parts: vec![Part::Text { text: s.to_owned() }],
        }],
        Some(Input::Items(items)) => items
            .iter()
            .filter_map(Value::as_object)
            .map(turn)
            .collect(),
        _ => Vec::new(),
    };
    (system, said)
}

/// The model's answer as the turns of the assistant's its agent sends back (a stream put
/// together first); none when the body is not an answer of the API.
pub fn reply_turns(api: ModelApi, response: &[u8], streamed: bool) -> Vec<Turn> {
    let whole = if streamed {
        crate::dialect::assembled(api, response)
    } else {
        serde_json::from_str::<Value>(String::from_utf8_lossy(response).trim()).ok()
    };
    match (Dialect::of(api), whole) {
        (Some(dialect), Some(Value::Object(o))) => dialect.answer_turns(&o),
        _ => Vec::new(),
    }
}

/// Turns in words, one after the other.
fn words_of(turns: &[Turn], max: usize) -> String {
    turns
        .iter()
        .map(|t| t.words(max))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// The last turn of a request (a person's or agent's message, or the results of tools), in
/// words.
pub fn asked(api: ModelApi, request: &[u8]) -> String {
    let (_, said) = split(api, request);
    let Some(last) = said.last() else {
        return String::new();
    };
    let said = last.words(SHOWN);
    match last.role.as_str() {
        // A tool's result says so itself.
        "user" | "tool" => said,
        role => format!("{role}: {said}"),
    }
}

/// What the model answered: its text and the tools it called, in words.
pub fn answered(api: ModelApi, response: &[u8], streamed: bool) -> String {
    words_of(&reply_turns(api, response, streamed), SHOWN)
}

/// Every turn of a request in order, each as its role and all it said in words (uncut).
pub fn messages(api: ModelApi, request: &[u8]) -> Vec<(String, String)> {
    turns(api, request)
        .into_iter()
        .map(|t| {
            let said = t.words(usize::MAX);
            (t.role, said)
        })
        .collect()
}

/// What the model answered, in words (uncut).
pub fn reply(api: ModelApi, response: &[u8], streamed: bool) -> String {
    words_of(&reply_turns(api, response, streamed), usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::{answered, asked, messages, reply, reply_turns, turns, Part};
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
    fn a_claude_code_turn_keeps_its_reminders_apart_and_an_answer_is_the_turn_sent_back() {
        let request = br#"{"system":[{"type":"text","text":"You are Claude Code"}],"messages":[
            {"role":"user","content":[{"type":"text","text":"<system-reminder>\nAs you answer, use the context\n</system-reminder>"},
                                      {"type":"text","text":"write hello.txt"}]}]}"#;
        let said = turns(ModelApi::Messages, request);
        assert_eq!(said.len(), 2);
        assert_eq!(said[0].role, "system");
        assert!(
            matches!(&said[1].parts[0], Part::Reminder { text } if text.contains("use the context"))
        );
        assert_eq!(
            said[1].parts[1],
            Part::Text {
                text: "write hello.txt".into()
            }
        );
        assert_eq!(
            asked(ModelApi::Messages, request),
            "<system-reminder> As you answer, use the context </system-reminder>; write hello.txt"
        );
        let answer = br#"{"content":[{"type":"text","text":"Writing it."},{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/w/hello.txt","content":"hello"}}]}"#;
        let reply = reply_turns(ModelApi::Messages, answer, false).remove(0);
        assert_eq!(
            reply.parts[1],
            Part::ToolCall {
                id: Some("t1".into()),
                name: "Write".into(),
                arguments: r#"{"content":"hello","file_path":"/w/hello.txt"}"#.into()
            }
        );
        // The next request sends the answer back, then the tool's result, which names its call.
        let next = br#"{"messages":[{"role":"user","content":"write hello.txt"},
            {"role":"assistant","content":[{"type":"text","text":"Writing it."},{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/w/hello.txt","content":"hello"}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"File created","is_error":false}]}]}"#;
        let said = turns(ModelApi::Messages, next);
        assert_eq!(said[1], reply);
        assert_eq!(
            said[2].parts,
            [Part::ToolResult {
                id: Some("t1".into()),
                text: "File created".into(),
                error: false
            }]
        );
    }

    #[test]
    fn a_responses_answer_is_a_turn_per_output_item_as_codex_sends_them_back() {
        let answer = br#"{"output":[{"type":"reasoning","summary":[{"type":"summary_text","text":"run it"}]},
            {"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}]}"#;
        let reply = reply_turns(ModelApi::Responses, answer, false);
        let next = br#"{"instructions":"be brief","input":[
            {"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]},
            {"type":"reasoning","summary":[{"type":"summary_text","text":"run it"}]},
            {"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},
            {"type":"function_call_output","call_id":"c1","output":"a.py"}]}"#;
        let said = turns(ModelApi::Responses, next);
        assert_eq!(said[2..4], reply[..], "sent back as answered");
        assert!(
            matches!(&said[1].parts[0], Part::Reminder { .. }),
            "{:?}",
            said[1]
        );
        assert_eq!(said[4].role, "tool");
        assert_eq!(asked(ModelApi::Responses, next), "tool result: a.py");
        assert_eq!(
            answered(ModelApi::Responses, answer, false),
            "[thinking]; tool call exec_command({\"cmd\":\"ls\"})"
        );
    }

    #[test]
    fn bodies_that_are_not_the_apis_read_as_nothing() {
        assert_eq!(asked(ModelApi::Messages, b"\xff not json"), "");
        assert_eq!(answered(ModelApi::Messages, b"", true), "");
        assert_eq!(answered(ModelApi::Responses, b"[1,2]", false), "");
    }
}
