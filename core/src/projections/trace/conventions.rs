//! The attributes spans carry, named as the OpenTelemetry GenAI conventions and OpenInference
//! (which Phoenix reads) both name them: a span says each thing once per convention.

use super::{AttrValue, Attrs};
use crate::usage::{Spend, UsageRecord};

pub(super) fn s(key: &str, v: impl Into<String>) -> (String, AttrValue) {
    (key.to_owned(), AttrValue::Str(v.into()))
}

pub(super) fn i(key: &str, v: u64) -> (String, AttrValue) {
    (
        key.to_owned(),
        AttrValue::Int(i64::try_from(v).unwrap_or(i64::MAX)),
    )
}

pub(super) fn f(key: &str, v: f64) -> (String, AttrValue) {
    (key.to_owned(), AttrValue::F64(v))
}

/// The model and provider of the last usage recorded on a span.
pub(super) fn add_model_attrs(attrs: &mut Attrs, u: &UsageRecord) {
    attrs.retain(|(k, _)| {
        !matches!(
            k.as_str(),
            "gen_ai.request.model" | "llm.model_name" | "gen_ai.provider.name" | "llm.provider"
        )
    });
    if let Some(m) = &u.model {
        attrs.push(s("gen_ai.request.model", m.clone()));
        attrs.push(s("llm.model_name", m.clone()));
    }
    if let Some(p) = &u.provider {
        attrs.push(s("gen_ai.provider.name", p.clone()));
        attrs.push(s("llm.provider", p.clone()));
    }
}

/// Token counts and cost in both conventions (replacing what was there).
pub(super) fn add_spend_attrs(attrs: &mut Attrs, spend: &Spend) {
    if spend.tokens.total() == 0 && spend.unpriced == 0 && spend.cost_usd == 0.0 {
        return;
    }
    attrs.retain(|(k, _)| {
        !k.starts_with("gen_ai.usage")
            && !k.starts_with("llm.token_count")
            && k != "llm.cost.total"
            && k != "runlog.usage.unpriced"
    });
    let t = &spend.tokens;
    attrs.extend([
        i("gen_ai.usage.input_tokens", t.input),
        i("gen_ai.usage.output_tokens", t.output),
        i("gen_ai.usage.cache_read.input_tokens", t.cache_read),
        i("gen_ai.usage.cache_creation.input_tokens", t.cache_write),
        i("gen_ai.usage.reasoning.output_tokens", t.reasoning),
        i("llm.token_count.prompt", t.input),
        i("llm.token_count.completion", t.output),
        i("llm.token_count.total", t.total()),
        i("llm.token_count.prompt_details.cache_read", t.cache_read),
        i("llm.token_count.prompt_details.cache_write", t.cache_write),
        i("llm.token_count.completion_details.reasoning", t.reasoning),
        f("llm.cost.total", spend.cost_usd),
        i("runlog.usage.unpriced", u64::from(spend.unpriced)),
    ]);
}
/// A workflow run: `invoke_workflow`.
pub(super) fn workflow(name: &str) -> Attrs {
    vec![
        s("gen_ai.operation.name", "invoke_workflow"),
        s("gen_ai.workflow.name", name),
    ]
}

/// An agent's attempt: `invoke_agent`, the agent named in the run (`RUN/AGENT`).
pub(super) fn agent(run: &str, agent: &str) -> Attrs {
    vec![
        s("gen_ai.operation.name", "invoke_agent"),
        s("gen_ai.agent.name", agent),
        s("gen_ai.agent.id", format!("{run}/{agent}")),
    ]
}

/// A tool run for the agent, as the tests are: `execute_tool`.
pub(super) fn tool(name: &str) -> Attrs {
    vec![
        s("gen_ai.operation.name", "execute_tool"),
        s("gen_ai.tool.name", name),
    ]
}

/// An evaluator's span: `evaluate`.
pub(super) fn evaluate() -> Attrs {
    vec![s("gen_ai.operation.name", "evaluate")]
}

/// The span event a verdict is, by this name.
pub(super) const EVALUATION_RESULT: &str = "gen_ai.evaluation.result";

/// The evaluator and its score.
pub(super) fn evaluation(evaluator: &str, score: f64) -> Attrs {
    vec![
        s("gen_ai.evaluation.name", evaluator),
        f("gen_ai.evaluation.score.value", score),
    ]
}

/// An evaluation that ended in an error.
pub(super) fn evaluation_errored(evaluator: &str) -> Attrs {
    vec![
        s("gen_ai.evaluation.name", evaluator),
        s("error.type", "eval-error"),
    ]
}

/// Why the evaluator scored as it did.
pub(super) fn explanation(notes: String) -> (String, AttrValue) {
    s("gen_ai.evaluation.explanation", notes)
}

/// What the gate made of a score: `pass`, `rescue` or `fail`.
pub(super) fn label(label: &str) -> (String, AttrValue) {
    s("gen_ai.evaluation.score.label", label)
}

/// A model call: `chat`, its provider and model in both conventions.
pub(super) fn chat(provider: &str, model: &str) -> Attrs {
    vec![
        s("gen_ai.operation.name", "chat"),
        s("gen_ai.provider.name", provider),
        s("llm.provider", provider),
        s("gen_ai.request.model", model),
        s("llm.model_name", model),
    ]
}
