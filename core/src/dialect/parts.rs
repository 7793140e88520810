//! What the three dialects share: a turn of a conversation as parts (text, a reminder an agent
//! added, a tool call, a tool's result, reasoning), read from content blocks, OpenAI's
//! `tool_calls` and Responses' items; and each part in words, cut to one line.

use serde::Serialize;
use serde_json::{Map, Value};

/// One part of a turn, uncut.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "part", rename_all = "kebab-case")]
pub enum Part {
    /// What a person, an agent or the model wrote.
    Text {
        /// The text.
        text: String,
    },
    /// Text an agent adds to a turn for the model alone, wrapped in a tag of its own (Claude
    /// Code's `<system-reminder>` blocks, Codex's `<environment_context>`): shown folded.
    Reminder {
        /// The text, tags and all.
        text: String,
    },
    /// A tool the model called.
    ToolCall {
        /// The call's id, which its result names.
        id: Option<String>,
        /// The tool.
        name: String,
        /// Its arguments, JSON as text.
        arguments: String,
    },
    /// What a tool gave back.
    ToolResult {
        /// The id of the call it answers.
        id: Option<String>,
        /// Its text.
        text: String,
        /// Whether the tool said it failed.
        error: bool,
    },
    /// The model's reasoning, where the answer shows it.
    Thinking {
        /// What it shows of it.
        text: String,
    },
    /// Anything else (an image, a document), by its type.
    Other {
        /// The block's type.
        of: String,
    },
}

/// One turn: who spoke (`system`, `user`, `assistant`, `tool`) and what they said.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Turn {
    /// The role.
    pub role: String,
    /// What was said, in order.
    pub parts: Vec<Part>,
}

impl Part {
    /// The part in words, its text cut to `max` characters on one line.
    pub fn words(&self, max: usize) -> String {
        match self {
            Part::Text { text } | Part::Reminder { text } => cut(text, max),
            Part::ToolCall {
                name, arguments, ..
            } => format!("tool call {name}({})", cut(arguments, max)),
            Part::ToolResult { text, .. } => format!("tool result: {}", cut(text, max)),
            Part::Thinking { .. } => "[thinking]".to_owned(),
            Part::Other { of } => format!("[{of}]"),
        }
    }
}

impl Turn {
    /// What the turn said in words, part after part.
    pub fn words(&self, max: usize) -> String {
        self.parts
            .iter()
            .map(|p| p.words(max))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

fn text_of(b: &Map<String, Value>, key: &str) -> Option<String> {
    b.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// Text, or a reminder when an agent wrapped it in a tag of its own, whole (Claude Code's
/// `<system-reminder>…</system-reminder>`, Codex's `<environment_context>…</environment_context>`).
fn text_part(text: String) -> Part {
    if is_wrapped(text.trim()) {
        Part::Reminder { text }
    } else {
        Part::Text { text }
    }
}

fn is_wrapped(text: &str) -> bool {
    let Some(name) = text
        .strip_prefix('<')
        .and_then(|rest| rest.split_once('>'))
        .map(|(name, _)| name)
    else {
        return false;
    };
    let named = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ' '));
    named && text.ends_with(&format!("</{name}>"))
}

/// The text of a tool's result: a string, or its blocks' texts.
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// One content block (or Responses output item) as a part.
pub(crate) fn block(b: &Map<String, Value>) -> Option<Part> {
    Some(match b.get("type").and_then(Value::as_str)? {
        "text" | "input_text" | "output_text" => text_part(text_of(b, "text")?),
        "tool_use" => Part::ToolCall {
            id: text_of(b, "id"),
            name: text_of(b, "name").unwrap_or_else(|| "?".to_owned()),
            arguments: b.get("input").map(Value::to_string).unwrap_or_default(),
        },
        "function_call" => tool_call(b, text_of(b, "call_id").or_else(|| text_of(b, "id"))),
        "tool_result" => Part::ToolResult {
            id: text_of(b, "tool_use_id"),
            text: result_text(b.get("content")),
            error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
        },
        "function_call_output" => Part::ToolResult {
            id: text_of(b, "call_id"),
            text: text_of(b, "output").unwrap_or_default(),
            error: false,
        },
        "thinking" => Part::Thinking {
            text: text_of(b, "thinking").unwrap_or_default(),
        },
        "reasoning" => Part::Thinking {
            text: result_text(b.get("summary")),
        },
        other => Part::Other {
            of: other.to_owned(),
        },
    })
}

/// A function call as OpenAI holds it: `name` and `arguments` (JSON text), named by `id`
/// (Responses' `call_id` on the item; Chat's `id` beside its `function`).
fn tool_call(f: &Map<String, Value>, id: Option<String>) -> Part {
    Part::ToolCall {
        id,
        name: text_of(f, "name").unwrap_or_else(|| "?".to_owned()),
        arguments: text_of(f, "arguments").unwrap_or_default(),
    }
}

/// OpenAI Chat's `tool_calls` of a message.
fn tool_calls(m: &Map<String, Value>) -> Vec<Part> {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .filter_map(|c| {
            let f = c.get("function").and_then(Value::as_object)?;
            Some(tool_call(f, text_of(c, "id")))
        })
        .collect()
}

/// Content blocks as parts.
pub(crate) fn blocks(list: &[Value]) -> Vec<Part> {
    list.iter()
        .filter_map(Value::as_object)
        .filter_map(block)
        .collect()
}

/// A message's content (a string, or blocks) and its Chat `tool_calls`, as parts.
pub(crate) fn content(m: &Map<String, Value>) -> Vec<Part> {
    let mut parts = match m.get("content") {
        Some(Value::String(s)) => vec![text_part(s.clone())],
        Some(Value::Array(list)) => blocks(list),
        _ => Vec::new(),
    };
    parts.extend(tool_calls(m));
    parts
}

/// A message (or Responses input item) as a turn: a Chat `tool` message is one result; an item
/// with no role is the model's (a call, reasoning) or a tool's (a call's output).
pub(crate) fn turn(m: &Map<String, Value>) -> Turn {
    let role = m.get("role").and_then(Value::as_str).unwrap_or("");
    let item = m.get("type").and_then(Value::as_str);
    if role == "tool" {
        let text = result_text(m.get("content"));
        return Turn {
            role: role.to_owned(),
            parts: vec![Part::ToolResult {
                id: text_of(m, "tool_call_id"),
                text,
                error: false,
            }],
        };
    }
    match (role, item) {
        ("", Some("message")) | ("", None) => Turn {
            role: "user".to_owned(),
            parts: content(m),
        },
        ("", Some(_)) => {
            let part = block(m).into_iter().collect::<Vec<_>>();
            let role = match part.first() {
                Some(Part::ToolResult { .. }) => "tool",
                _ => "assistant",
            };
            Turn {
                role: role.to_owned(),
                parts: part,
            }
        }
        (role, _) => Turn {
            role: role.to_owned(),
            parts: content(m),
        },
    }
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
