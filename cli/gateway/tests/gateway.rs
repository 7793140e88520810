//! The model gateway against a scripted provider on loopback: calls pass on with the real
//! key and come back as they streamed; each is handed over with the usage its answer counted;
//! a key works only while its command runs.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use http_body_util::{BodyExt, Full};
use runlog_core::model_call::{CallEnd, ModelApi};
use runlog_core::usage::UsageStage;
use runlog_core::TaskId;
use runlog_gateway::{Gateway, Passed, Provider, ProviderKind, Setup, Standing};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

const REAL_KEY: &str = "sk-ant-real-key-never-given-out";

const STREAM: &str = "event: message_start\n\
data: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-scripted\",\"usage\":{\"input_tokens\":1200,\"output_tokens\":1}}}\n\n\
event: content_block_delta\n\
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"done\"}}\n\n\
event: message_delta\n\
data: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":30}}\n\n\
event: message_stop\n\
data: {\"type\":\"message_stop\"}\n\n";

const ANSWER: &str = r#"{"id":"msg_1","type":"message","model":"claude-scripted","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":100,"output_tokens":5}}"#;

const CHAT: &str = r#"{"id":"c1","object":"chat.completion","model":"gpt-scripted","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":2,"total_tokens":42}}"#;

/// A provider speaking Anthropic Messages (streamed when asked) and OpenAI Chat Completions,
/// with the key it was given noted for the test.
async fn scripted_provider(seen_keys: Arc<Mutex<Vec<String>>>) -> String {
    let bearers = seen_keys.clone();
    let app = axum::Router::new()
        .route(
            "/v1/chat/completions",
            axum::routing::post(move |headers: HeaderMap| {
                let seen = bearers.clone();
                async move {
                    let auth = headers.get("authorization").and_then(|v| v.to_str().ok());
                    seen.lock()
                        .unwrap()
                        .push(auth.unwrap_or_default().to_owned());
                    ([("content-type", "application/json")], CHAT).into_response()
                }
            }),
        )
        .route(
            "/v1/messages",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let seen = seen_keys.clone();
                async move {
                    let key = headers
                        .get("x-api-key")
                        .and_then(|v| v.to_str().ok())
                        .unwrap_or_default()
                        .to_owned();
                    seen.lock().unwrap().push(key);
                    // An answer compressed for the caller could not be read for its usage.
                    if headers.contains_key("accept-encoding") {
                        seen.lock()
                            .unwrap()
                            .push("accept-encoding was passed on".into());
                    }
                    let asked: serde_json::Value = serde_json::from_slice(&body).unwrap();
                    if asked["stream"] == true {
                        ([("content-type", "text/event-stream")], STREAM).into_response()
                    } else {
                        ([("content-type", "application/json")], ANSWER).into_response()
                    }
                }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

use axum::response::IntoResponse;

/// A gateway to `provider`, and the calls it hands over, each acknowledged as recorded at once
/// (as the engine does once the call is in the log).
async fn gateway_to(provider: &str) -> (Gateway, mpsc::UnboundedReceiver<Passed>) {
    gateway_trusting(provider, None).await
}

/// [`gateway_to`] a provider whose certificate `ca_file`'s CA signed.
async fn gateway_trusting(
    provider: &str,
    ca_file: Option<std::path::PathBuf>,
) -> (Gateway, mpsc::UnboundedReceiver<Passed>) {
    let (tx, mut handed) = mpsc::unbounded_channel::<Passed>();
    let (recorded, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(mut passed) = handed.recv().await {
            if let Some(told) = passed.recorded.take() {
                let _ = told.send(());
            }
            let _ = recorded.send(passed);
        }
    });
    let providers = vec![Provider {
        name: "anthropic".into(),
        kind: ProviderKind::Anthropic,
        base_url: provider.to_owned(),
        api_key_env: "ANTHROPIC_API_KEY".into(),
        ca_file,
        limits: Default::default(),
    }];
    let keys = HashMap::from([("anthropic".to_owned(), REAL_KEY.to_owned())]);
    (
        Gateway::start(Setup::new(providers, keys), tx)
            .await
            .unwrap(),
        rx,
    )
}

/// A client connection to `authority` (`HOST:PORT`).
async fn connect(authority: &str) -> hyper::client::conn::http1::SendRequest<Full<Bytes>> {
    let stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    let (sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    sender
}

/// `POST {base}{path}` with `key` as an Anthropic SDK sends it: status and body.
async fn post(base: &str, path: &str, key: &str, body: &str) -> (StatusCode, String) {
    let authority = base.trim_start_matches("http://").to_owned();
    let mut sender = connect(&authority).await;
    let request = axum::http::Request::post(path)
        .header("host", authority)
        .header("x-api-key", key)
        .header("anthropic-version", "2023-06-01")
        .header("accept-encoding", "gzip, deflate")
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_owned())))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn a_call_passes_on_with_the_real_key_and_is_handed_over_with_its_usage() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let provider = scripted_provider(seen.clone()).await;
    let (gateway, mut passed) = gateway_to(&provider).await;
    let key = gateway.admit(&TaskId::from("build"), 2, UsageStage::Agent);
    assert_ne!(key, REAL_KEY);

    let (status, body) = post(
        gateway.url(),
        "/v1/messages",
        &key,
        r#"{"model":"claude-x","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}"#,
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, ANSWER));
    let first = passed.recv().await.unwrap();
    assert_eq!(first.call.task, TaskId::from("build"));
    assert_eq!(
        (first.call.attempt, first.call.stage, first.call.n),
        (2, UsageStage::Agent, 1)
    );
    assert_eq!(
        (first.call.api, first.call.end.clone(), first.call.status),
        (ModelApi::Messages, CallEnd::Answered, 200)
    );
    assert_eq!(
        first.call.model.as_deref(),
        Some("claude-scripted"),
        "the model that answered"
    );
    assert_eq!(
        (first.call.tokens.input, first.call.tokens.output),
        (100, 5)
    );
    assert!(!first.call.streamed);
    assert!(String::from_utf8_lossy(&first.request).contains("\"claude-x\""));
    assert_eq!(first.response, ANSWER.as_bytes());

    // Streamed: the events come through as the provider sent them, and the usage is the
    // stream's (input at the start, output at the end).
    let (status, body) = post(
        gateway.url(),
        "/v1/messages?beta=true",
        &key,
        r#"{"model":"claude-x","max_tokens":10,"stream":true,"messages":[]}"#,
    )
    .await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, STREAM));
    let second = passed.recv().await.unwrap();
    assert_eq!(second.call.n, 2);
    assert!(second.call.streamed);
    assert_eq!(
        (second.call.tokens.input, second.call.tokens.output),
        (1200, 30)
    );
    assert!(second.call.first_byte_ms.is_some());

    assert_eq!(
        *seen.lock().unwrap(),
        vec![REAL_KEY.to_owned(), REAL_KEY.to_owned()],
        "the provider saw the real key, never the command's"
    );
}

#[tokio::test]
async fn a_key_works_only_while_its_command_runs_and_a_refusal_is_in_the_providers_shape() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let provider = scripted_provider(seen.clone()).await;
    let (gateway, mut passed) = gateway_to(&provider).await;
    let task = TaskId::from("build");
    let key = gateway.admit(&task, 1, UsageStage::Evaluator);
    gateway.dismiss(&task);
    for key in [key.as_str(), REAL_KEY, "made-up"] {
        let (status, body) = post(gateway.url(), "/v1/messages", key, r#"{"model":"m"}"#).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{key}: {body}");
        let error: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["type"], "error", "Anthropic's error shape: {body}");
        assert_eq!(error["error"]["type"], "authentication_error", "{body}");
    }
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing reached the provider"
    );
    assert!(
        passed.try_recv().is_err(),
        "a call with no command's key is no command's call"
    );
}

#[tokio::test]
async fn an_openai_call_goes_to_the_openai_provider_with_its_key_as_a_bearer() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let provider = scripted_provider(seen.clone()).await;
    let (tx, mut passed) = mpsc::unbounded_channel::<Passed>();
    // A base URL written as the SDKs' are, ending in /v1: the path is not doubled.
    let providers = vec![Provider {
        name: "local".into(),
        kind: ProviderKind::Openai,
        base_url: format!("{provider}/v1"),
        api_key_env: "LOCAL_KEY".into(),
        ca_file: None,
        limits: Default::default(),
    }];
    let keys = HashMap::from([("local".to_owned(), "sk-local-real".to_owned())]);
    let gateway = Gateway::start(Setup::new(providers, keys), tx)
        .await
        .unwrap();
    let key = gateway.admit(&TaskId::from("t"), 1, UsageStage::Tests);
    let authority = gateway.url().trim_start_matches("http://").to_owned();
    let mut sender = connect(&authority).await;
    let request = axum::http::Request::post("/v1/chat/completions")
        .header("host", authority)
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(
            br#"{"model":"gpt-x","messages":[{"role":"user","content":"hi"}]}"#,
        )))
        .unwrap();
    let answer = tokio::spawn(async move {
        let response = sender.send_request(request).await.unwrap();
        let status = response.status();
        (
            status,
            response.into_body().collect().await.unwrap().to_bytes(),
        )
    });
    let mut handed = passed.recv().await.unwrap();
    handed.recorded.take().unwrap().send(()).unwrap();
    let (status, body) = answer.await.unwrap();
    assert_eq!((status, &body[..]), (StatusCode::OK, CHAT.as_bytes()));
    assert_eq!(
        *seen.lock().unwrap(),
        vec!["Bearer sk-local-real".to_owned()]
    );
    let call = handed.call;
    assert_eq!(
        (call.provider.as_str(), call.api),
        ("local", ModelApi::ChatCompletions)
    );
    assert_eq!((call.tokens.input, call.tokens.output), (40, 2));
    assert_eq!(call.stage, UsageStage::Tests);
}

#[tokio::test]
async fn a_call_over_budget_is_refused_in_the_providers_shape_and_reaches_no_provider() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let provider = scripted_provider(seen.clone()).await;
    let (gateway, mut passed) = gateway_to(&provider).await;
    let task = TaskId::from("build");
    let key = gateway.admit(&task, 1, UsageStage::Agent);
    let words = "the run's cost budget of $0.0100 is spent ($0.0120)".to_owned();
    gateway.set_budgets(HashMap::from([(task, Standing::Spent(words.clone()))]));
    let (status, body) = post(gateway.url(), "/v1/messages", &key, r#"{"model":"m"}"#).await;
    assert_eq!(status, StatusCode::PAYMENT_REQUIRED, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["type"], "billing_error", "{body}");
    assert_eq!(error["error"]["message"], words.as_str());
    assert!(
        seen.lock().unwrap().is_empty(),
        "nothing over budget reaches the provider"
    );
    let call = passed.recv().await.unwrap().call;
    assert_eq!(call.end, CallEnd::OverBudget { spent: words });
}

#[tokio::test]
async fn a_provider_that_is_down_is_said_to_the_command_and_recorded() {
    // A port nobody listens on: bound, then closed.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (gateway, mut passed) = gateway_to(&closed).await;
    let key = gateway.admit(&TaskId::from("a"), 1, UsageStage::Agent);
    let (status, body) = post(gateway.url(), "/v1/messages", &key, r#"{"model":"m"}"#).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert!(body.contains("could not be reached"), "{body}");
    let call = passed.recv().await.unwrap().call;
    assert_eq!((call.end, call.status), (CallEnd::UpstreamFailed, 0));
    assert!(call.error.unwrap().contains("could not be reached"));
}

/// A provider on HTTPS with a certificate for `localhost` from a CA of the test's own.
struct TlsProvider {
    url: String,
    /// The CA's certificate.
    ca_file: std::path::PathBuf,
    /// Connections it accepted.
    connections: Arc<AtomicUsize>,
    /// Requests it was sent in HTTP/2.
    in_http2: Arc<AtomicUsize>,
}

/// A [`TlsProvider`], offering HTTP/2 (ALPN) when `http2`.
async fn provider_over_tls(dir: &std::path::Path, http2: bool) -> TlsProvider {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "test CA");
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, ca_cert.pem()).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let leaf = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(
        vec![cert.der().clone()],
        rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).unwrap(),
    )
    .unwrap();
    if http2 {
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    }
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (connections, in_http2) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (accepted, counted) = (connections.clone(), in_http2.clone());
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            accepted.fetch_add(1, Ordering::SeqCst);
            let (acceptor, counted) = (acceptor.clone(), counted.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                let service = hyper::service::service_fn(move |request: axum::http::Request<_>| {
                    if request.version() == axum::http::Version::HTTP_2 {
                        counted.fetch_add(1, Ordering::SeqCst);
                    }
                    async {
                        // A model's moment to answer: the calls overlap.
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        Ok::<_, std::convert::Infallible>(
                            axum::http::Response::builder()
                                .header("content-type", "application/json")
                                .body(Full::new(Bytes::from_static(ANSWER.as_bytes())))
                                .unwrap(),
                        )
                    }
                });
                let io = hyper_util::rt::TokioIo::new(tls);
                let _ = if h2 {
                    hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
                        .serve_connection(io, service)
                        .await
                } else {
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await
                };
            });
        }
    });
    TlsProvider {
        url: format!("https://localhost:{port}"),
        ca_file,
        connections,
        in_http2,
    }
}

#[tokio::test]
async fn a_provider_offering_http2_gets_calls_made_at_once_on_one_connection() {
    let dir = tempfile::tempdir().unwrap();
    let provider = provider_over_tls(dir.path(), true).await;
    let (gateway, mut passed) =
        gateway_trusting(&provider.url, Some(provider.ca_file.clone())).await;
    let key = gateway.admit(&TaskId::from("a"), 1, UsageStage::Agent);
    let url = gateway.url().to_owned();
    // One call opens the connection; then 40 at once share it.
    let (status, body) = post(&url, "/v1/messages", &key, r#"{"model":"m"}"#).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, ANSWER));
    let calls: Vec<_> = (0..40)
        .map(|_| {
            let (url, key) = (url.clone(), key.clone());
            tokio::spawn(async move { post(&url, "/v1/messages", &key, r#"{"model":"m"}"#).await })
        })
        .collect();
    for call in calls {
        let (status, body) = call.await.unwrap();
        assert_eq!((status, body.as_str()), (StatusCode::OK, ANSWER));
    }
    for _ in 0..41 {
        assert_eq!(passed.recv().await.unwrap().call.end, CallEnd::Answered);
    }
    assert_eq!(
        provider.in_http2.load(Ordering::SeqCst),
        41,
        "every call in HTTP/2"
    );
    assert_eq!(
        provider.connections.load(Ordering::SeqCst),
        1,
        "41 calls, 40 of them at once, on one connection"
    );
}

#[tokio::test]
async fn a_provider_over_https_is_trusted_by_its_ca_file_and_refused_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let TlsProvider { url, ca_file, .. } = provider_over_tls(dir.path(), false).await;
    for (ca, answered) in [(Some(ca_file), true), (None, false)] {
        let (tx, mut handed) = mpsc::unbounded_channel::<Passed>();
        let providers = vec![Provider {
            name: "anthropic".into(),
            kind: ProviderKind::Anthropic,
            base_url: url.clone(),
            api_key_env: "ANTHROPIC_API_KEY".into(),
            ca_file: ca,
            limits: Default::default(),
        }];
        let keys = HashMap::from([("anthropic".to_owned(), REAL_KEY.to_owned())]);
        let gateway = Gateway::start(Setup::new(providers, keys), tx)
            .await
            .unwrap();
        let key = gateway.admit(&TaskId::from("a"), 1, UsageStage::Agent);
        let url = gateway.url().to_owned();
        let call =
            tokio::spawn(async move { post(&url, "/v1/messages", &key, r#"{"model":"m"}"#).await });
        let mut passed = handed.recv().await.unwrap();
        if let Some(told) = passed.recorded.take() {
            let _ = told.send(());
        }
        let (status, body) = call.await.unwrap();
        if answered {
            assert_eq!((status, body.as_str()), (StatusCode::OK, ANSWER));
            assert_eq!(passed.call.end, CallEnd::Answered);
        } else {
            assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
            assert!(
                body.contains("TLS"),
                "an untrusted certificate is said: {body}"
            );
            assert_eq!(passed.call.end, CallEnd::UpstreamFailed);
        }
    }
}

#[tokio::test]
async fn a_ca_file_that_is_not_one_stops_the_gateway_from_opening() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("ca.pem");
    std::fs::write(&bad, "not a certificate").unwrap();
    let (tx, _rx) = mpsc::unbounded_channel::<Passed>();
    let providers = vec![Provider {
        name: "corp".into(),
        kind: ProviderKind::Openai,
        base_url: "https://proxy.example:8443/v1".into(),
        api_key_env: "OPENAI_API_KEY".into(),
        ca_file: Some(bad.clone()),
        limits: Default::default(),
    }];
    let error = Gateway::start(Setup::new(providers, HashMap::new()), tx)
        .await
        .unwrap_err();
    let said = error.to_string();
    assert!(
        said.contains("provider corp's ca_file") && said.contains("no certificate"),
        "{said}"
    );
}

/// A provider that answers as it is told by the call's `x-script` header: `429` (rate limited,
/// with a `retry-after`), `529` (overloaded), or `slow` (a stream whose first event comes at
/// once and the rest never: it is cancelled when its answer is dropped). Its calls are counted;
/// `cancelled` hears when a slow stream was dropped.
async fn faulty_provider() -> (String, Arc<Mutex<u32>>, mpsc::UnboundedReceiver<()>) {
    let calls = Arc::new(Mutex::new(0));
    let (cancel_tx, cancelled) = mpsc::unbounded_channel();
    let counted = calls.clone();
    let app = axum::Router::new().route(
        "/v1/messages",
        axum::routing::post(move |headers: HeaderMap| {
            let (counted, cancel_tx) = (counted.clone(), cancel_tx.clone());
            async move {
                *counted.lock().unwrap() += 1;
                let script = headers.get("x-script").and_then(|v| v.to_str().ok());
                match script.unwrap_or_default() {
                    "429" => (
                        StatusCode::TOO_MANY_REQUESTS,
                        [("retry-after", "7"), ("content-type", "application/json")],
                        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
                    )
                        .into_response(),
                    "529" => (
                        StatusCode::from_u16(529).unwrap(),
                        [("retry-after", "1"), ("content-type", "application/json")],
                        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                    )
                        .into_response(),
                    _ => {
                        /// Tells the test when the stream is dropped.
                        struct Dropped(mpsc::UnboundedSender<()>);
                        impl Drop for Dropped {
                            fn drop(&mut self) {
                                let _ = self.0.send(());
                            }
                        }
                        let guard = Dropped(cancel_tx);
                        let first = futures_util::stream::once(async {
                            Ok::<_, std::io::Error>(Bytes::from(
                                "event: message_start\ndata: {\"type\":\"message_start\"}\n\n",
                            ))
                        });
                        let never = futures_util::stream::once(async move {
                            let _guard = guard;
                            std::future::pending::<()>().await;
                            Ok(Bytes::new())
                        });
                        (
                            [("content-type", "text/event-stream")],
                            axum::body::Body::from_stream(
                                futures_util::StreamExt::chain(first, never),
                            ),
                        )
                            .into_response()
                    }
                }
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, calls, cancelled)
}

/// `POST /v1/messages` with `key` and the provider's `script`: the response as it came.
async fn scripted_call(
    base: &str,
    key: &str,
    script: &str,
) -> axum::http::Response<hyper::body::Incoming> {
    let authority = base.trim_start_matches("http://").to_owned();
    let mut sender = connect(&authority).await;
    let request = axum::http::Request::post("/v1/messages")
        .header("host", authority)
        .header("x-api-key", key)
        .header("x-script", script)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(r#"{"model":"m","stream":true}"#)))
        .unwrap();
    sender.send_request(request).await.unwrap()
}

#[tokio::test]
async fn a_providers_429_and_529_reach_the_command_as_they_were_and_runlog_does_not_retry() {
    let (provider, calls, _) = faulty_provider().await;
    let (gateway, mut passed) = gateway_to(&provider).await;
    let key = gateway.admit(&TaskId::from("a"), 1, UsageStage::Agent);
    for (script, status, error) in [
        ("429", 429, "rate_limit_error"),
        ("529", 529, "overloaded_error"),
    ] {
        let response = scripted_call(gateway.url(), &key, script).await;
        assert_eq!(response.status().as_u16(), status);
        let retry_after = response.headers().get("retry-after").cloned();
        assert!(
            retry_after.is_some(),
            "the provider's retry-after is passed on"
        );
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert!(String::from_utf8_lossy(&body).contains(error));
        let call = passed.recv().await.unwrap();
        assert_eq!(
            (call.call.status, call.call.end),
            (status, CallEnd::Answered),
            "recorded as the provider answered"
        );
        assert_eq!(call.response, body.to_vec());
    }
    assert_eq!(
        *calls.lock().unwrap(),
        2,
        "one call each: runlog adds no retries"
    );
}

#[tokio::test]
async fn a_command_that_hangs_up_mid_stream_cancels_the_providers_call() {
    let (provider, _, mut cancelled) = faulty_provider().await;
    let (gateway, mut passed) = gateway_to(&provider).await;
    let key = gateway.admit(&TaskId::from("a"), 1, UsageStage::Agent);
    let response = scripted_call(gateway.url(), &key, "slow").await;
    assert_eq!(response.status(), StatusCode::OK);
    let mut body = response.into_body();
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert!(String::from_utf8_lossy(&first).contains("message_start"));
    // The command goes away with the answer half read.
    drop(body);
    tokio::time::timeout(std::time::Duration::from_secs(10), cancelled.recv())
        .await
        .expect("the provider's stream was not cancelled")
        .unwrap();
    let call = passed.recv().await.unwrap();
    assert_eq!(call.call.end, CallEnd::ClientGone);
    assert!(String::from_utf8_lossy(&call.response).contains("message_start"));
}

#[tokio::test]
async fn a_request_over_the_cap_is_refused_in_the_providers_shape_and_not_passed_on() {
    let (provider, calls, _) = faulty_provider().await;
    let (gateway, mut passed) = gateway_to(&provider).await;
    let key = gateway.admit(&TaskId::from("a"), 1, UsageStage::Agent);
    let huge = format!(
        r#"{{"model":"m","messages":[{{"role":"user","content":"{}"}}]}}"#,
        "x".repeat(runlog_gateway::MAX_REQUEST_BYTES)
    );
    let (status, body) = post(gateway.url(), "/v1/messages", &key, &huge).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
    let error: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (&error["type"], &error["error"]["type"]),
        (&"error".into(), &"request_too_large".into()),
        "Anthropic's error shape: {body}"
    );
    let call = passed.recv().await.unwrap().call;
    assert_eq!(call.end, CallEnd::Refused);
    assert_eq!(*calls.lock().unwrap(), 0, "nothing reached the provider");
}

/// `POST {base}{path}` with `key` in both providers' headers: status, headers and body.
async fn post_seen(
    base: &str,
    path: &str,
    key: &str,
    body: &'static str,
) -> (StatusCode, axum::http::HeaderMap, serde_json::Value) {
    let authority = base.trim_start_matches("http://").to_owned();
    let mut sender = connect(&authority).await;
    let request = axum::http::Request::post(path)
        .header("host", authority)
        .header("x-api-key", key)
        .header("authorization", format!("Bearer {key}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from_static(body.as_bytes())))
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        headers,
        serde_json::from_slice(&body).unwrap_or_default(),
    )
}

#[tokio::test]
async fn a_call_over_a_rate_limit_is_answered_429_in_the_providers_shape_with_when_to_come_back() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let provider = scripted_provider(seen.clone()).await;
    let (tx, mut passed) = mpsc::unbounded_channel::<Passed>();
    // One call a minute to each, and no waiting for a turn.
    let limits = runlog_gateway::RateLimits {
        requests_per_minute: Some(1),
        wait: Some(std::time::Duration::ZERO),
        ..Default::default()
    };
    let providers = vec![
        Provider {
            name: "anthropic".into(),
            kind: ProviderKind::Anthropic,
            base_url: provider.clone(),
            api_key_env: "ANTHROPIC_API_KEY".into(),
            ca_file: None,
            limits,
        },
        Provider {
            name: "openai".into(),
            kind: ProviderKind::Openai,
            base_url: format!("{provider}/v1"),
            api_key_env: "OPENAI_API_KEY".into(),
            ca_file: None,
            limits,
        },
    ];
    let keys = HashMap::from([
        ("anthropic".to_owned(), REAL_KEY.to_owned()),
        ("openai".to_owned(), "sk-openai-real".to_owned()),
    ]);
    let gateway = Gateway::start(Setup::new(providers, keys), tx)
        .await
        .unwrap();
    tokio::spawn(async move {
        while let Some(mut handed) = passed.recv().await {
            if let Some(told) = handed.recorded.take() {
                let _ = told.send(());
            }
        }
    });
    let key = gateway.admit(&TaskId::from("t"), 1, UsageStage::Agent);
    let asks = [
        (
            "/v1/messages",
            r#"{"model":"m","max_tokens":8,"messages":[]}"#,
        ),
        ("/v1/chat/completions", r#"{"model":"m","messages":[]}"#),
    ];
    for (path, body) in asks {
        let (first, _, _) = post_seen(gateway.url(), path, &key, body).await;
        assert_eq!(first, StatusCode::OK, "{path}");
        let (status, headers, error) = post_seen(gateway.url(), path, &key, body).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{path}: {error}");
        let ms: u64 = headers["retry-after-ms"].to_str().unwrap().parse().unwrap();
        let s: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((59_000..=60_000).contains(&ms) && s == 60, "{ms} ms, {s} s");
        let (kind, message) = match path {
            "/v1/messages" => (&error["error"]["type"], &error["error"]["message"]),
            _ => (&error["error"]["code"], &error["error"]["message"]),
        };
        assert!(
            kind == "rate_limit_error" || kind == "rate_limit_exceeded",
            "{error}"
        );
        assert!(
            message
                .as_str()
                .unwrap()
                .contains("requests_per_minute = 1"),
            "{error}"
        );
    }
    assert_eq!(
        seen.lock().unwrap().len(),
        2,
        "the refused calls reached no provider"
    );
}
