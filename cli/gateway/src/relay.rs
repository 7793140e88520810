//! One call through the gateway: who is calling (their key), which API and provider, the
//! request passed on with the real key (and handed over to be stored as it leaves), the answer
//! passed back piece by piece as it arrives (a stream is never held, whole or in part, before
//! the caller sees it), and the call handed to the engine before the answer's end goes out:
//! the piece that closes a stream (its closing event, or the last piece of a body whose end is
//! known) waits for the record, and the end of every answer does.

use super::budget::{self, Judged, Reserve, Standing};
use super::limits::{self, Limited};
use super::providers::{self, error_body, kind_of, Provider, ProviderKind};
use super::recorded::{Book, Found};
use super::{upstream, Asked, Caller, Following, Passed, Shared, MAX_REQUEST_BYTES};
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use runlog_core::dialect::{api_of, closes_stream};
use runlog_core::model_call::{measure, CallEnd, ModelApi, ModelCall};
use runlog_core::relocate::AnswerMapped;
use runlog_core::rerun::{Answers, Divergence};
use runlog_core::reservation::Reservation;
use runlog_core::usage::CostSource;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::mpsc;

/// The longest the last frame of an answer waits for the call's record.
const RECORD_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Headers that belong to one connection, or carry the caller's key: never passed on. Nor is
/// `accept-encoding`: an answer compressed for the caller could not be read for its usage.
const NOT_PASSED: [&str; 8] = [
    "accept-encoding",
    "host",
    "connection",
    "content-length",
    "transfer-encoding",
    "authorization",
    "x-api-key",
    "keep-alive",
];

pub(super) async fn relay(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let anthropic_caller =
        parts.headers.contains_key("x-api-key") || parts.headers.contains_key("anthropic-version");
    let Some(api) = api_of(parts.method.as_str(), parts.uri.path()) else {
        let kind = if anthropic_caller {
            ProviderKind::Anthropic
        } else {
            ProviderKind::Openai
        };
        let message = format!(
            "runlog's gateway passes on POST /v1/messages, /v1/messages/count_tokens, \
             /v1/chat/completions, /v1/responses and GET /v1/models, not {} {}",
            parts.method,
            parts.uri.path()
        );
        return answer(kind, StatusCode::NOT_FOUND, "not_found_error", &message);
    };
    let kind = kind_of(api, anthropic_caller);
    let Some(caller) = key_of(&parts.headers).and_then(|k| shared.caller(&k)) else {
        return answer(
            kind,
            StatusCode::UNAUTHORIZED,
            "authentication_error",
            "this key is not one runlog gave a running command: a command's key works while it runs, for its own run",
        );
    };
    // Which provider serves the API is known before the body is read, so a call refused for
    // its body (too large) is recorded with its provider like any other.
    let provider = Provider::for_kind(&shared.providers, kind).cloned();
    let mut call = Call {
        shared: shared.clone(),
        caller: caller.clone(),
        api,
        started,
        n: caller.next_call(),
        provider: provider
            .as_ref()
            .map_or_else(|| kind.name().to_owned(), |p| p.name.clone()),
        model: None,
        streamed: false,
        request: Vec::new(),
        diverged: None,
        mapped: None,
        permit: None,
    };
    let bytes = match axum::body::to_bytes(body, MAX_REQUEST_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            let why =
                format!("the request is larger than {MAX_REQUEST_BYTES} bytes, or was cut off");
            call.refused(CallEnd::Refused, &why);
            return answer(
                kind,
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                &why,
            );
        }
    };
    call.request = bytes.to_vec();
    if let Ok(head) = serde_json::from_slice::<Head>(&bytes) {
        call.model = head.model.map(|m| m.chars().take(200).collect());
        call.streamed = head.stream == Some(true);
    }
    let Some(provider) = provider else {
        let why = format!("the workflow names no provider that speaks {}", api.name());
        call.refused(CallEnd::Refused, &why);
        return answer(kind, StatusCode::BAD_GATEWAY, "api_error", &why);
    };
    // A model the experiment maps is asked of the provider under its new name, and never
    // answered from a recording of the one asked (the request kept is the one the command sent).
    let mapped = shared.models.answering(call.model.as_deref());
    let bytes = match &mapped {
        Some(answering) => {
            call.model = Some(answering.clone());
            asking(&bytes, answering).unwrap_or(bytes)
        }
        None => bytes,
    };
    if let Some(book) = shared
        .book
        .as_ref()
        .filter(|b| b.answers != Answers::Live && mapped.is_none())
    {
        call = match from_recording(book, &caller, call, kind, api, &bytes).await {
            Ok(answered) => return answered,
            Err(goes_live) => goes_live,
        };
    }
    let over_budget = |call: Call, words: String| {
        let (status, error_type) = providers::over_budget(kind);
        call.refused(
            CallEnd::OverBudget {
                spent: words.clone(),
            },
            &words,
        );
        answer(kind, status, error_type, &words)
    };
    match shared.standing(&caller.task) {
        Some(Standing::Spent(words)) => return over_budget(call, words),
        Some(Standing::Budgeted) if budget::spends(api) => {
            let worst = match reserve(&shared, &call, &caller, api, &bytes).await {
                Ok(worst) => worst,
                Err(words) => return over_budget(call, words),
            };
            let given = worst.bounded.is_some().then(|| {
                format!(
                    "{} (given by runlog: {})",
                    worst.output_tokens,
                    worst.bound.name()
                )
            });
            let tokens = worst.tokens();
            let bytes = worst.bounded.unwrap_or(bytes);
            // Its worst case is held until its record settles it: the call goes on even if the
            // command hangs up now, so that it is recorded.
            let going = tokio::spawn(go(call, provider, kind, parts, bytes, Some(tokens)));
            let mut response = going.await.unwrap_or_else(|_| {
                answer(
                    kind,
                    StatusCode::BAD_GATEWAY,
                    "api_error",
                    "runlog's gateway failed",
                )
            });
            if let Some(v) = given.and_then(|g| HeaderValue::from_str(&g).ok()) {
                response.headers_mut().insert("x-runlog-output-bound", v);
            }
            return response;
        }
        _ => {}
    }
    go(call, provider, kind, parts, bytes, None).await
}

/// Asks the engine to hold `call`'s worst case against the budgets, asking again as calls in
/// flight settle, up to [`budget::RESERVE_WAIT`]; the worst case once reserved, or why not.
async fn reserve(
    shared: &Shared,
    call: &Call,
    caller: &Caller,
    api: ModelApi,
    request: &Bytes,
) -> Result<budget::Worst, String> {
    let worst = budget::worst_case(api, request, call.model.as_deref(), &shared.bounds);
    let Some(judge) = &shared.judge else {
        return Err("runlog's gateway has no one to judge this call's budget".to_owned());
    };
    let waited = Instant::now();
    loop {
        // Made ready before asking, so a settle between the answer and the wait is not missed.
        let settled = shared.settled.notified();
        tokio::pin!(settled);
        settled.as_mut().enable();
        let (judged, told) = tokio::sync::oneshot::channel();
        let asked = judge.send(Reserve {
            reservation: Reservation {
                task: caller.task.clone(),
                attempt: caller.attempt,
                stage: caller.stage,
                n: call.n,
                provider: call.provider.clone(),
                api,
                model: call.model.clone(),
                input_tokens: worst.input_tokens,
                output_tokens: worst.output_tokens,
                bound: worst.bound,
                cost_usd: None,
            },
            judged,
        });
        let judged = match asked {
            Ok(()) => told.await.ok(),
            Err(_) => None,
        };
        match judged {
            Some(Judged::Go) => return Ok(worst),
            Some(Judged::Refused(words)) => return Err(words),
            None => return Err("the run is ending: runlog refused this call".to_owned()),
            Some(Judged::Wait(words)) => {
                if waited.elapsed() >= budget::RESERVE_WAIT {
                    return Err(format!(
                        "{words} (it waited {} s for calls in flight to settle)",
                        waited.elapsed().as_secs()
                    ));
                }
                tokio::select! {
                    () = settled => {}
                    () = tokio::time::sleep(budget::ASK_AGAIN) => {}
                }
            }
        }
    }
}

/// The call sent to `provider` with the runner's key, its answer passed back as it comes;
/// `worst`, its worst case in tokens when its reservation already weighed it.
async fn go(
    call: Call,
    provider: Provider,
    kind: ProviderKind,
    parts: axum::http::request::Parts,
    bytes: Bytes,
    worst: Option<u64>,
) -> Response {
    let shared = call.shared.clone();
    let started = call.started;
    let mut call = call;
    if let Some(limiter) = shared.limiters.get(&provider.name) {
        let worst = worst.unwrap_or_else(|| {
            budget::worst_case(call.api, &bytes, call.model.as_deref(), &shared.bounds).tokens()
        });
        match limiter.admit(worst).await {
            Ok(permit) => call.permit = Some(permit),
            Err(limited) => return call.rate_limited(kind, &provider, limited),
        }
    }
    let Some(key) = shared.keys.get(&provider.name).cloned() else {
        let why = format!(
            "the runner's environment has no {} for provider {}",
            provider.api_key_env, provider.name
        );
        call.refused(CallEnd::Refused, &why);
        return answer(kind, StatusCode::BAD_GATEWAY, "api_error", &why);
    };
    call.hand_over_request();
    let upstream = match send(&shared, &provider, &key, &parts, bytes).await {
        Ok(r) => r,
        Err(why) => {
            let why = format!("provider {} could not be reached: {why}", provider.name);
            call.refused(CallEnd::UpstreamFailed, &why);
            return answer(kind, StatusCode::BAD_GATEWAY, "api_error", &why);
        }
    };
    let first_byte_ms = millis(started);
    let status = upstream.status();
    let mut headers = HeaderMap::new();
    for (name, value) in upstream.headers() {
        if !NOT_PASSED.contains(&name.as_str()) {
            headers.append(name.clone(), value.clone());
        }
    }
    let (to_caller, from_upstream) = mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(call.pump(
        upstream.into_body(),
        to_caller,
        status.as_u16(),
        first_byte_ms,
    ));
    let stream = futures_util::stream::unfold(from_upstream, |mut rx| async move {
        rx.recv().await.map(|frame| (frame, rx))
    });
    let mut response = Response::new(Body::from_stream(stream));
    *response.status_mut() = status;
    *response.headers_mut() = headers;
    response
}

/// `request` asking `model` instead of the model it names.
fn asking(request: &Bytes, model: &str) -> Option<Bytes> {
    let mut body: serde_json::Value = serde_json::from_slice(request).ok()?;
    *body.as_object_mut()?.get_mut("model")? = serde_json::Value::String(model.to_owned());
    serde_json::to_vec(&body).ok().map(Bytes::from)
}

/// In a rerun, the recording's answer to `call`, or its refusal once its command diverged;
/// the call back when it goes to the provider (`recorded-then-live`, from the first that differs).
async fn from_recording(
    book: &Book,
    caller: &Caller,
    mut call: Call,
    kind: ProviderKind,
    api: ModelApi,
    request: &[u8],
) -> Result<Response, Call> {
    let now = caller
        .following
        .lock()
        .map(|f| f.clone())
        .unwrap_or_default();
    match now {
        Following::Recording => {}
        Following::Live => return Err(call),
        Following::Stopped(words) => return Ok(call.diverged(kind, &words)),
    }
    let command = (&caller.task, caller.attempt, caller.stage);
    let (seq, why) = match book.find(command, call.n, (&call.provider, api), request) {
        Found::Served {
            seq,
            call: recorded,
            response,
            mapped,
        } => {
            call.mapped = (!mapped.is_empty()).then(|| AnswerMapped {
                task: caller.task.clone(),
                attempt: caller.attempt,
                stage: caller.stage,
                n: call.n,
                recorded_seq: seq,
                mapped,
            });
            return Ok(call.replayed(seq, &recorded, response).await);
        }
        Found::Differs { seq, why } => (seq, why),
    };
    let live = book.answers == Answers::RecordedThenLive;
    let next = if live {
        Following::Live
    } else {
        Following::Stopped(format!(
            "runlog rerun: this call differs from the recorded run's: {why}; \
             its attempt stops here (rerun with --answers recorded-then-live to send it to the provider)"
        ))
    };
    call.diverged = Some(Divergence {
        task: caller.task.clone(),
        attempt: caller.attempt,
        stage: caller.stage,
        n: call.n,
        recorded_seq: seq,
        why,
        live,
    });
    if let Ok(mut f) = caller.following.lock() {
        *f = next.clone();
    }
    match next {
        Following::Stopped(words) => Ok(call.diverged(kind, &words)),
        Following::Recording | Following::Live => Err(call),
    }
}

/// What a request says of itself, read without building the rest (a whole conversation, often
/// megabytes, on the path of the call).
#[derive(serde::Deserialize)]
struct Head {
    #[serde(default, deserialize_with = "text_or_none")]
    model: Option<String>,
    #[serde(default, deserialize_with = "flag_or_none")]
    stream: Option<bool>,
}

/// A field as text, or none when it is something else (a request is passed on whatever it
/// holds).
fn text_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match serde::Deserialize::deserialize(d)? {
        serde_json::Value::String(s) => Some(s),
        _ => None,
    })
}

/// A field as true or false, or none when it is something else.
fn flag_or_none<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    let value: serde_json::Value = serde::Deserialize::deserialize(d)?;
    Ok(value.as_bool())
}

/// A call under way.
struct Call {
    shared: Arc<Shared>,
    caller: Arc<Caller>,
    api: ModelApi,
    started: Instant,
    n: u32,
    provider: String,
    model: Option<String>,
    streamed: bool,
    request: Vec<u8>,
    /// In a rerun, how it differs from the recording.
    diverged: Option<Divergence>,
    /// In a rerun, the recorded run's places its answer was given as the rerun's.
    mapped: Option<AnswerMapped>,
    /// Its turn under its provider's rate limits, settled with the tokens it used.
    permit: Option<limits::Permit>,
}

impl Call {
    /// A call over its provider's rate limits: recorded, and answered 429 in the provider's
    /// shape with when to come back (`retry-after-ms`, and `retry-after` in whole seconds),
    /// which the SDKs honour in their own retries.
    fn rate_limited(self, kind: ProviderKind, provider: &Provider, limited: Limited) -> Response {
        let ms = u64::try_from(limited.retry_after.as_millis()).unwrap_or(u64::MAX);
        let words = format!(
            "runlog: over provider {}'s {} in the workflow; retry in {:.1} s",
            provider.name,
            limited.limit,
            ms as f64 / 1000.0
        );
        self.refused(
            CallEnd::RateLimited {
                limit: limited.limit,
                retry_after_ms: ms,
            },
            &words,
        );
        let error_type = match kind {
            ProviderKind::Anthropic => "rate_limit_error",
            ProviderKind::Openai => "rate_limit_exceeded",
        };
        let mut response = answer(kind, StatusCode::TOO_MANY_REQUESTS, error_type, &words);
        let headers = response.headers_mut();
        headers.insert("retry-after-ms", HeaderValue::from(ms));
        headers.insert("retry-after", HeaderValue::from(ms.div_ceil(1000)));
        response
    }

    /// Hands the request to whoever stores it while the call is under way (if anyone does):
    /// the call's record then comes without it.
    fn hand_over_request(&mut self) {
        let Some(keeper) = &self.shared.asked else {
            return;
        };
        let asked = Asked {
            task: self.caller.task.clone(),
            attempt: self.caller.attempt,
            stage: self.caller.stage,
            n: self.n,
            model: self.model.clone(),
            request: std::mem::take(&mut self.request),
        };
        if let Err(mpsc::error::SendError(back)) = keeper.send(asked) {
            self.request = back.request;
        }
    }

    /// Hands the call to the engine; what it returns is told once the call is recorded.
    fn record(
        self,
        status: u16,
        end: CallEnd,
        first_byte_ms: Option<u64>,
        response: Vec<u8>,
        error: Option<String>,
    ) -> tokio::sync::oneshot::Receiver<()> {
        // A call answered from the recording, or by no provider at all (refused, unreachable),
        // used no tokens and cost nothing.
        let replayed = matches!(end, CallEnd::Replayed { .. });
        let unanswered = status == 0;
        let measured = if replayed {
            Default::default()
        } else {
            measure(&response, self.streamed)
        };
        if let Some(permit) = self.permit {
            permit.settle(measured.tokens.total());
        }
        let call = ModelCall {
            task: self.caller.task.clone(),
            attempt: self.caller.attempt,
            stage: self.caller.stage,
            n: self.n,
            provider: self.provider,
            api: self.api,
            model: measured.model.or(self.model),
            streamed: self.streamed,
            status,
            end,
            first_byte_ms,
            duration_ms: millis(self.started),
            tokens: measured.tokens,
            cost_usd: (replayed || unanswered).then_some(0.0),
            cost: CostSource::Unpriced,
            request: None,
            response: None,
            assembled: None,
            error,
        };
        let (recorded, told) = tokio::sync::oneshot::channel();
        let _ = self.shared.passed.send(Passed {
            call,
            request: self.request,
            response,
            recorded: Some(recorded),
            diverged: self.diverged,
            mapped: self.mapped,
        });
        told
    }

    /// Answers with the recorded call at `seq` (`recorded`, whose answer is `response`), once
    /// the call is recorded.
    async fn replayed(mut self, seq: u64, recorded: &ModelCall, response: Vec<u8>) -> Response {
        self.streamed = recorded.streamed;
        self.model = recorded.model.clone();
        let status = StatusCode::from_u16(recorded.status).unwrap_or(StatusCode::OK);
        let content_type = if recorded.streamed {
            "text/event-stream"
        } else {
            "application/json"
        };
        let first_byte_ms = millis(self.started);
        let told = self.record(
            recorded.status,
            CallEnd::Replayed { seq },
            Some(first_byte_ms),
            response.clone(),
            None,
        );
        let _ = tokio::time::timeout(RECORD_WAIT, told).await;
        (status, [(header::CONTENT_TYPE, content_type)], response).into_response()
    }

    /// A call of a rerun refused as it differs from the recording: a 400 in the provider's
    /// shape, which SDKs do not retry.
    fn diverged(self, kind: ProviderKind, words: &str) -> Response {
        self.refused(CallEnd::Diverged, words);
        answer(
            kind,
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            words,
        )
    }

    /// A call that got no answer from the provider: what the command was told instead.
    fn refused(self, end: CallEnd, why: &str) {
        // Nothing of the answer waits for this record: the refusal is all there is.
        drop(self.record(0, end, None, Vec::new(), Some(why.to_owned())));
    }

    /// Passes the answer on piece by piece as it arrives, keeping a copy; the call is handed to
    /// the engine before the closing piece and the end go out, so an answered call is never
    /// missing from the log.
    async fn pump(
        self,
        mut body: hyper::body::Incoming,
        to_caller: mpsc::Sender<Result<Bytes, std::io::Error>>,
        status: u16,
        first_byte_ms: u64,
    ) {
        let mut kept = Vec::new();
        let mut held: Option<Bytes> = None;
        let gone = || {
            (
                CallEnd::ClientGone,
                Some("the command hung up before the answer ended".to_owned()),
            )
        };
        let end = loop {
            // A command that hangs up cancels the call at once (dropping the provider's
            // answer closes its connection), not when the provider next sends something.
            let next = tokio::select! {
                next = body.frame() => next,
                () = to_caller.closed() => break gone(),
            };
            match next {
                None => break (CallEnd::Answered, None),
                Some(Err(e)) => break (CallEnd::UpstreamFailed, Some(e.to_string())),
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    kept.extend_from_slice(&data);
                    // A piece held as the last that was not: it goes now.
                    if let Some(previous) = held.take() {
                        if to_caller.send(Ok(previous)).await.is_err() {
                            break gone();
                        }
                    }
                    // The last piece leaves after the record; every other at once.
                    if hyper::body::Body::is_end_stream(&body) || closes_stream(&data) {
                        held = Some(data);
                    } else if to_caller.send(Ok(data)).await.is_err() {
                        break gone();
                    }
                }
            }
        };
        let failed = end.1.clone();
        let shared = self.shared.clone();
        let recorded = self.record(status, end.0, Some(first_byte_ms), kept, end.1);
        // The last frame leaves once the call is in the log (or the engine is gone), so an
        // answered call is never missing after a crash, and the next call sees what it spent.
        let _ = tokio::time::timeout(RECORD_WAIT, recorded).await;
        // What it held is settled: calls waiting for room ask again.
        shared.settled.notify_waiters();
        if let Some(last) = held {
            let _ = to_caller.send(Ok(last)).await;
        }
        if let Some(why) = failed {
            let _ = to_caller.send(Err(std::io::Error::other(why))).await;
        }
    }
}

/// The caller's key: `x-api-key` (Anthropic's SDKs) or `Authorization: Bearer` (OpenAI's).
fn key_of(headers: &HeaderMap) -> Option<String> {
    if let Some(k) = headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(k.trim().to_owned());
    }
    let auth = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    auth.strip_prefix("Bearer ").map(|k| k.trim().to_owned())
}

/// The request passed on to `provider` with its real key.
async fn send(
    shared: &Shared,
    provider: &Provider,
    key: &str,
    parts: &axum::http::request::Parts,
    body: Bytes,
) -> Result<axum::http::Response<hyper::body::Incoming>, String> {
    let api_path = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    let mut request = axum::http::Request::builder().method(parts.method.clone());
    for (name, value) in &parts.headers {
        if !NOT_PASSED.contains(&name.as_str()) {
            request = request.header(name, value);
        }
    }
    let (name, value) = provider.auth_header(key);
    let value =
        HeaderValue::from_str(&value).map_err(|_| "the key is not a header value".to_owned())?;
    let request = request.header(name, value);
    shared
        .upstreams
        .send(
            provider,
            request,
            &upstream::path_at(provider, api_path),
            body,
        )
        .await
}

fn answer(kind: ProviderKind, status: StatusCode, error_type: &str, message: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        error_body(kind, error_type, message),
    )
        .into_response()
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
