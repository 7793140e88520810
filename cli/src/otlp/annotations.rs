//! Verdicts and people's decisions as span annotations in Arize Phoenix: each evaluator's
//! verdict on its attempt's span (annotator `LLM`: the decision as label, the score, what it
//! was judged against), and each person's approve, reject or reopen after it (annotator
//! `HUMAN`), so Phoenix's own views show judge and people side by side. Sent to Phoenix's REST
//! API beside the trace (`/v1/span_annotations`), each with an identifier of its own, so
//! sending again updates them.

use super::send::{post_to, SendError};
use super::Endpoint;
use runlog_core::projections::judges::{decision_word, Verdict};
use runlog_core::projections::trace::{AttrValue, Span, SpanKind};
use serde_json::{json, Value};

/// The annotations of a run's verdicts, on the spans of the attempts they judged.
pub fn of(run: &str, spans: &[Span], verdicts: &[Verdict]) -> Vec<Value> {
    let mut out = Vec::new();
    for v in verdicts {
        let Some(span) = attempt_span(spans, v) else {
            continue;
        };
        let span_id: String = span.span_id.iter().map(|b| format!("{b:02x}")).collect();
        if v.decision.is_none() {
            continue;
        }
        let decision = decision_word(v.decision);
        out.push(json!({
            "span_id": span_id,
            "name": "runlog verdict",
            "annotator_kind": "LLM",
            "identifier": format!("runlog {run} {}", v.seq),
            "result": {
                "label": decision,
                "score": v.score,
                "explanation": format!(
                    "{} scored {} against the threshold {}{}",
                    v.evaluator,
                    v.score,
                    v.threshold,
                    if v.held { ", held for a person's review" } else { "" }
                ),
            },
            "metadata": {
                "runlog.run": run,
                "runlog.seq": v.seq,
                "evaluator": v.evaluator,
                "model": v.model,
                "version": v.version,
                "dimensions": v.dimensions,
            },
        }));
        if let Some(label) = &v.label {
            out.push(json!({
                "span_id": span_id,
                "name": "runlog person",
                "annotator_kind": "HUMAN",
                "identifier": format!("runlog {run} {}", label.seq),
                "result": {
                    "label": label.decision,
                    "score": if label.passes() { 1.0 } else { 0.0 },
                    "explanation": format!("{} by {} at seq {}, after the verdict at seq {}", label.decision, label.by, label.seq, v.seq),
                },
                "metadata": {"runlog.run": run, "runlog.seq": label.seq, "by": label.by},
            }));
        }
    }
    out
}

/// The span of the attempt a verdict judged.
fn attempt_span<'a>(spans: &'a [Span], v: &Verdict) -> Option<&'a Span> {
    let has = |s: &Span, key: &str, want: &AttrValue| {
        s.attributes
            .iter()
            .any(|(k, value)| k == key && value == want)
    };
    spans.iter().find(|s| {
        s.kind == SpanKind::Agent
            && has(s, "runlog.task", &AttrValue::Str(v.task.0.clone()))
            && has(s, "runlog.attempt", &AttrValue::Int(i64::from(v.attempt)))
    })
}

/// Where Phoenix takes span annotations, beside the traces path the endpoint names
/// (`…/v1/traces` → `…/v1/span_annotations`); none for an endpoint of another shape.
pub fn path(endpoint: &Endpoint) -> Option<String> {
    let base = endpoint.target.path.strip_suffix("/v1/traces")?;
    Some(format!("{base}/v1/span_annotations"))
}

/// What became of the annotations.
#[derive(Debug)]
pub enum Sent {
    /// Phoenix took them.
    Taken(usize),
    /// There were none to send.
    None,
    /// The receiver has no annotations API (not Phoenix).
    NoApi,
}

/// Sends `annotations` to Phoenix beside `endpoint`'s traces.
pub async fn send(endpoint: &Endpoint, annotations: Vec<Value>) -> Result<Sent, SendError> {
    if annotations.is_empty() {
        return Ok(Sent::None);
    }
    let Some(path) = path(endpoint) else {
        return Ok(Sent::NoApi);
    };
    let n = annotations.len();
    let body = serde_json::to_vec(&json!({ "data": annotations })).unwrap_or_default();
    match post_to(endpoint, &path, "application/json", body).await {
        Ok(()) => Ok(Sent::Taken(n)),
        Err(SendError::Refused {
            status: 404 | 405, ..
        }) => Ok(Sent::NoApi),
        Err(e) => Err(e),
    }
}
