//! A provider's rate limits hold for the calls agents make through the gateway: agents written
//! with the official SDKs send sixty calls each in a burst to providers limited to thirty a
//! minute; the gateway lets a minute's worth through, then one every two seconds, answers the
//! rest 429 with when to come back in each provider's shape, and the SDKs' own retries bring
//! every call through within the limit. The scripted provider sees when each call arrives.

mod common;
use axum::response::IntoResponse;
use common::provider::{logged, serve};
use common::{runlog, text, workflow};
use std::sync::{Arc, Mutex};
use std::time::Instant;

const ANSWER: &str = r#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-scripted","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}"#;
const CHAT: &str = r#"{"id":"c1","object":"chat.completion","created":1,"model":"gpt-scripted","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11}}"#;

/// When each call reached the scripted provider, by API path.
type Arrivals = Arc<Mutex<Vec<(String, Instant)>>>;

fn provider() -> (String, Arrivals) {
    let arrivals: Arrivals = Arc::default();
    let (a, c) = (arrivals.clone(), arrivals.clone());
    let app = axum::Router::new()
        .route(
            "/v1/messages",
            axum::routing::post(move || {
                a.lock().unwrap().push(("messages".into(), Instant::now()));
                async { ([("content-type", "application/json")], ANSWER).into_response() }
            }),
        )
        .route(
            "/v1/chat/completions",
            axum::routing::post(move || {
                c.lock().unwrap().push(("chat".into(), Instant::now()));
                async { ([("content-type", "application/json")], CHAT).into_response() }
            }),
        );
    (serve(app), arrivals)
}

/// Sixty calls at once with each SDK, each retrying on its own as the SDKs do (honouring
/// `retry-after-ms`), with more retries than their default of two: a burst of sixty takes a
/// minute to clear at thirty a minute.
const AGENT: &str = r#"
import anthropic, openai, threading
a = anthropic.Anthropic(max_retries=20)
o = openai.OpenAI(max_retries=20)
done, failed = [], []
def ask_anthropic(n):
    try:
        a.messages.create(model="claude-x", max_tokens=8, messages=[{"role": "user", "content": f"a{n}"}])
        done.append(n)
    except Exception as e:
        failed.append(repr(e))
def ask_openai(n):
    try:
        o.chat.completions.create(model="gpt-x", max_tokens=8, messages=[{"role": "user", "content": f"o{n}"}])
        done.append(n)
    except Exception as e:
        failed.append(repr(e))
threads = [threading.Thread(target=f, args=(n,)) for n in range(60) for f in (ask_anthropic, ask_openai)]
for t in threads: t.start()
for t in threads: t.join()
print("answered", len(done), "failed", len(failed), failed[:3])
"#;

#[test]
fn a_burst_over_the_rate_limit_gets_429s_and_the_sdks_retries_bring_it_through_within_the_limit() {
    if !common::sdks_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (provider, arrivals) = provider();
    std::fs::write(dir.path().join("agent.py"), AGENT).unwrap();
    let wf = workflow(
        dir.path(),
        "burst",
        &format!(
            "name = \"burst\"\n[settings]\nworkspace = \"none\"\n\
             [[task]]\nid = \"burst\"\nrun = \"python3 agent.py\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\nrequests_per_minute = 30\n\
             [providers.openai]\nkind = \"openai\"\nbase_url = \"{provider}/v1\"\nrequests_per_minute = 30\n"
        ),
    );
    let store = dir.path().join("store");
    let out = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "burst", "--quiet"])
        .env("ANTHROPIC_API_KEY", "sk-ant-real")
        .env("OPENAI_API_KEY", "sk-openai-real")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let said: String = logged(&store, "burst", &["--kind", "output-recorded"])
        .iter()
        .filter_map(|e| e["text"].as_str().map(str::to_owned))
        .collect();
    assert!(said.contains("answered 120 failed 0"), "{said}");
    // Each provider saw its sixty calls no faster than its limit lets them: a minute's worth
    // at once, then one every two seconds.
    let arrivals = arrivals.lock().unwrap().clone();
    for api in ["messages", "chat"] {
        let times: Vec<Instant> = arrivals
            .iter()
            .filter(|(a, _)| a == api)
            .map(|(_, t)| *t)
            .collect();
        assert_eq!(times.len(), 60, "{api}");
        for (k, t) in times.iter().enumerate().skip(30) {
            let after = t.duration_since(times[0]).as_secs_f64();
            let earliest = 2.0 * (k as f64 - 29.0) - 0.25;
            assert!(
                after >= earliest,
                "{api} call {k} came {after:.2} s after the first"
            );
        }
    }
    // The refusals are recorded, each with its limit and when it was told to come back.
    let calls = logged(&store, "burst", &["--kind", "model-called"]);
    let limited: Vec<&serde_json::Value> = calls
        .iter()
        .filter(|c| c["end"]["end"] == "rate-limited")
        .collect();
    for provider in ["anthropic", "openai"] {
        assert!(
            limited.iter().any(|c| c["provider"] == provider),
            "{provider}: {limited:?}"
        );
    }
    assert!(limited.iter().all(|c| {
        c["end"]["limit"] == "requests_per_minute = 30"
            && c["end"]["retry_after_ms"].as_u64().unwrap_or(0) > 0
    }));
    let answered = calls
        .iter()
        .filter(|c| c["end"]["end"] == "answered")
        .count();
    assert_eq!(answered, 120);
}
