//! What agents and evaluators print, and what runlog reads from it.
//!
//! Agents: lines `::checkpoint NAME`, `::classify CLASS`, `::message TEXT`; a JSON object on
//! its own line becomes the stage result (the last one wins), except `{"add_tasks": [...]}`,
//! sub-tasks a planning agent adds to its own group at run time, and usage reports (an object
//! with `usage`, read by `runlog_core::usage`); the last other line is the summary. Evaluators: `{"score": 0.82, "dimensions": {...}, "notes": "..."}`, possibly inside
//! prose or a ```json fence, as LLM output is; the last top-level object with a `score` is the
//! verdict (the agent protocol's "last one wins" too), objects nested in others are not.

use runlog_core::{TaskClass, Value};
use std::collections::BTreeMap;

/// The largest stage result recorded as a value (an event holds it; the agent's whole output is
/// kept in the blob area anyway).
const MAX_RESULT_BYTES: usize = 1 << 20;

/// What an agent's stdout said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentReport {
    /// Checkpoints reached, in order.
    pub checkpoints: Vec<String>,
    /// Classifications, in order.
    pub classes: Vec<TaskClass>,
    /// Messages, in order.
    pub messages: Vec<String>,
    /// The stage result (`Null` if none).
    pub result: Value,
    /// A one-line summary.
    pub summary: String,
    /// Protocol lines that could not be understood.
    pub problems: Vec<String>,
    /// Tasks the agent adds to the plan (`{"add_tasks": [...]}` lines, in order), each as the
    /// workflow file's `[[task]]` would say it.
    pub add_tasks: Vec<serde_json::Value>,
}

/// Reads an agent's stdout.
pub fn agent_report(stdout: &str) -> AgentReport {
    let mut r = AgentReport::default();
    for line in stdout.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("::checkpoint ") {
            r.checkpoints.push(rest.trim().to_owned());
        } else if let Some(rest) = t.strip_prefix("::classify ") {
            match TaskClass::parse(rest) {
                Some(c) => r.classes.push(c),
                None => r.problems.push(format!(
                    "unknown class {:?}; allowed: {}",
                    rest.trim(),
                    TaskClass::ALL
                        .iter()
                        .map(|c| c.name())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        } else if let Some(rest) = t.strip_prefix("::message ") {
            r.messages.push(rest.trim().to_owned());
        } else if t.starts_with('{') && t.len() > MAX_RESULT_BYTES {
            r.problems.push(format!(
                "a stage result of {} bytes is larger than the {} KiB a result may be; it stays in the agent's recorded output",
                t.len(),
                MAX_RESULT_BYTES >> 10
            ));
        } else if t.starts_with('{') {
            match serde_json::from_str::<serde_json::Value>(t) {
                Ok(serde_json::Value::Object(mut o)) if o.contains_key("add_tasks") => {
                    match o.remove("add_tasks") {
                        Some(serde_json::Value::Array(tasks)) if o.is_empty() => {
                            r.add_tasks.extend(tasks)
                        }
                        _ => r.problems.push(
                            "an add_tasks line is {\"add_tasks\": [TASK, ...]} and nothing else; it was not read".into(),
                        ),
                    }
                }
                // Usage reports are read by `runlog_core::usage`, not results.
                Ok(serde_json::Value::Object(o)) if runlog_core::usage::is_usage_object(&o) => {}
                Ok(v @ serde_json::Value::Object(_)) => {
                    let value = Value::from(v);
                    if value.fits() {
                        r.result = value;
                    } else {
                        // Recorded as a value it could never be read back: keep it as text.
                        r.problems.push(format!(
                            "the stage result nests {} levels deep, more than the {} runlog can read back; it is kept as text",
                            value.depth(),
                            runlog_core::MAX_VALUE_DEPTH
                        ));
                        r.result = Value::Str(t.to_owned());
                    }
                }
                _ => r.summary = clip(t),
            }
        } else if !t.is_empty() {
            r.summary = clip(t);
        }
    }
    r
}

fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(200).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// A valid evaluation.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// Overall score in [0, 1].
    pub score: f64,
    /// Dimensions in [0, 1].
    pub dimensions: BTreeMap<String, f64>,
    /// Notes.
    pub notes: String,
    /// The model and version it said it was, if it said.
    pub judge: runlog_core::review::Judge,
}

/// The byte spans of the top-level JSON objects in free text (prose, ```json fences, JSON
/// lines), in order. An object inside another is part of it, not one of these. Spans are found
/// without building the objects, so a long output costs no more memory than itself.
pub fn object_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut from = 0;
    while let Some(start) = text.get(from..).and_then(|t| t.find('{')).map(|i| from + i) {
        let Some(tail) = text.get(start..) else { break };
        let mut stream =
            serde_json::Deserializer::from_str(tail).into_iter::<serde::de::IgnoredAny>();
        match stream.next() {
            Some(Ok(_)) => {
                let end = start + stream.byte_offset();
                spans.push((start, end));
                from = end;
            }
            _ => from = start + 1,
        }
    }
    spans
}

/// The last top-level JSON object in `text` that has one of `keys`, parsed.
pub fn last_object_with(
    text: &str,
    keys: &[&str],
) -> Option<serde_json::Map<String, serde_json::Value>> {
    object_spans(text).into_iter().rev().find_map(|(a, b)| {
        match serde_json::from_str(text.get(a..b)?) {
            Ok(serde_json::Value::Object(o)) if keys.iter().any(|k| o.contains_key(*k)) => Some(o),
            _ => None,
        }
    })
}

/// The first `max` characters of `text`, trimmed, for quoting it in an error.
/// The first line of `text` that is not blank, trimmed, cut at `max` characters with `…`: how
/// a long message is named in one line (a failure in a summary, an event in words).
pub fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    match line.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", line.get(..cut).unwrap_or(line)),
        None => line.to_owned(),
    }
}

/// The first `max` characters of `text`, trimmed.
pub fn beginning(text: &str, max: usize) -> String {
    text.trim().chars().take(max).collect()
}

fn unit(what: &str, v: &serde_json::Value) -> Result<f64, EvalOutputError> {
    match v.as_f64() {
        Some(x) if x.is_finite() && (0.0..=1.0).contains(&x) => Ok(x),
        Some(x) => Err(EvalOutputError::OutOfRange {
            what: what.to_owned(),
            value: x,
        }),
        None => Err(EvalOutputError::NotANumber {
            what: what.to_owned(),
            found: v.to_string(),
        }),
    }
}

/// Why an evaluator's output holds no score runlog can record.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalOutputError {
    /// It printed nothing.
    #[error("the evaluator printed nothing; expected {{\"score\": ..., \"dimensions\": {{...}}, \"notes\": \"...\"}}")]
    Nothing,
    /// No object with a score.
    #[error("no JSON object with a \"score\" in the evaluator's output (it began: {began:?})")]
    NoScore {
        /// The output's beginning.
        began: String,
    },
    /// A score outside [0, 1].
    #[error("{what} is {value}, outside [0, 1]")]
    OutOfRange {
        /// The score or a dimension.
        what: String,
        /// Its value.
        value: f64,
    },
    /// A score that is not a number.
    #[error("{what} is {found}, not a number")]
    NotANumber {
        /// The score or a dimension.
        what: String,
        /// What stands there.
        found: String,
    },
    /// `dimensions` that is not an object.
    #[error("dimensions is {found}, not an object of scores")]
    Dimensions {
        /// What stands there.
        found: String,
    },
}

/// Reads an evaluator's output; the error says what was wrong, for the audit.
pub fn evaluation(stdout: &str) -> Result<Evaluation, EvalOutputError> {
    // The verdict comes last: an example object earlier in the output must not decide the gate.
    let Some(obj) = last_object_with(stdout, &["score"]) else {
        return Err(match stdout.trim().is_empty() {
            true => EvalOutputError::Nothing,
            false => EvalOutputError::NoScore {
                began: beginning(stdout, 80),
            },
        });
    };
    let score = unit(
        "score",
        obj.get("score").unwrap_or(&serde_json::Value::Null),
    )?;
    let mut dimensions = BTreeMap::new();
    match obj.get("dimensions") {
        None | Some(serde_json::Value::Null) => {}
        Some(serde_json::Value::Object(d)) => {
            for (name, v) in d {
                dimensions.insert(name.clone(), unit(&format!("dimension {name:?}"), v)?);
            }
        }
        Some(other) => {
            return Err(EvalOutputError::Dimensions {
                found: other.to_string(),
            })
        }
    }
    let notes = match obj.get("notes") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    // Who the evaluator is, when it says: any JSON value, kept as text (a number is a version).
    let said = |key: &str| match obj.get(key) {
        Some(serde_json::Value::String(s)) => s.trim().to_owned(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Ok(Evaluation {
        score,
        dimensions,
        notes,
        judge: runlog_core::review::Judge {
            model: said("model"),
            version: said("version"),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_tasks_lines_are_plan_additions_not_results() {
        let r = agent_report(
            "{\"add_tasks\": [{\"id\": \"a\"}]}\n{\"done\": 1}\n{\"add_tasks\": [{\"id\": \"b\"}]}\n{\"add_tasks\": 3}\n{\"add_tasks\": [], \"x\": 1}\n",
        );
        let ids: Vec<_> = r.add_tasks.iter().map(|t| t["id"].clone()).collect();
        assert_eq!(ids, vec![serde_json::json!("a"), serde_json::json!("b")]);
        assert_eq!(r.result.get("done"), Some(&Value::Int(1)));
        assert_eq!(r.problems.len(), 2, "{:?}", r.problems);
    }

    #[test]
    fn agent_lines_are_read() {
        let r = agent_report("working\n::checkpoint read_all\n::classify NEW_CODE\n::message hello there\n{\"files\": 3}\ndone splitting\n::classify rewrite\n");
        assert_eq!(r.checkpoints, vec!["read_all"]);
        assert_eq!(r.classes, vec![TaskClass::NewCode]);
        assert_eq!(r.messages, vec!["hello there"]);
        assert_eq!(r.result.get("files"), Some(&Value::Int(3)));
        assert_eq!(r.summary, "done splitting");
        assert_eq!(r.problems.len(), 1);
    }

    #[test]
    fn a_result_too_deep_to_read_back_is_kept_as_text() {
        let deep = format!("{}1{}", "{\"a\":".repeat(100), "}".repeat(100));
        let r = agent_report(&deep);
        assert_eq!(r.result, Value::Str(deep));
        assert!(r.problems[0].contains("kept as text"), "{:?}", r.problems);
    }

    #[test]
    fn evaluations_are_found_in_prose_and_fences() {
        let fenced = "Here is my assessment.\n```json\n{\"score\": 0.82, \"dimensions\": {\"correctness\": 0.9}, \"notes\": \"good\"}\n```\nThanks.";
        let e = evaluation(fenced).unwrap();
        assert_eq!((e.score, e.notes.as_str()), (0.82, "good"));
        assert_eq!(e.dimensions.get("correctness"), Some(&0.9));
        let prose = "I think {\"score\": 0.4, \"notes\": \"missing tests\"} is fair.";
        assert_eq!(evaluation(prose).unwrap().score, 0.4);
    }

    #[test]
    fn the_last_top_level_object_with_a_score_is_the_verdict() {
        let text = "For example {\"score\": 1.0} would be perfect.\nVerdict:\n```json\n{\"score\": 0.3, \"detail\": {\"score\": 0.9}}\n```\n{\"unrelated\": true}";
        let e = evaluation(text).unwrap();
        assert_eq!(e.score, 0.3);
        let nested_only = "{\"review\": {\"score\": 0.9}}";
        assert!(evaluation(nested_only)
            .unwrap_err()
            .to_string()
            .contains("no JSON object"));
    }

    #[test]
    fn spans_skip_what_is_not_json_and_do_not_descend() {
        let text = "a { b {\"x\": {\"y\": 1}} c {\"z\": 2}";
        let spans: Vec<&str> = object_spans(text)
            .into_iter()
            .map(|(a, b)| &text[a..b])
            .collect();
        assert_eq!(spans, vec!["{\"x\": {\"y\": 1}}", "{\"z\": 2}"]);
    }

    #[test]
    fn bad_evaluations_say_what_is_wrong() {
        assert!(evaluation("")
            .unwrap_err()
            .to_string()
            .contains("printed nothing"));
        assert!(evaluation("looks great to me")
            .unwrap_err()
            .to_string()
            .contains("no JSON object"));
        assert!(evaluation("{\"score\": 1.5}")
            .unwrap_err()
            .to_string()
            .contains("outside [0, 1]"));
        assert!(
            evaluation("{\"score\": 0.5, \"dimensions\": {\"style\": \"good\"}}")
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );
        assert!(evaluation("{\"score\": \"high\"}")
            .unwrap_err()
            .to_string()
            .contains("not a number"));
    }
}
