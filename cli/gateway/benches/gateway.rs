//! What the model gateway adds to a call: the same scripted provider on loopback called
//! directly and through the gateway, by the same client over one kept-alive connection.
//!
//! - added latency of a non-streamed call with a 10 KB answer (p50, p99), goals 1 ms and 5 ms;
//! - added time to the first byte of a streamed answer, goal 1 ms;
//! - calls per second through the gateway from 16 clients at once, goal 1,000.
//!
//! Each figure twice: with the call acknowledged as recorded at once (the gateway's own cost),
//! and with each call recorded as the engine records it before the answer's end leaves (its
//! request and answer put in a store's blob area and an event appended, durably, on a sled
//! store in the temporary directory).
//!
//! `cargo bench -p runlog-gateway --bench gateway` (about a minute); `RUNLOG_BENCH_CALLS`
//! (2,000) sequential calls per latency figure, `RUNLOG_BENCH_SECONDS` (5) for the throughput.
//! Prints its figures; asserts nothing about time.
#![allow(clippy::print_stdout)]

use axum::body::Bytes;
use axum::response::IntoResponse;
use http_body_util::{BodyExt, Full};
use runlog_core::usage::UsageStage;
use runlog_core::TaskId;
use runlog_gateway::{Gateway, Passed, Provider, ProviderKind, Setup};
use runlog_store::{EventLog, Log, Options};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A 10 KB answer with its usage.
fn answer() -> String {
    let text = "x".repeat(10 * 1024);
    format!(
        r#"{{"id":"msg_1","type":"message","model":"claude-scripted","content":[{{"type":"text","text":"{text}"}}],"usage":{{"input_tokens":100,"output_tokens":2500}}}}"#
    )
}

/// A stream: its first event at once, then twenty more.
fn stream() -> String {
    let mut s = String::from("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-scripted\",\"usage\":{\"input_tokens\":100,\"output_tokens\":1}}}\n\n");
    for _ in 0..20 {
        s.push_str("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word \"}}\n\n");
    }
    s.push_str("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    s
}

async fn provider() -> String {
    let (plain, streamed) = (answer(), stream());
    let app = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(move |body: Bytes| {
            let (plain, streamed) = (plain.clone(), streamed.clone());
            async move {
                if body.windows(13).any(|w| w == b"\"stream\":true") {
                    ([("content-type", "text/event-stream")], streamed).into_response()
                } else {
                    ([("content-type", "application/json")], plain).into_response()
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// How the gateway's calls are acknowledged as recorded.
#[derive(Clone, Copy)]
enum Recording {
    AtOnce,
    Durably,
}

async fn gateway(provider: &str, recording: Recording, store: &std::path::Path) -> Gateway {
    let (tx, mut handed) = mpsc::unbounded_channel::<Passed>();
    let log = match recording {
        Recording::AtOnce => None,
        Recording::Durably => Some(Arc::new(Log::open(store, Options::default()).unwrap())),
    };
    tokio::spawn(async move {
        while let Some(mut passed) = handed.recv().await {
            if let Some(log) = &log {
                let log = log.clone();
                let (request, response) = (passed.request.clone(), passed.response.clone());
                tokio::task::spawn_blocking(move || {
                    // Packed, as the engine keeps a call's bodies.
                    log.put_blob_like(&request, None).unwrap();
                    log.put_blob_like(&response, None).unwrap();
                    let head = log.head("bench").unwrap().map(|h| h.seq);
                    log.append("bench", Some(head.unwrap_or(0)), vec![vec![0u8; 300]])
                        .unwrap();
                })
                .await
                .unwrap();
            }
            if let Some(told) = passed.recorded.take() {
                let _ = told.send(());
            }
        }
    });
    let providers = vec![Provider {
        name: "anthropic".into(),
        kind: ProviderKind::Anthropic,
        base_url: provider.to_owned(),
        api_key_env: "ANTHROPIC_API_KEY".into(),
        ca_file: None,
        limits: Default::default(),
    }];
    let keys = HashMap::from([("anthropic".to_owned(), "sk-real".to_owned())]);
    Gateway::start(Setup::new(providers, keys), tx)
        .await
        .unwrap()
}

/// A client on one kept-alive connection.
struct Client {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    authority: String,
}

impl Client {
    async fn to(base: &str) -> Client {
        let authority = base.trim_start_matches("http://").to_owned();
        let tcp = tokio::net::TcpStream::connect(&authority).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let (sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
                .await
                .unwrap();
        tokio::spawn(conn);
        Client { sender, authority }
    }

    /// One call: the time to its first byte and to its end.
    async fn call(&mut self, key: &str, streamed: bool) -> (Duration, Duration) {
        let body = if streamed {
            r#"{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}"#
        } else {
            r#"{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}"#
        };
        let request = axum::http::Request::post("/v1/messages")
            .header("host", &self.authority)
            .header("x-api-key", key)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from_static(body.as_bytes())))
            .unwrap();
        let started = Instant::now();
        self.sender.ready().await.unwrap();
        let response = self.sender.send_request(request).await.unwrap();
        let mut body = response.into_body();
        let mut first = None;
        while let Some(frame) = body.frame().await {
            let frame = frame.unwrap();
            if frame.data_ref().is_some_and(|d| !d.is_empty()) && first.is_none() {
                first = Some(started.elapsed());
            }
        }
        (first.unwrap_or_default(), started.elapsed())
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// `n` sequential calls: (first bytes, ends), each sorted.
async fn latencies(
    base: &str,
    key: &str,
    streamed: bool,
    n: u64,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut client = Client::to(base).await;
    for _ in 0..50 {
        client.call(key, streamed).await;
    }
    let (mut firsts, mut ends) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (first, end) = client.call(key, streamed).await;
        firsts.push(first);
        ends.push(end);
    }
    firsts.sort();
    ends.sort();
    (firsts, ends)
}

fn verdict(met: bool, goal: &str) -> String {
    format!("{goal}: {}", if met { "met" } else { "NOT MET" })
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn calls_per_second(base: &str, key: &str, clients: usize, seconds: u64) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (base, key, done) = (base.to_owned(), key.to_owned(), done.clone());
        tasks.push(tokio::spawn(async move {
            let mut client = Client::to(&base).await;
            while Instant::now() < until {
                client.call(&key, false).await;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    for t in tasks {
        t.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let calls = setting("RUNLOG_BENCH_CALLS", 2000);
    let seconds = setting("RUNLOG_BENCH_SECONDS", 5);
    let upstream = provider().await;
    let (direct_first, direct) = latencies(&upstream, "sk-real", false, calls).await;
    let (direct_stream_first, _) = latencies(&upstream, "sk-real", true, calls).await;
    let direct_rate = calls_per_second(&upstream, "sk-real", 16, seconds).await;
    println!(
        "direct: non-streamed p50 {:.3} ms, p99 {:.3} ms (first byte p50 {:.3} ms); streamed first byte p50 {:.3} ms, p99 {:.3} ms; {direct_rate:.0} calls/s from 16 clients",
        ms(percentile(&direct, 0.5)),
        ms(percentile(&direct, 0.99)),
        ms(percentile(&direct_first, 0.5)),
        ms(percentile(&direct_stream_first, 0.5)),
        ms(percentile(&direct_stream_first, 0.99)),
    );
    for (name, recording) in [
        ("recorded at once", Recording::AtOnce),
        ("recorded durably", Recording::Durably),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let gw = gateway(&upstream, recording, &dir.path().join("store")).await;
        let key = gw.admit(&TaskId::from("bench"), 1, UsageStage::Agent);
        let (_, through) = latencies(gw.url(), &key, false, calls).await;
        let (stream_first, _) = latencies(gw.url(), &key, true, calls).await;
        let rate = calls_per_second(gw.url(), &key, 16, seconds).await;
        let added = |p: f64| ms(percentile(&through, p)) - ms(percentile(&direct, p));
        let first_added =
            ms(percentile(&stream_first, 0.5)) - ms(percentile(&direct_stream_first, 0.5));
        println!(
            "gateway, {name}: non-streamed p50 {:.3} ms, p99 {:.3} ms: added p50 {:+.3} ms ({}), p99 {:+.3} ms ({}); streamed first byte p50 {:.3} ms: added {first_added:+.3} ms ({}); {rate:.0} calls/s from 16 clients ({})",
            ms(percentile(&through, 0.5)),
            ms(percentile(&through, 0.99)),
            added(0.5),
            verdict(added(0.5) <= 1.0, "goal 1 ms"),
            added(0.99),
            verdict(added(0.99) <= 5.0, "goal 5 ms"),
            ms(percentile(&stream_first, 0.5)),
            verdict(first_added <= 1.0, "goal 1 ms"),
            verdict(rate >= 1000.0, "goal 1,000"),
        );
    }
}
