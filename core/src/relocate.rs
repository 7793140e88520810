//! A rerun's answers given in the rerun's own places. A recorded answer names the places the
//! recorded run worked in: its worktrees (`STORE/worktrees/RUN/TASK`, by absolute path, as real
//! models write them), its branches (`runlog/RUN`, `runlog-task/RUN/TASK`) and, when the store
//! has moved since, the store's own path. Given again as it was, an agent would write into the
//! recorded run's worktree. A [`Relocation`] maps each of those places to the rerun's: forward
//! for the answers it serves, backward for the requests it compares with the recording's.
//!
//! A streamed answer carries its text in pieces (a tool call's arguments in many deltas), and
//! a path may be cut anywhere: the pieces of each block are joined, mapped, and the block's
//! first piece given the whole mapped text (its other pieces emptied), so an agent putting the
//! pieces together reads the mapped text.

use crate::dialect::{Dialect, Seg};
use crate::model_call::ModelApi;
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One place of the recording mapped to the rerun's, and how often an answer named it.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Mapped {
    /// As the recording had it.
    pub was: String,
    /// As the rerun has it.
    pub now: String,
    /// How many times the answer named it.
    pub count: u32,
}

/// A rerun's call answered from the recording with the recording's places given as the
/// rerun's (the `answer-mapped` event's record, right before the call's own).
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct AnswerMapped {
    /// The task.
    pub task: crate::ids::TaskId,
    /// The rerun's attempt.
    pub attempt: u32,
    /// Which command.
    pub stage: crate::usage::UsageStage,
    /// The call's number among the command's calls, from 1.
    pub n: u32,
    /// The seq of the recorded call whose answer it was given, in the run rerun.
    pub recorded_seq: u64,
    /// What was mapped, and how often.
    pub mapped: Vec<Mapped>,
}

impl Mapped {
    /// `/r/.runlog/worktrees/a → /r/.runlog/worktrees/b (2)`, each place mapped.
    pub fn describe(list: &[Mapped]) -> String {
        list.iter()
            .map(|m| format!("{} → {} ({})", m.was, m.now, m.count))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The recorded run's places and the rerun's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Relocation {
    /// The longest recorded text first.
    pairs: Vec<Pair>,
    /// The same pairs as they appear inside a JSON string held in a string (a tool call's
    /// arguments), in the same order (their counts are the pairs').
    escaped: Vec<Pair>,
    /// The pairs the other way round, the longest rerun's text first: a request read back.
    backward: Vec<Pair>,
}

/// (as recorded, as the rerun has it, whether a match must end where an id's characters end).
type Pair = (String, String, bool);

impl Relocation {
    /// The places of run `from` (whose store was at `store_then`, as its commands saw it) in
    /// the rerun `to` (whose store is at `store_now`).
    pub fn new(from: &str, to: &str, store_then: &str, store_now: &str) -> Self {
        let mut pairs = vec![
            (
                format!("{store_then}/worktrees/{from}"),
                format!("{store_now}/worktrees/{to}"),
                true,
            ),
            // Relative to the repository (`.runlog/worktrees/RUN/TASK`), or the store moved.
            (format!("worktrees/{from}"), format!("worktrees/{to}"), true),
            (format!("runlog/{from}"), format!("runlog/{to}"), true),
            (
                format!("runlog-task/{from}/"),
                format!("runlog-task/{to}/"),
                false,
            ),
        ];
        if store_then != store_now {
            pairs.push((store_then.to_owned(), store_now.to_owned(), true));
        }
        pairs.retain(|(was, now, _)| was != now && !was.is_empty());
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        let inner = |s: &str| {
            let quoted = serde_json::to_string(s).unwrap_or_default();
            quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or_default()
                .to_owned()
        };
        let escaped = pairs
            .iter()
            .map(|(w, n, b)| (inner(w), inner(n), *b))
            .collect();
        let mut backward: Vec<Pair> = pairs
            .iter()
            .map(|(was, now, bounded)| (now.clone(), was.clone(), *bounded))
            .collect();
        backward.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        Self {
            pairs,
            escaped,
            backward,
        }
    }

    /// Where the recorded run's store was, as its commands saw it: the absolute path before
    /// the first `/worktrees/RUN` in `text` (a recorded request); `None` when none is named.
    pub fn store_seen(text: &str, from: &str) -> Option<String> {
        let needle = format!("/worktrees/{from}");
        let mut rest = text;
        while let Some(at) = rest.find(&needle) {
            let after = rest.get(at + needle.len()..).unwrap_or_default();
            let before = rest.get(..at).unwrap_or_default();
            if ends_an_id(after) {
                let start = before
                    .rfind(|c: char| c.is_whitespace() || "\"'<>\\`()=,;".contains(c))
                    .map_or(0, |i| i + 1);
                let path = before.get(start..).unwrap_or_default();
                if path.starts_with('/') {
                    return Some(path.to_owned());
                }
            }
            rest = after;
        }
        None
    }

    /// A rerun's request text as the recording would have asked it.
    pub fn back(&self, text: &str) -> String {
        replace(text, &self.backward, &mut vec![0; self.backward.len()])
    }

    /// A recorded answer (`api`'s, streamed or not) with the recording's places given as the
    /// rerun's, and what was mapped how often (nothing when it named none).
    pub fn answer(&self, api: ModelApi, streamed: bool, body: &[u8]) -> (Vec<u8>, Vec<Mapped>) {
        let mut counts = vec![0u32; self.pairs.len()];
        if self.pairs.is_empty() {
            return (body.to_vec(), Vec::new());
        }
        let text = String::from_utf8_lossy(body);
        let out = if streamed {
            self.stream(api, &text, &mut counts)
        } else {
            match serde_json::from_str::<Value>(&text) {
                Ok(mut value) => {
                    if self.walk(&mut value, false, None, &mut counts) {
                        value.to_string()
                    } else {
                        text.into_owned()
                    }
                }
                Err(_) => replace(&text, &self.pairs, &mut counts),
            }
        };
        let mapped = self
            .pairs
            .iter()
            .zip(counts)
            .filter(|(_, n)| *n > 0)
            .map(|((was, now, _), count)| Mapped {
                was: was.clone(),
                now: now.clone(),
                count,
            })
            .collect();
        (out.into_bytes(), mapped)
    }

    /// Maps every string in `value` (a piece's field at `skip` aside); whether any changed.
    /// `json_text`: the strings are JSON text (a tool call's arguments).
    fn walk(
        &self,
        value: &mut Value,
        json_text: bool,
        skip: Option<&[Seg]>,
        counts: &mut [u32],
    ) -> bool {
        match value {
            Value::String(s) if skip != Some(&[]) => {
                let mapped = if json_text {
                    replace(s, &self.escaped, counts)
                } else {
                    replace(s, &self.pairs, counts)
                };
                let changed = mapped != *s;
                *s = mapped;
                changed
            }
            Value::Array(items) => {
                let mut changed = false;
                for (i, item) in items.iter_mut().enumerate() {
                    let skip = skip.and_then(|p| match p.split_first() {
                        Some((Seg::Index(j), rest)) if *j == i => Some(rest),
                        _ => None,
                    });
                    changed |= self.walk(item, json_text, skip, counts);
                }
                changed
            }
            Value::Object(map) => {
                let mut changed = false;
                for (key, item) in map.iter_mut() {
                    let skip = skip.and_then(|p| match p.split_first() {
                        Some((Seg::Key(k), rest)) if k == key => Some(rest),
                        _ => None,
                    });
                    let json_text = json_text || JSON_TEXT_KEYS.contains(&key.as_str());
                    changed |= self.walk(item, json_text, skip, counts);
                }
                changed
            }
            _ => false,
        }
    }

    /// A stream of server-sent events: each event's whole strings mapped, and each block's
    /// pieces joined and mapped into its first piece.
    fn stream(&self, api: ModelApi, text: &str, counts: &mut [u32]) -> String {
        let mut events: Vec<SseEvent> = text.split_inclusive("\n\n").map(SseEvent::read).collect();
        // Each block's pieces, in order.
        let mut blocks: Vec<(String, Vec<Piece>)> = Vec::new();
        for (i, event) in events.iter_mut().enumerate() {
            let Some(json) = event.json.as_mut() else {
                continue;
            };
            let found = Dialect::of(api).map_or_else(Vec::new, |d| d.text_at(json));
            let skip = found.first().map(|(_, at, _)| at.as_slice());
            // One piece an event is what providers send; a second's strings stay as they are.
            event.changed |= self.walk(json, false, skip, counts);
            for (block, at, json_text) in found.into_iter().take(1) {
                match blocks.iter_mut().find(|(b, _)| *b == block) {
                    Some((_, list)) => list.push((i, at, json_text)),
                    None => blocks.push((block, vec![(i, at, json_text)])),
                }
            }
        }
        for (_, list) in blocks {
            let whole: String = list
                .iter()
                .filter_map(|(i, at, _)| events.get(*i)?.json.as_ref().and_then(|j| get(j, at)))
                .collect();
            let json_text = list.first().is_some_and(|(_, _, j)| *j);
            let mapped = if json_text {
                replace(&whole, &self.escaped, counts)
            } else {
                replace(&whole, &self.pairs, counts)
            };
            if mapped == whole {
                continue;
            }
            for (n, (i, at, _)) in list.iter().enumerate() {
                let Some(event) = events.get_mut(*i) else {
                    continue;
                };
                if let Some(slot) = event.json.as_mut().and_then(|j| get_mut(j, at)) {
                    *slot = Value::String(if n == 0 {
                        mapped.clone()
                    } else {
                        String::new()
                    });
                    event.changed = true;
                }
            }
        }
        events.iter().map(SseEvent::write).collect()
    }
}

/// Keys whose string values are JSON text: a tool call's arguments, whole or in pieces.
const JSON_TEXT_KEYS: [&str; 2] = ["arguments", "partial_json"];

/// A piece of a block's text: its event, where its text is, and whether that is JSON text.
type Piece = (usize, Vec<Seg>, bool);

fn get<'a>(value: &'a Value, at: &[Seg]) -> Option<&'a str> {
    at.iter()
        .try_fold(value, |v, seg| match seg {
            Seg::Key(k) => v.get(k),
            Seg::Index(i) => v.get(*i),
        })?
        .as_str()
}

fn get_mut<'a>(value: &'a mut Value, at: &[Seg]) -> Option<&'a mut Value> {
    at.iter().try_fold(value, |v, seg| match seg {
        Seg::Key(k) => v.get_mut(k),
        Seg::Index(i) => v.get_mut(*i),
    })
}

/// One server-sent event: its lines other than `data:`, its data (as JSON when it is), and
/// whether its data changed.
struct SseEvent {
    raw: String,
    other: Vec<String>,
    json: Option<Value>,
    changed: bool,
}

impl SseEvent {
    fn read(raw: &str) -> Self {
        let mut other = Vec::new();
        let mut data = String::new();
        for line in raw.lines() {
            match line.strip_prefix("data:") {
                Some(d) => data.push_str(d.trim_start()),
                None if !line.is_empty() => other.push(line.to_owned()),
                None => {}
            }
        }
        let json = serde_json::from_str::<Value>(&data)
            .ok()
            .filter(|v| v.is_object());
        Self {
            raw: raw.to_owned(),
            other,
            json,
            changed: false,
        }
    }

    /// As it was, unless its data changed.
    fn write(&self) -> String {
        match (&self.json, self.changed) {
            (Some(json), true) => {
                let mut out = String::new();
                for line in &self.other {
                    out.push_str(line);
                    out.push('\n');
                }
                out.push_str("data: ");
                out.push_str(&json.to_string());
                out.push_str("\n\n");
                out
            }
            _ => self.raw.clone(),
        }
    }
}

/// Whether `after` (what follows a match) does not go on with an id's characters.
fn ends_an_id(after: &str) -> bool {
    !after
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// `text` with each pair's first text replaced by its second, left to right, the first pair
/// that matches at a place winning (the longest first); `counts[i]` counts pair i's.
fn replace(text: &str, pairs: &[Pair], counts: &mut [u32]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    'scan: while !rest.is_empty() {
        for (i, (was, now, bounded)) in pairs.iter().enumerate() {
            if let Some(after) = rest.strip_prefix(was.as_str()) {
                if !bounded || ends_an_id(after) {
                    out.push_str(now);
                    if let Some(c) = counts.get_mut(i) {
                        *c += 1;
                    }
                    rest = after;
                    continue 'scan;
                }
            }
        }
        let mut chars = rest.chars();
        if let Some(c) = chars.next() {
            out.push(c);
        }
        rest = chars.as_str();
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use serde_json::json;

    fn relocation() -> Relocation {
        Relocation::new("hello", "hello-again", "/r/.runlog", "/r/.runlog")
    }

    fn sse(events: &[Value]) -> String {
        events
            .iter()
            .map(|e| format!("event: x\ndata: {e}\n\n"))
            .collect()
    }

    fn joined(api: ModelApi, stream: &[u8]) -> Value {
        crate::dialect::assembled(api, stream).unwrap()
    }

    #[test]
    fn a_tool_calls_absolute_path_cut_across_deltas_is_the_reruns() {
        let input = r#"{"file_path":"/r/.runlog/worktrees/hello/t/hello.txt","content":"hi"}"#;
        let (a, b) = input.split_at(30);
        let stream = sse(&[
            json!({"type":"message_start","message":{"id":"m","content":[],"usage":{}}}),
            json!({"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"Write","input":{}}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":a}}),
            json!({"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":b}}),
            json!({"type":"content_block_stop","index":0}),
        ]);
        let (out, mapped) = relocation().answer(ModelApi::Messages, true, stream.as_bytes());
        let whole = joined(ModelApi::Messages, &out);
        assert_eq!(
            whole["content"][0]["input"]["file_path"],
            "/r/.runlog/worktrees/hello-again/t/hello.txt"
        );
        assert_eq!(
            mapped,
            vec![Mapped {
                was: "/r/.runlog/worktrees/hello".into(),
                now: "/r/.runlog/worktrees/hello-again".into(),
                count: 1
            }]
        );
        // The events that named nothing are given byte for byte; the block's later piece is
        // emptied.
        let out = String::from_utf8(out).unwrap();
        let (was, now): (Vec<&str>, Vec<&str>) = (
            stream.split_inclusive("\n\n").collect(),
            out.split_inclusive("\n\n").collect(),
        );
        assert_eq!((now[0], now[1], now[4]), (was[0], was[1], was[4]));
        assert!(now[3].contains(r#""partial_json":"""#), "{}", now[3]);
    }

    #[test]
    fn responses_and_chat_completions_arguments_and_whole_items_are_mapped() {
        let arguments = json!({"cmd": "cat x > /r/.runlog/worktrees/hello/t/a", "workdir": "/r/.runlog/worktrees/hello/t"}).to_string();
        let (a, b) = arguments.split_at(25);
        let item = json!({"type":"function_call","call_id":"c","name":"exec_command","arguments":arguments});
        let stream = sse(&[
            json!({"type":"response.function_call_arguments.delta","output_index":0,"delta":a}),
            json!({"type":"response.function_call_arguments.delta","output_index":0,"delta":b}),
            json!({"type":"response.output_item.done","output_index":0,"item":item}),
            json!({"type":"response.completed","response":{"output":[item]}}),
        ]);
        let (out, mapped) = relocation().answer(ModelApi::Responses, true, stream.as_bytes());
        let whole = joined(ModelApi::Responses, &out);
        let args: Value =
            serde_json::from_str(whole["output"][0]["arguments"].as_str().unwrap()).unwrap();
        assert_eq!(args["workdir"], "/r/.runlog/worktrees/hello-again/t");
        assert_eq!(mapped[0].count, 6, "{mapped:?}");
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("worktrees/hello/"), "{text}");

        let chat = json!({"choices":[{"index":0,"message":{"role":"assistant","content":"in worktrees/hello/t and on runlog/hello"}}]});
        let (out, _) = relocation().answer(
            ModelApi::ChatCompletions,
            false,
            chat.to_string().as_bytes(),
        );
        let out: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            out["choices"][0]["message"]["content"],
            "in worktrees/hello-again/t and on runlog/hello-again"
        );
    }

    #[test]
    fn other_runs_names_and_an_answer_naming_nothing_are_left_as_they_are() {
        let body = json!({"content":[{"type":"text","text":"worktrees/hello-world/t, runlog/hellos, hello"}]}).to_string();
        let (out, mapped) = relocation().answer(ModelApi::Messages, false, body.as_bytes());
        assert_eq!(out, body.as_bytes());
        assert!(mapped.is_empty());
    }

    #[test]
    fn a_moved_store_is_found_in_the_recorded_request_and_mapped_both_ways() {
        let asked = "<system-reminder>Primary working directory: /old/repo/.runlog/worktrees/hello/t</system-reminder>";
        let then = Relocation::store_seen(asked, "hello").unwrap();
        assert_eq!(then, "/old/repo/.runlog");
        let moved = Relocation::new("hello", "hello-again", &then, "/new/repo/.runlog");
        let now_asked = "Primary working directory: /new/repo/.runlog/worktrees/hello-again/t; repo /new/repo/.runlog/x";
        assert_eq!(
            moved.back(now_asked),
            "Primary working directory: /old/repo/.runlog/worktrees/hello/t; repo /old/repo/.runlog/x"
        );
        assert_eq!(Relocation::store_seen("worktrees/hello-2/t", "hello"), None);
    }
}
