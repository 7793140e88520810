//! What a model call said, on its span, when asked (`runlog export --content`): the request and
//! the answer whole (OpenInference's `input.value`, `output.value`), each message by role
//! (`llm.input_messages`, `llm.output_messages`, as Phoenix shows a conversation) and GenAI's
//! `gen_ai.input.messages` / `gen_ai.output.messages`. Read from the blobs the call's event
//! names (secrets were replaced before they were kept); never without being asked, since a
//! trace often goes where a conversation should not.

use runlog_core::codec::decode_event;
use runlog_core::conversation::{messages, reply};
use runlog_core::model_call::ModelCall;
use runlog_core::projections::trace::{AttrValue, Attrs, Span, SpanKind};
use runlog_core::EventKind;
use runlog_store::{Direction, EventLog};

/// The longest text put in one attribute: receivers refuse or cut larger values (Phoenix's
/// default limit on a request is some megabytes), and a 40-turn conversation's last request
/// alone passes 100 KB.
const MAX_VALUE: usize = 256 * 1024;

/// Puts on each model call's span of `run` what the call said. How many spans got it.
pub fn add(log: &dyn EventLog, run: &str, spans: &mut [Span]) -> runlog_store::Result<usize> {
    let mut added = 0;
    for span in spans.iter_mut().filter(|s| s.kind == SpanKind::Llm) {
        let seq = span.seqs.0;
        let Some(record) = log
            .read(run, seq, seq, Direction::Forward)?
            .into_iter()
            .next()
        else {
            continue;
        };
        let Ok(event) = decode_event(&record.body) else {
            continue;
        };
        if let EventKind::ModelCalled(call) = event.kind {
            span.attributes.extend(said(log, &call)?);
            added += 1;
        }
    }
    Ok(added)
}

/// The attributes of what `call` said.
fn said(log: &dyn EventLog, call: &ModelCall) -> runlog_store::Result<Attrs> {
    let body = |b: &Option<runlog_core::model_call::Body>| -> runlog_store::Result<Vec<u8>> {
        match b {
            Some(b) => Ok(log.get_blob(&b.blob.0)?.unwrap_or_default()),
            None => Ok(Vec::new()),
        }
    };
    let request = body(&call.request)?;
    let response = body(&call.response)?;
    // A stream's answer as the message it adds up to (kept so, or added up here for a call
    // recorded before it was); a whole answer as it came.
    let answer = match (&call.assembled, call.streamed) {
        (Some(_), _) => body(&call.assembled)?,
        (None, true) => runlog_core::dialect::assembled(call.api, &response)
            .map_or(response, |whole| whole.to_string().into_bytes()),
        (None, false) => response,
    };
    let mut attrs: Attrs = Vec::new();
    let mut put = |key: String, value: String| {
        attrs.push((key, AttrValue::Str(clip(value))));
    };
    if !request.is_empty() {
        put("input.value".into(), text(&request));
        put("input.mime_type".into(), "application/json".into());
    }
    if !answer.is_empty() {
        put("output.value".into(), text(&answer));
        put("output.mime_type".into(), "application/json".into());
    }
    let asked = messages(call.api, &request);
    for (i, (role, words)) in asked.iter().enumerate() {
        put(format!("llm.input_messages.{i}.message.role"), role.clone());
        put(
            format!("llm.input_messages.{i}.message.content"),
            words.clone(),
        );
    }
    let answered = reply(call.api, &answer, false);
    if !answered.is_empty() {
        put(
            "llm.output_messages.0.message.role".into(),
            "assistant".into(),
        );
        put(
            "llm.output_messages.0.message.content".into(),
            answered.clone(),
        );
    }
    let parts = |role: &str, words: &str| serde_json::json!({"role": role, "parts": [{"type": "text", "content": words}]});
    let input: Vec<_> = asked.iter().map(|(r, w)| parts(r, w)).collect();
    put(
        "gen_ai.input.messages".into(),
        serde_json::Value::Array(input).to_string(),
    );
    if !answered.is_empty() {
        put(
            "gen_ai.output.messages".into(),
            serde_json::Value::Array(vec![parts("assistant", &answered)]).to_string(),
        );
    }
    Ok(attrs)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `value` cut to [`MAX_VALUE`] bytes (at a character's edge), saying so.
fn clip(mut value: String) -> String {
    if value.len() <= MAX_VALUE {
        return value;
    }
    let mut at = MAX_VALUE;
    while !value.is_char_boundary(at) {
        at -= 1;
    }
    let total = value.len();
    value.truncate(at);
    value.push_str(&format!("… (cut at {MAX_VALUE} of {total} bytes)"));
    value
}
