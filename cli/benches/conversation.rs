//! What a coding agent's conversation costs the store: a task whose agent is shaped like Claude
//! Code (`conversation_agent.py`: a long system prompt, 18 tool schemas, the whole conversation
//! sent again on every turn) makes 40 streamed calls through `runlog run`'s gateway to a
//! scripted provider here; the run's blobs (`runlog du RUN --json`) against the bytes of the
//! requests and answers as they went over the wire (`runlog show RUN TASK --calls --json`).
//!
//! Then the run is rerun with its answers from the recording (`runlog rerun`): how long that
//! takes beside the run, and that the provider was not called again.
//!
//! `cargo bench -p runlog-cli --bench conversation` (under a minute); `RUNLOG_BENCH_TURNS` (40).
//! Prints its goal: at most 0.25 of the raw bytes stored. Asserts nothing about time.
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use axum::body::Bytes;
use axum::response::IntoResponse;
use serde_json::{json, Value};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// The answer to a turn: a sentence streamed in pieces, then a tool call to read a file, as
/// Claude's streams come (ping, usage with the prompt cache, the tool's input in pieces).
fn answer(turn: usize) -> String {
    let text = format!(
        "Turn {turn}: the failure comes from the tokenizer returning None on an empty line; \
         I will read the next module to see where that value is consumed before changing it."
    );
    let input =
        json!({"file_path": format!("/work/repo/src/mod{:02}/file{:05}.py", turn % 50, turn * 37)})
            .to_string();
    let mut events = vec![
        json!({"type": "message_start", "message": {"id": format!("msg_{turn:04}"), "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": null, "usage": {"input_tokens": 4, "cache_creation_input_tokens": 900 + turn * 40, "cache_read_input_tokens": 12_000 + turn * 900, "output_tokens": 1}}}),
        json!({"type": "ping"}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ];
    for piece in text.as_bytes().chunks(24) {
        let piece = String::from_utf8_lossy(piece);
        events.push(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 0}));
    events.push(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": format!("toolu_{turn:04}"), "name": "Read", "input": {}}}));
    for piece in input.as_bytes().chunks(12) {
        let piece = String::from_utf8_lossy(piece);
        events.push(json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": piece}}));
    }
    events.push(json!({"type": "content_block_stop", "index": 1}));
    events.push(json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 96}}));
    events.push(json!({"type": "message_stop"}));
    events
        .iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap()))
        .collect()
}

/// The scripted provider on loopback, counting its calls; its base URL.
fn provider(runtime: &tokio::runtime::Runtime, called: Arc<AtomicUsize>) -> String {
    let app = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(|body: Bytes| async move {
            called.fetch_add(1, Ordering::SeqCst);
            let asked: Value = serde_json::from_slice(&body).unwrap();
            let turn = asked["messages"].as_array().map_or(0, |m| m.len() / 2);
            ([("content-type", "text/event-stream")], answer(turn)).into_response()
        }),
    );
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

fn json_of(store: &Path, args: &[&str]) -> Value {
    let out = common::runlog(store).args(args).output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", common::text(&out));
    // The first line: `du` follows its runs with a line on the store.
    let first = out.stdout.split(|&b| b == b'\n').next().unwrap_or_default();
    serde_json::from_slice(first).unwrap()
}

fn main() {
    let turns: usize = std::env::var("RUNLOG_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let called = Arc::new(AtomicUsize::new(0));
    let upstream = provider(&runtime, called.clone());
    let dir = tempfile::tempdir().unwrap();
    let agent = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/conversation_agent.py");
    let wf = common::workflow(
        dir.path(),
        "conversation.toml",
        &format!(
            "name = \"conversation\"\n[settings]\nworkspace = \"none\"\n\
             [[task]]\nid = \"fix\"\nrun = \"python3 {} {turns}\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{upstream}\"\n",
            agent.display()
        ),
    );
    let store = dir.path().join("store");
    let live = Instant::now();
    let out = common::runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--quiet", "--run-id", "talk"])
        .env("ANTHROPIC_API_KEY", "sk-scripted")
        .output()
        .unwrap();
    let live = live.elapsed();
    assert!(out.status.success(), "{}", common::text(&out));
    let called_live = called.load(Ordering::SeqCst);
    let again = Instant::now();
    let out = common::runlog(&store)
        .args(["rerun", "talk", "--as", "talk-again", "--quiet"])
        .output()
        .unwrap();
    let again = again.elapsed();
    assert!(out.status.success(), "{}", common::text(&out));

    let calls = json_of(&store, &["show", "talk", "fix", "--calls", "--json"]);
    let calls = calls["calls"].as_array().unwrap();
    assert_eq!(calls.len(), turns, "every turn is a recorded call");
    let bytes = |field: &str| -> u64 {
        calls
            .iter()
            .map(|c| c[field]["bytes"].as_u64().unwrap_or(0))
            .sum()
    };
    let (requests, answers, assembled) = (bytes("request"), bytes("response"), bytes("assembled"));
    let raw = requests + answers;
    let space = json_of(&store, &["du", "talk", "--json"]);
    let stored = space["blob_bytes"].as_u64().unwrap();
    let apparent = common::apparent_bytes(&store.join("blobs"));
    let ratio = stored as f64 / raw as f64;
    println!(
        "{turns}-turn conversation: {} KB of requests and {} KB of streamed answers ({} KB per call) sent; \
         kept whole they would take {} KB with the assembled messages",
        requests / 1024,
        answers / 1024,
        raw / 1024 / turns as u64,
        (raw + assembled) / 1024,
    );
    println!(
        "stored: {} KB on disk ({} bytes per call; {} KB of file contents), {ratio:.3} of the raw bytes (goal 0.25: {})",
        stored / 1024,
        stored / turns as u64,
        apparent / 1024,
        if ratio <= 0.25 { "met" } else { "NOT MET" }
    );
    let replayed = json_of(&store, &["show", "talk-again", "fix", "--calls", "--json"]);
    let replayed = replayed["calls"].as_array().map_or(0, Vec::len);
    println!(
        "rerun from the recording: {replayed} of {turns} calls answered in {:.2} s ({:.1} ms a call), \
         the run itself {:.2} s; the provider called {} times by the rerun (goal 0)",
        again.as_secs_f64(),
        again.as_secs_f64() * 1000.0 / turns as f64,
        live.as_secs_f64(),
        called.load(Ordering::SeqCst) - called_live,
    );
}
