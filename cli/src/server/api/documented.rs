//! The OpenAPI document's answers, generated from the views the routes answer with: each
//! route's success is the JSON schema of its view (schemars, from the same Rust types the
//! handlers serialize and ts-rs exports to the web view), the views under
//! `components/schemas`. The paths' words (summaries, parameters, refusals) are written in
//! `openapi.json` itself; `tests/openapi.rs` keeps its schemas equal to these.

use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{json, Value};

/// A route's success: its method, path, status and the schema of its view.
type Answer = (&'static str, &'static str, &'static str, Value);

/// Each JSON route's success and its view.
fn answers(g: &mut SchemaGenerator) -> Vec<Answer> {
    use crate::queries as q;
    let of = |m, p, s, schema: schemars::Schema| (m, p, s, schema.to_value());
    vec![
        of(
            "get",
            super::RUNS,
            "200",
            g.subschema_for::<Vec<q::runs::Row>>(),
        ),
        of(
            "post",
            super::RUNS,
            "201",
            g.subschema_for::<q::recorded::Executing>(),
        ),
        of(
            "post",
            super::INTERRUPT,
            "202",
            g.subschema_for::<q::recorded::Interrupting>(),
        ),
        of(
            "get",
            super::RUN,
            "200",
            g.subschema_for::<q::board::BoardView>(),
        ),
        of(
            "get",
            super::EVENTS,
            "200",
            g.subschema_for::<q::events::EventsPage<'static>>(),
        ),
        of(
            "get",
            super::AUDIT,
            "200",
            g.subschema_for::<q::audit::AuditView>(),
        ),
        of(
            "get",
            super::COST,
            "200",
            g.subschema_for::<q::cost::CostView>(),
        ),
        of(
            "post",
            super::BUDGET,
            "200",
            g.subschema_for::<q::recorded::Recorded<'static>>(),
        ),
        of(
            "get",
            super::STACK,
            "200",
            g.subschema_for::<q::stack::StackView<'static>>(),
        ),
        of(
            "get",
            super::STAGES,
            "200",
            g.subschema_for::<q::stages::StagesView>(),
        ),
        of(
            "get",
            super::VERIFY,
            "200",
            g.subschema_for::<q::verify::Checked>(),
        ),
        of(
            "get",
            super::DIGEST,
            "200",
            g.subschema_for::<runlog_replay::digest::Digest>(),
        ),
        of(
            "get",
            super::DIFF,
            "200",
            g.subschema_for::<q::diff::DiffView<'static>>(),
        ),
        of(
            "post",
            super::COMMANDS,
            "200",
            g.subschema_for::<q::recorded::Recorded<'static>>(),
        ),
        of(
            "post",
            super::FORK,
            "201",
            g.subschema_for::<q::fork::Forked>(),
        ),
        of(
            "post",
            super::RERUN,
            "201",
            g.subschema_for::<q::recorded::Executing>(),
        ),
        of(
            "post",
            super::RESUME,
            "201",
            g.subschema_for::<q::recorded::Executing>(),
        ),
        of(
            "get",
            super::TASK,
            "200",
            g.subschema_for::<q::task::TaskView<'static>>(),
        ),
        of(
            "get",
            super::TIMELINE,
            "200",
            g.subschema_for::<runlog_core::projections::timeline::Timeline>(),
        ),
        of(
            "get",
            super::CALLS,
            "200",
            g.subschema_for::<q::calls::CallsView>(),
        ),
        of(
            "get",
            super::JUDGES,
            "200",
            g.subschema_for::<runlog_core::projections::judges::JudgesReport>(),
        ),
        of(
            "get",
            super::REVIEW,
            "200",
            g.subschema_for::<Vec<q::judges::Waiting>>(),
        ),
        of(
            "get",
            super::EXPERIMENTS,
            "200",
            g.subschema_for::<Vec<q::experiment::report::ExperimentRow>>(),
        ),
        of(
            "post",
            super::EXPERIMENTS,
            "201",
            g.subschema_for::<q::experiment::report::ExperimentStarted>(),
        ),
        of(
            "get",
            super::EXPERIMENT,
            "200",
            g.subschema_for::<q::experiment::report::ExperimentView>(),
        ),
    ]
}

/// `document` (the OpenAPI document as written) with every JSON route's success schema and the
/// views' schemas generated; the rest as it was.
pub fn with_views(document: &str) -> Result<String, serde_json::Error> {
    let mut doc: Value = serde_json::from_str(document)?;
    let mut g = SchemaSettings::draft2020_12()
        // The answers as written (a field left out when empty is not required).
        .for_serialize()
        .with(|s| s.definitions_path = "/components/schemas".into())
        .into_generator();
    for (method, path, status, schema) in answers(&mut g) {
        // A JSON pointer spells a path's `/` as `~1`.
        let at = format!(
            "/paths/{}/{method}/responses/{status}",
            path.replace('/', "~1")
        );
        if let Some(Value::Object(answer)) = doc.pointer_mut(&at) {
            answer.insert(
                "content".into(),
                json!({"application/json": { "schema": schema }}),
            );
        }
    }
    let Some(schemas) = doc.pointer_mut("/components/schemas") else {
        return Ok(document.to_owned());
    };
    // What the document writes itself (the error answer) stays; every view is generated anew.
    let hand: serde_json::Map<String, Value> = schemas
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| *k == "Error")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    let mut all = hand;
    all.extend(g.take_definitions(true));
    *schemas = Value::Object(all);
    let mut text = serde_json::to_string_pretty(&doc)?;
    text.push('\n');
    Ok(text)
}
