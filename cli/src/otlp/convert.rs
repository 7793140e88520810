//! Spans into the OTLP messages every receiver reads.

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, InstrumentationScope, KeyValue};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    span, status, ResourceSpans, ScopeSpans, Span, Status,
};
use runlog_core::projections::trace::{AttrValue, Attrs, Span as RunSpan, TraceIds};

/// The export request for `spans` of a run's trace; `project` names the project a receiver
/// files them under (Phoenix reads `openinference.project.name`).
pub fn request(
    ids: TraceIds,
    run: &str,
    project: &str,
    spans: &[RunSpan],
) -> ExportTraceServiceRequest {
    let resource = Resource {
        attributes: attributes(&vec![
            ("service.name".into(), AttrValue::Str("runlog".into())),
            (
                "openinference.project.name".into(),
                AttrValue::Str(project.into()),
            ),
            ("runlog.run".into(), AttrValue::Str(run.into())),
        ]),
        ..Resource::default()
    };
    let scope = InstrumentationScope {
        name: "runlog".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        ..InstrumentationScope::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![ScopeSpans {
                scope: Some(scope),
                spans: spans.iter().map(|s| span_of(ids, s)).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

fn nanos(at: runlog_core::Timestamp) -> u64 {
    at.0.saturating_mul(1_000_000)
}

fn span_of(ids: TraceIds, s: &RunSpan) -> Span {
    let mut attrs = s.attributes.clone();
    attrs.push((
        "openinference.span.kind".into(),
        AttrValue::Str(s.kind.name().into()),
    ));
    attrs.push((
        "runlog.seq.first".into(),
        AttrValue::Int(i64::try_from(s.seqs.0).unwrap_or(i64::MAX)),
    ));
    attrs.push((
        "runlog.seq.last".into(),
        AttrValue::Int(i64::try_from(s.seqs.1).unwrap_or(i64::MAX)),
    ));
    Span {
        trace_id: ids.trace_id.to_vec(),
        span_id: s.span_id.to_vec(),
        parent_span_id: s.parent.map(|p| p.to_vec()).unwrap_or_default(),
        name: s.name.clone(),
        kind: span::SpanKind::Internal as i32,
        start_time_unix_nano: nanos(s.start),
        end_time_unix_nano: nanos(s.end.max(s.start)),
        attributes: attributes(&attrs),
        events: s
            .events
            .iter()
            .map(|e| span::Event {
                time_unix_nano: nanos(e.at),
                name: e.name.clone(),
                attributes: attributes(&e.attributes),
                dropped_attributes_count: 0,
            })
            .collect(),
        links: s
            .link
            .iter()
            .map(|l| span::Link {
                trace_id: l.trace_id.to_vec(),
                span_id: l.span_id.to_vec(),
                attributes: attributes(&l.attributes),
                ..span::Link::default()
            })
            .collect(),
        status: Some(match &s.error {
            Some(message) => Status {
                message: message.clone(),
                code: status::StatusCode::Error as i32,
            },
            None => Status {
                message: String::new(),
                code: status::StatusCode::Ok as i32,
            },
        }),
        ..Span::default()
    }
}

fn attributes(attrs: &Attrs) -> Vec<KeyValue> {
    attrs
        .iter()
        .map(|(k, v)| KeyValue {
            key: k.clone(),
            value: Some(AnyValue {
                value: Some(match v {
                    AttrValue::Str(s) => any_value::Value::StringValue(s.clone()),
                    AttrValue::Int(n) => any_value::Value::IntValue(*n),
                    AttrValue::F64(x) => any_value::Value::DoubleValue(*x),
                    AttrValue::Bool(b) => any_value::Value::BoolValue(*b),
                }),
            }),
            ..KeyValue::default()
        })
        .collect()
}
