//! What agents and evaluators print, and what runlog reads from it.
//!
//! Agents: lines `::checkpoint NAME`, `::classify CLASS`, `::message TEXT`; a JSON object on
//! its own line becomes the stage result (the last one wins); the last other line is the
//! summary. Evaluators: `{"score": 0.82, "dimensions": {...}, "notes": "..."}`, possibly inside
//! prose or a ```json fence, as LLM output is.

use runlog_core::{TaskClass, Value};
use std::collections::BTreeMap;

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
        } else if t.starts_with('{') {
            match serde_json::from_str::<serde_json::Value>(t) {
                Ok(v @ serde_json::Value::Object(_)) => r.result = Value::from(v),
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
}

/// JSON objects found in free text: fenced ```json blocks first, then any `{` that starts a
/// parsable object.
fn json_objects(text: &str) -> Vec<serde_json::Map<String, serde_json::Value>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("```") {
        let after = rest.get(start + 3..).unwrap_or("");
        let body_start = after.find('\n').map_or(0, |i| i + 1);
        let Some(end) = after.get(body_start..).and_then(|b| b.find("```")) else {
            break;
        };
        if let Some(block) = after.get(body_start..body_start + end) {
            if let Ok(serde_json::Value::Object(o)) = serde_json::from_str(block.trim()) {
                found.push(o);
            }
        }
        rest = after.get(body_start + end + 3..).unwrap_or("");
    }
    for (i, _) in text.match_indices('{') {
        let Some(tail) = text.get(i..) else { continue };
        let mut stream = serde_json::Deserializer::from_str(tail).into_iter::<serde_json::Value>();
        if let Some(Ok(serde_json::Value::Object(o))) = stream.next() {
            found.push(o);
        }
    }
    found
}

fn unit(what: &str, v: &serde_json::Value) -> Result<f64, String> {
    match v.as_f64() {
        Some(x) if x.is_finite() && (0.0..=1.0).contains(&x) => Ok(x),
        Some(x) => Err(format!("{what} is {x}, outside [0, 1]")),
        None => Err(format!("{what} is {v}, not a number")),
    }
}

/// Reads an evaluator's output; the error says what was wrong, for the audit.
pub fn evaluation(stdout: &str) -> Result<Evaluation, String> {
    let objects = json_objects(stdout);
    let Some(obj) = objects.into_iter().find(|o| o.contains_key("score")) else {
        return Err(match stdout.trim().is_empty() {
            true => "the evaluator printed nothing; expected {\"score\": ..., \"dimensions\": {...}, \"notes\": \"...\"}".into(),
            false => format!(
                "no JSON object with a \"score\" in the evaluator's output (it began: {:?})",
                stdout.trim().chars().take(80).collect::<String>()
            ),
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
        Some(other) => return Err(format!("dimensions is {other}, not an object of scores")),
    }
    let notes = match obj.get("notes") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    Ok(Evaluation {
        score,
        dimensions,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn evaluations_are_found_in_prose_and_fences() {
        let fenced = "Here is my assessment.\n```json\n{\"score\": 0.82, \"dimensions\": {\"correctness\": 0.9}, \"notes\": \"good\"}\n```\nThanks.";
        let e = evaluation(fenced).unwrap();
        assert_eq!((e.score, e.notes.as_str()), (0.82, "good"));
        assert_eq!(e.dimensions.get("correctness"), Some(&0.9));
        let prose = "I think {\"score\": 0.4, \"notes\": \"missing tests\"} is fair.";
        assert_eq!(evaluation(prose).unwrap().score, 0.4);
    }

    #[test]
    fn bad_evaluations_say_what_is_wrong() {
        assert!(evaluation("").unwrap_err().contains("printed nothing"));
        assert!(evaluation("looks great to me")
            .unwrap_err()
            .contains("no JSON object"));
        assert!(evaluation("{\"score\": 1.5}")
            .unwrap_err()
            .contains("outside [0, 1]"));
        assert!(
            evaluation("{\"score\": 0.5, \"dimensions\": {\"style\": \"good\"}}")
                .unwrap_err()
                .contains("not a number")
        );
        assert!(evaluation("{\"score\": \"high\"}")
            .unwrap_err()
            .contains("not a number"));
    }
}
