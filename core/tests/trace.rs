//! A run's trace from its events: the span tree, errors where attempts failed, verdicts as span
//! events, the same ids every time, a fork linked to the run it came from.

mod support;
use runlog_core::projections::trace::{AttrValue, Span, SpanKind, TraceBuilder, TraceIds};
use runlog_core::*;
use support::*;

fn judged(id_: &str) -> TaskSpec {
    let mut s = task(id_);
    s.requires_testing = false;
    s.eval = Some("./judge.sh".into());
    s
}

/// The spans of `events`, each in its last form, in the order they first ended.
fn spans(events: &[Event], fork_of: Option<TraceIds>) -> Vec<Span> {
    let mut b = TraceBuilder::new("run-1", &[7; 32], fork_of);
    let mut out: Vec<Span> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let seq = i as u64 + 1;
        let state = state_at(events, seq);
        out.extend(b.observe(seq, e, &state));
    }
    out.extend(b.finish());
    let mut unique: Vec<Span> = Vec::new();
    for s in out {
        match unique.iter_mut().find(|u| u.span_id == s.span_id) {
            Some(u) => *u = s,
            None => unique.push(s),
        }
    }
    unique
}

fn attr<'a>(s: &'a Span, key: &str) -> Option<&'a AttrValue> {
    s.attributes.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

#[test]
fn a_rescued_task_is_a_tree_of_attempts_with_their_verdicts() {
    let g = given_run(vec![judged("a"), task("b")])
        .and(start("a"))
        .and(submit("a"))
        .and(score("a", 0.3))
        .and(start("a"))
        .and(submit("a"))
        .and(score("a", 0.9))
        .and(CommandKind::Finish);
    let spans = spans(&g.events, None);
    let run: Vec<&Span> = spans.iter().filter(|s| s.parent.is_none()).collect();
    assert_eq!(run.len(), 1);
    let run = run[0];
    assert_eq!(run.kind, SpanKind::Chain);
    assert!(run.error.is_some(), "b never ran: the run is not a success");
    let task_a = spans.iter().find(|s| s.name == "task a").unwrap();
    assert_eq!(task_a.parent, Some(run.span_id));
    let attempts: Vec<&Span> = spans.iter().filter(|s| s.kind == SpanKind::Agent).collect();
    assert_eq!(attempts.len(), 2);
    assert!(attempts.iter().all(|a| a.parent == Some(task_a.span_id)));
    assert!(attempts[0].error.is_some() && attempts[1].error.is_none());
    let label = |a: &Span| {
        let e = a
            .events
            .iter()
            .find(|e| e.name == "gen_ai.evaluation.result")
            .unwrap();
        e.attributes
            .iter()
            .find(|(k, _)| k == "gen_ai.evaluation.score.label")
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(label(attempts[0]), AttrValue::Str("rescue".into()));
    assert_eq!(label(attempts[1]), AttrValue::Str("pass".into()));
    let evals: Vec<&Span> = spans
        .iter()
        .filter(|s| s.kind == SpanKind::Evaluator)
        .collect();
    assert_eq!(evals.len(), 2, "one evaluator span per attempt");
    assert_eq!(evals[0].parent, Some(attempts[0].span_id));
    assert!(attempts[0].start <= evals[0].start && evals[0].end <= attempts[0].end);
    assert_eq!(
        attr(attempts[1], "runlog.attempt"),
        Some(&AttrValue::Int(2))
    );
    assert_eq!(
        spans,
        self::spans(&g.events, None),
        "the same ids and spans every time"
    );
}

#[test]
fn a_fork_links_to_the_run_it_came_from() {
    let parent = TraceIds::of(&[9; 32]);
    let g = given([EventKind::Forked {
        run: RunId::from("f"),
        from_run: RunId::from("p"),
        at_seq: 4,
        from_hash: Hash::of(b"p"),
    }]);
    let spans = spans(&g.events, Some(parent));
    let link = spans[0].link.clone().expect("linked");
    assert_eq!(
        (link.trace_id, link.span_id),
        (parent.trace_id, parent.run_span())
    );
}

#[test]
fn usage_lands_on_the_span_of_the_command_that_used_it() {
    let g = given_run(vec![judged("a")])
        .and(start("a"))
        .and(CommandKind::RecordUsage {
            task: id("a"),
            stage: usage::UsageStage::Agent,
            reports: vec![usage::UsageReport {
                model: Some("m".into()),
                provider: None,
                tokens: usage::Tokens {
                    input: 100,
                    output: 10,
                    ..usage::Tokens::default()
                },
                cost_usd: Some(0.5),
            }],
        })
        .and(submit("a"))
        .and(score("a", 0.9));
    let spans = spans(&g.events, None);
    let attempt = spans.iter().find(|s| s.kind == SpanKind::Agent).unwrap();
    assert_eq!(
        attr(attempt, "llm.token_count.prompt"),
        Some(&AttrValue::Int(100))
    );
    assert_eq!(attr(attempt, "llm.cost.total"), Some(&AttrValue::F64(0.5)));
    assert_eq!(
        attr(attempt, "gen_ai.request.model"),
        Some(&AttrValue::Str("m".into()))
    );
}

#[test]
fn a_model_call_is_an_llm_span_under_its_attempt_with_its_usage() {
    let call = model_call::ModelCall {
        task: "a".into(),
        attempt: 1,
        stage: usage::UsageStage::Agent,
        n: 1,
        provider: "anthropic".into(),
        api: model_call::ModelApi::Messages,
        model: Some("claude-scripted".into()),
        streamed: true,
        status: 200,
        end: model_call::CallEnd::Answered,
        first_byte_ms: Some(30),
        duration_ms: 400,
        tokens: usage::Tokens {
            input: 1200,
            output: 30,
            ..usage::Tokens::default()
        },
        cost_usd: None,
        cost: usage::CostSource::Unpriced,
        request: None,
        response: None,
        assembled: None,
        error: None,
    };
    let g = given_run(vec![task("a")])
        .and(start("a"))
        .and(CommandKind::RecordModelCall {
            call: Box::new(call),
        })
        .and(submit("a"));
    let spans = spans(&g.events, None);
    let llm: Vec<&Span> = spans.iter().filter(|s| s.kind == SpanKind::Llm).collect();
    assert_eq!(llm.len(), 1, "{spans:?}");
    let attempt = spans.iter().find(|s| s.kind == SpanKind::Agent).unwrap();
    assert_eq!(llm[0].parent, Some(attempt.span_id), "under its attempt");
    assert_eq!(llm[0].name, "chat claude-scripted");
    assert_eq!(SpanKind::Llm.name(), "LLM");
    assert_eq!(
        attr(llm[0], "gen_ai.usage.input_tokens"),
        Some(&AttrValue::Int(1200))
    );
    assert_eq!(
        attr(llm[0], "gen_ai.usage.output_tokens"),
        Some(&AttrValue::Int(30))
    );
    assert_eq!(
        llm[0].end.0 - llm[0].start.0,
        400,
        "from the request to the answer's end"
    );
    assert!(llm[0].error.is_none());
}

#[test]
fn a_finished_runs_span_is_handed_out_once_and_again_after_a_resume() {
    let g = given_run(vec![task("a")])
        .and(start("a"))
        .and(submit("a"))
        .and(CommandKind::Finish);
    let run_spans = |events: &[Event]| {
        let mut b = TraceBuilder::new("run-1", &[7; 32], None);
        let mut out: Vec<Span> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            let seq = i as u64 + 1;
            out.extend(b.observe(seq, e, &state_at(events, seq)));
        }
        out.extend(b.finish());
        out.into_iter().filter(|s| s.parent.is_none()).count()
    };
    // Each span is sent as it ends: the run's at its end, not once more when the builder goes.
    assert_eq!(run_spans(&g.events), 1);
    let resumed = g.and(CommandKind::Resume {
        reason: "again".into(),
    });
    assert_eq!(
        run_spans(&resumed.events),
        2,
        "a resume sends it again, later"
    );
}
