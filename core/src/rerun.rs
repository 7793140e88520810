//! Running a recorded run again (`runlog rerun`): what a rerun is (the `rerun-started`
//! event's record), where its model calls' answers come from, and when a call of the rerun is
//! the recorded one. A call is answered from the recording when it asks what the recorded call
//! asked; the first one that does not is the attempt's divergence, said in words.
//!
//! Two requests are compared after [`normalise`], which takes out what an agent puts in a
//! request that changes from one run to the next without changing the question: the run's own
//! id (in its worktree paths and branch names), dates and times, ids of tool calls and
//! messages, cache markers and request metadata.

use crate::ids::{RunId, TaskId};
use crate::spec::TaskSpec;
use crate::usage::UsageStage;
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a rerun's model calls are answered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Answers {
    /// Every call from the recording; a call that differs is refused and stops its attempt.
    Recorded,
    /// Every call from the provider, as in any run.
    Live,
    /// From the recording until a call differs; that call and the command's later ones go to
    /// the provider.
    RecordedThenLive,
}

impl Answers {
    /// The kebab-case name.
    pub fn name(self) -> &'static str {
        match self {
            Answers::Recorded => "recorded",
            Answers::Live => "live",
            Answers::RecordedThenLive => "recorded-then-live",
        }
    }
}

/// A task the rerun runs again from where it stood at the rerun's point, though the run it
/// was forked from went on past it.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct RerunTask {
    /// The task.
    pub task: TaskId,
    /// The commit its code starts from (in a git workspace).
    pub commit: Option<String>,
    /// How many attempts the rerun's numbering is ahead of the recording's: its next attempt
    /// is answered by the recorded attempt that many below it.
    pub attempts_ahead: u32,
}

/// A rerun (the `rerun-started` event's record), recorded right after its fork.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Rerun {
    /// The recorded run whose calls answer this one's.
    pub from_run: RunId,
    /// The seq of that run it re-executes from.
    pub from_seq: u64,
    /// Where answers come from.
    pub answers: Answers,
    /// Tasks run again from `from_seq` though the fork holds them further on (`--task`, or
    /// running at `from_seq`).
    pub tasks: Vec<RerunTask>,
    /// Tasks whose spec a workflow file given to the rerun changes (same ids, same order of
    /// work): their commands, tests and evaluators from then on.
    pub specs: Vec<TaskSpec>,
}

impl Rerun {
    /// The recorded attempt that answers `attempt` of `task` in the rerun.
    pub fn recorded_attempt(&self, task: &TaskId, attempt: u32) -> u32 {
        let ahead = self
            .tasks
            .iter()
            .find(|t| &t.task == task)
            .map_or(0, |t| t.attempts_ahead);
        attempt.saturating_sub(ahead)
    }
}

/// A call of a rerun that did not ask what the recording asked (the `call-diverged` event's
/// record): which call, which recorded call it was compared with, and how it differs.
#[derive(Debug, Clone, PartialEq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Divergence {
    /// The task.
    pub task: TaskId,
    /// The rerun's attempt.
    pub attempt: u32,
    /// Which command.
    pub stage: UsageStage,
    /// The call's number among the command's calls, from 1.
    pub n: u32,
    /// The seq of the recorded call it was compared with, in the run rerun (none when the
    /// recording has no call that far).
    pub recorded_seq: Option<u64>,
    /// How it differs, in words.
    pub why: String,
    /// Whether the call went to the provider (`recorded-then-live`) or was refused.
    pub live: bool,
}

impl Divergence {
    /// `implement attempt 2, call 7: the tool result differs: now "2 failed", was "0 failed"`.
    pub fn describe(&self) -> String {
        let command = match self.stage {
            UsageStage::Agent => String::new(),
            other => format!(" ({})", other.name()),
        };
        format!(
            "{} attempt {}{command}, call {}: {}",
            self.task, self.attempt, self.n, self.why
        )
    }
}

/// What a recorded call was, as far as matching goes.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    /// The provider's name.
    pub provider: &'a str,
    /// The API's name.
    pub api: &'a str,
    /// The request's body.
    pub body: &'a [u8],
}

/// How a rerun's call differs from the recorded one, in words; `None` when it asks the same.
/// `rename` is (the rerun's id, the recorded run's id): the rerun's id in its request is read
/// as the recorded run's.
pub fn differs(now: Asked<'_>, was: Asked<'_>, rename: (&str, &str)) -> Option<String> {
    if now.provider != was.provider || now.api != was.api {
        return Some(format!(
            "it goes to {} {}, the recording's went to {} {}",
            now.provider, now.api, was.provider, was.api
        ));
    }
    let now_text = String::from_utf8_lossy(now.body).replace(rename.0, rename.1);
    let was_text = String::from_utf8_lossy(was.body);
    let (Ok(now_json), Ok(was_json)) = (
        serde_json::from_str::<Value>(&now_text),
        serde_json::from_str::<Value>(&was_text),
    ) else {
        return (normalise_text(&now_text) != normalise_text(&was_text))
            .then(|| "the request differs (not JSON)".to_owned());
    };
    let (now_json, was_json) = (normalise(now_json), normalise(was_json));
    (now_json != was_json).then(|| in_words(&now_json, &was_json))
}

/// The keys taken out of a request before it is compared, wherever they are: ids an agent or
/// its SDK makes afresh (tool calls, messages, sessions), cache markers, request metadata.
pub const IGNORED_KEYS: [&str; 10] = [
    "id",
    "tool_use_id",
    "tool_call_id",
    "call_id",
    "cache_control",
    "metadata",
    // Codex's: its session, turn and installation ids and the turn's start time.
    "client_metadata",
    "user",
    "prompt_cache_key",
    "session_id",
];

/// A request as it is compared: [`IGNORED_KEYS`] taken out, and in every string, dates and
/// times replaced by a mark.
pub fn normalise(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| !IGNORED_KEYS.contains(&k.as_str()))
                .map(|(k, v)| (k, normalise(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalise).collect()),
        Value::String(s) => Value::String(normalise_text(&s)),
        other => other,
    }
}

/// Dates (`2026-11-28`), times (`19:55:20`, with fractions and zones) and their ISO
/// combinations replaced by `<time>`; so are the headers Codex puts on each command's output
/// (`Chunk ID: 52c234`, a random id, and `Wall time: 0.0012 seconds`).
fn normalise_text(text: &str) -> String {
    static TIME: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let pattern = TIME.get_or_init(|| {
        regex::Regex::new(
            r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b|Chunk ID: [0-9a-f]+|Wall time: [0-9.]+ seconds",
        )
        .ok()
    });
    match pattern {
        Some(p) => p.replace_all(text, "<time>").into_owned(),
        None => text.to_owned(),
    }
}

/// The first difference of two normalised requests, in words.
fn in_words(now: &Value, was: &Value) -> String {
    for (key, what) in [
        ("model", "the model"),
        ("system", "the system prompt"),
        ("instructions", "the instructions"),
        ("tools", "the tools offered"),
    ] {
        if now.get(key) != was.get(key) {
            return match (now.get(key), was.get(key)) {
                (Some(Value::String(n)), Some(Value::String(w))) if key == "model" => {
                    format!("{what} differs: now {n}, was {w}")
                }
                _ => format!(
                    "{what} differs{}",
                    first_line_differing(now.get(key), was.get(key))
                ),
            };
        }
    }
    let list = |v: &Value| {
        ["messages", "input"]
            .iter()
            .find_map(|k| v.get(*k).and_then(Value::as_array).cloned())
            .unwrap_or_default()
    };
    let (now_list, was_list) = (list(now), list(was));
    let first = now_list.iter().zip(&was_list).position(|(n, w)| n != w);
    match first {
        Some(i) => {
            let (n, w) = (now_list.get(i), was_list.get(i));
            format!(
                "{} (message {}) differs{}",
                what_message(n.unwrap_or(&Value::Null)),
                i + 1,
                first_line_differing(n, w)
            )
        }
        None if now_list.len() != was_list.len() => format!(
            "it sends {} messages, the recording's sent {}",
            now_list.len(),
            was_list.len()
        ),
        None => {
            let keys = |v: &Value| {
                v.as_object()
                    .map(|o| o.keys().cloned().collect::<Vec<_>>())
                    .unwrap_or_default()
            };
            let mut names = keys(now);
            names.extend(keys(was));
            names.sort();
            names.dedup();
            let differing: Vec<String> = names
                .into_iter()
                .filter(|k| now.get(k) != was.get(k))
                .collect();
            format!("its settings differ: {}", differing.join(", "))
        }
    }
}

/// What a message is: `the tool result`, `the user's message`, `the assistant's message`...
fn what_message(message: &Value) -> &'static str {
    let text = message.to_string();
    let role = message.get("role").and_then(Value::as_str).unwrap_or("");
    let kind = message.get("type").and_then(Value::as_str).unwrap_or("");
    if text.contains("\"tool_result\"") || role == "tool" || kind == "function_call_output" {
        "the tool result"
    } else if role == "assistant" || kind == "function_call" {
        "the assistant's message"
    } else if role == "system" || role == "developer" {
        "the system message"
    } else {
        "the user's message"
    }
}

/// `: now "…", was "…"`: the first line of the two texts that differs, cut short.
fn first_line_differing(now: Option<&Value>, was: Option<&Value>) -> String {
    let text = |v: Option<&Value>| {
        let mut out = String::new();
        if let Some(v) = v {
            strings_of(v, &mut out);
        }
        out
    };
    let (now, was) = (text(now), text(was));
    let (mut n, mut w) = (now.lines(), was.lines());
    loop {
        match (n.next(), w.next()) {
            (None, None) => return String::new(),
            (a, b) if a == b => continue,
            (a, b) => {
                return format!(
                    ": now {}, was {}",
                    quoted(a.unwrap_or("nothing")),
                    quoted(b.unwrap_or("nothing"))
                )
            }
        }
    }
}

/// Every string in `value`, a line each, in order.
fn strings_of(value: &Value, out: &mut String) {
    match value {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => map.values().for_each(|v| strings_of(v, out)),
        _ => {}
    }
}

fn quoted(line: &str) -> String {
    let line = line.trim();
    let cut: String = line.chars().take(120).collect();
    let more = if cut.len() < line.len() { "…" } else { "" };
    format!("{cut:?}{more}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn asked(body: &str) -> Asked<'_> {
        Asked {
            provider: "anthropic",
            api: "messages",
            body: body.as_bytes(),
        }
    }

    #[test]
    fn ids_dates_cache_markers_and_the_runs_own_id_do_not_count() {
        let was = r#"{"model":"m","metadata":{"user_id":"u1"},"client_metadata":{"x-codex-turn-metadata":"{\"turn_id\":\"01a1\"}"},"system":"Today is 2026-11-27. cwd /s/worktrees/run-1/t",
            "messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A","content":"Chunk ID: db8497\nWall time: 0.0021 seconds\nok","cache_control":{"type":"ephemeral"}}]}]}"#;
        let now = r#"{"model":"m","metadata":{"user_id":"u2"},"client_metadata":{"x-codex-turn-metadata":"{\"turn_id\":\"01b2\"}"},"system":"Today is 2026-11-28. cwd /s/worktrees/run-1-rerun-1/t",
            "messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_B","content":"Chunk ID: 52c234\nWall time: 0.0187 seconds\nok"}]}]}"#;
        assert_eq!(
            differs(asked(now), asked(was), ("run-1-rerun-1", "run-1")),
            None
        );
    }

    #[test]
    fn a_changed_tool_result_is_named_with_its_first_differing_line() {
        let was = r#"{"model":"m","messages":[{"role":"user","content":"fix it"},{"role":"user","content":[{"type":"tool_result","content":"collected 3\n0 failed"}]}]}"#;
        let now = r#"{"model":"m","messages":[{"role":"user","content":"fix it"},{"role":"user","content":[{"type":"tool_result","content":"collected 3\n2 failed"}]}]}"#;
        assert_eq!(
            differs(asked(now), asked(was), ("b", "a")).unwrap(),
            r#"the tool result (message 2) differs: now "2 failed", was "0 failed""#
        );
    }

    #[test]
    fn another_model_provider_or_more_messages_are_said_as_such() {
        let was = r#"{"model":"m1","messages":[]}"#;
        let now = r#"{"model":"m2","messages":[]}"#;
        assert_eq!(
            differs(asked(now), asked(was), ("b", "a")).unwrap(),
            "the model differs: now m2, was m1"
        );
        let other = Asked {
            provider: "openai",
            ..asked(was)
        };
        assert!(differs(other, asked(was), ("b", "a"))
            .unwrap()
            .starts_with("it goes to openai messages"));
        let more = r#"{"model":"m1","messages":[{"role":"user","content":"x"}]}"#;
        assert_eq!(
            differs(asked(more), asked(was), ("b", "a")).unwrap(),
            "it sends 1 messages, the recording's sent 0"
        );
    }

    #[test]
    fn a_rerun_task_maps_its_attempts_onto_the_recordings() {
        let rerun = Rerun {
            from_run: RunId::from("r"),
            from_seq: 9,
            answers: Answers::Recorded,
            tasks: vec![RerunTask {
                task: TaskId::from("t"),
                commit: None,
                attempts_ahead: 2,
            }],
            specs: Vec::new(),
        };
        assert_eq!(rerun.recorded_attempt(&TaskId::from("t"), 3), 1);
        assert_eq!(rerun.recorded_attempt(&TaskId::from("u"), 3), 3);
    }
}
