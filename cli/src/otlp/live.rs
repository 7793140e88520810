//! Live export: each span sent when its part of the run ends, while the run goes on. The
//! engine only folds the event and offers the spans to a bounded queue (never waiting); a thread
//! of its own sends them in batches, retrying a receiver that is down or busy with backoff. A
//! full queue or a receiver that stays down costs spans, never the run: what was not sent is
//! counted, and the same ids come again from `runlog export RUN --otlp URL`. What `export`
//! adds goes too: what model calls said on their spans when asked (read from the log as each
//! batch leaves), and once the run's spans are sent, its verdicts as Phoenix annotations.

use super::{annotations, content, history, request, Endpoint, Target};
use runlog_core::projections::trace::{Span, SpanKind, TraceBuilder, TraceIds};
use runlog_core::{Event, RunState};
use runlog_replay::Replay;
use runlog_runner::Observer;
use runlog_store::EventLog;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Spans waiting to be sent, at most.
const QUEUE: usize = 4096;
/// Spans per request.
const BATCH: usize = 256;
/// How long spans wait for others to share their request.
const LINGER: Duration = Duration::from_millis(200);
/// Tries of one request (the first, then retries with backoff) while the receiver is down.
const TRIES: u32 = 4;
/// How long the end of a run waits for the last spans to go.
const DRAIN: Duration = Duration::from_secs(10);

/// What a live export did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// Where the spans went.
    pub url: String,
    /// Spans the receiver accepted.
    pub sent: u64,
    /// Spans not exported (queue full, receiver down or refusing, the run ended first).
    pub missed: u64,
    /// The last reason a request failed.
    pub last_error: Option<String>,
    /// Verdicts sent as annotations (Phoenix).
    pub annotated: u64,
}

#[derive(Debug, Default)]
struct Counters {
    offered: AtomicU64,
    sent: AtomicU64,
    /// The last request failed: the end of the run does not wait for a receiver that is down.
    down: std::sync::atomic::AtomicBool,
    last_error: std::sync::Mutex<Option<String>>,
    /// Verdicts the receiver took as annotations.
    annotated: AtomicU64,
}

/// The engine's side: an observer that folds events into spans and queues them.
pub struct Traced<O> {
    inner: O,
    builder: Option<TraceBuilder>,
    queue: Option<SyncSender<Span>>,
    counters: Arc<Counters>,
}

impl<O> std::fmt::Debug for Traced<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Traced").finish_non_exhaustive()
    }
}

/// The sending side, to wait for after the run.
#[derive(Debug)]
pub struct Exporting {
    thread: Option<std::thread::JoinHandle<()>>,
    counters: Arc<Counters>,
    /// Where spans go.
    pub endpoint: Endpoint,
}

/// Starts a live export of `run` (of `log`) to `target`, observing through `inner`. The run's
/// history so far is folded first (a resumed run's spans that ended before are not sent again:
/// `export` sends the whole trace).
pub fn start<O: Observer>(
    log: Arc<dyn EventLog>,
    run: &str,
    target: &Target,
    inner: O,
) -> Result<(Traced<O>, Exporting), runlog_replay::ReplayError> {
    let mut builder: Option<TraceBuilder> = None;
    let replay = Replay::new(log.as_ref());
    replay.walk(run, None, &mut |seq, hash, event, state| {
        let b = builder.get_or_insert_with(|| history::builder(&replay, run, hash, &event.kind));
        let _ = b.observe(seq, event, state);
    })?;
    let ids = builder.as_ref().map(TraceBuilder::ids);
    let (tx, rx) = sync_channel(QUEUE);
    let counters = Arc::new(Counters::default());
    let endpoint = target.endpoint.clone();
    let thread = {
        let sending = Sending {
            log: log.clone(),
            run: run.to_owned(),
            project: target.project.clone(),
            endpoint: endpoint.clone(),
            content: target.content,
        };
        let counters = counters.clone();
        std::thread::Builder::new()
            .name("runlog-otlp".into())
            .spawn(move || send_loop(&rx, ids, &sending, &counters))
            .ok()
    };
    Ok((
        Traced {
            inner,
            builder,
            queue: Some(tx),
            counters: counters.clone(),
        },
        Exporting {
            thread,
            counters,
            endpoint,
        },
    ))
}

impl<O> Traced<O> {
    /// `inner` alone: no trace is exported.
    pub fn plain(inner: O) -> Self {
        Self {
            inner,
            builder: None,
            queue: None,
            counters: Arc::new(Counters::default()),
        }
    }

    fn offer(&mut self, spans: Vec<Span>) {
        let Some(queue) = &self.queue else { return };
        for span in spans {
            self.counters.offered.fetch_add(1, Ordering::Relaxed);
            // A full queue drops the span: the report counts it as offered and not sent.
            let _ = queue.try_send(span);
        }
    }
}

impl<O: Observer> Observer for Traced<O> {
    fn event(&mut self, seq: u64, event: &Event, state: &RunState) {
        self.inner.event(seq, event, state);
        if let Some(b) = self.builder.as_mut() {
            let ended = b.observe(seq, event, state);
            self.offer(ended);
        }
    }

    fn note(&mut self, text: &str) {
        self.inner.note(text);
    }

    fn step(&mut self, state: &RunState) {
        self.inner.step(state);
    }

    fn end(&mut self) {
        self.inner.end();
    }
}

/// The engine records the run's last events (finished, interrupted) after it says it ended: the
/// spans still open go when the engine lets its observer go.
impl<O> Drop for Traced<O> {
    fn drop(&mut self) {
        if let Some(b) = self.builder.take() {
            let rest = b.finish();
            self.offer(rest);
        }
        // Closing the queue tells the sender to send what is left and stop.
        self.queue = None;
    }
}

impl Report {
    /// In words, for the end of a run: what was sent, and what to do about what was not.
    pub fn said(&self, run: &str) -> String {
        let url = &self.url;
        let verdicts = match self.annotated {
            0 => String::new(),
            n => format!(", {n} verdicts as annotations"),
        };
        if self.missed == 0 {
            format!("trace: {} spans sent to {url}{verdicts}", self.sent)
        } else {
            format!(
                "trace: {} spans sent to {url}, {} not exported{}; send the whole trace again (the same ids): runlog export {run} --otlp {url}",
                self.sent,
                self.missed,
                self.last_error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default()
            )
        }
    }
}

impl Exporting {
    /// Waits (at most a few seconds) for the spans queued to go, and says what happened.
    pub fn finish_report(mut self) -> Report {
        if let Some(thread) = self.thread.take() {
            let deadline = Instant::now() + DRAIN;
            let down = || self.counters.down.load(Ordering::Relaxed);
            while !thread.is_finished() && Instant::now() < deadline && !down() {
                std::thread::sleep(Duration::from_millis(20));
            }
            if thread.is_finished() {
                let _ = thread.join();
            }
        }
        let c = &self.counters;
        let sent = c.sent.load(Ordering::Relaxed);
        Report {
            url: self.endpoint.url(),
            sent,
            // Dropped, failed, or still queued when the run ended.
            missed: c.offered.load(Ordering::Relaxed).saturating_sub(sent),
            last_error: c.last_error.lock().ok().and_then(|e| e.clone()),
            annotated: c.annotated.load(Ordering::Relaxed),
        }
    }
}

/// What the sending thread needs of the run.
struct Sending {
    log: Arc<dyn EventLog>,
    run: String,
    project: String,
    endpoint: Endpoint,
    /// Whether what model calls said goes on their spans.
    content: bool,
}

fn send_loop(rx: &Receiver<Span>, ids: Option<TraceIds>, s: &Sending, counters: &Counters) {
    let (run, project, endpoint) = (s.run.as_str(), s.project.as_str(), &s.endpoint);
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    let Some(ids) = ids else { return };
    // The attempts' spans, for the verdicts' annotations once the run's spans are sent.
    let mut attempts: Vec<Span> = Vec::new();
    let mut open = true;
    while open {
        let mut batch = Vec::new();
        match rx.recv() {
            Ok(span) => batch.push(span),
            Err(_) => break,
        }
        let linger = Instant::now() + LINGER;
        while batch.len() < BATCH {
            match rx.recv_timeout(linger.saturating_duration_since(Instant::now())) {
                Ok(span) => batch.push(span),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        let n = batch.len() as u64;
        if s.content {
            // A call whose blobs cannot be read is sent without them: the span still goes.
            let _ = content::add(s.log.as_ref(), run, &mut batch);
        }
        attempts.extend(batch.iter().filter(|s| s.kind == SpanKind::Agent).cloned());
        let body = prost::Message::encode_to_vec(&request(ids, run, project, &batch));
        let mut delay = Duration::from_millis(100);
        let mut outcome = Err(String::new());
        for _ in 0..TRIES {
            match rt.block_on(super::post(endpoint, body.clone())) {
                Ok(()) => {
                    outcome = Ok(());
                    break;
                }
                Err(e) => {
                    let retry = e.retryable();
                    outcome = Err(format!(
                        "{}; {}",
                        runlog_gateway::http::in_one_line(&e),
                        e.fix(endpoint)
                    ));
                    if !retry {
                        break;
                    }
                    std::thread::sleep(delay);
                    delay *= 4;
                }
            }
        }
        match outcome {
            Ok(()) => {
                counters.sent.fetch_add(n, Ordering::Relaxed);
                counters.down.store(false, Ordering::Relaxed);
            }
            Err(why) => {
                counters.down.store(true, Ordering::Relaxed);
                if let Ok(mut last) = counters.last_error.lock() {
                    *last = Some(why);
                }
            }
        }
    }
    if !counters.down.load(Ordering::Relaxed) {
        annotate(&rt, s, &attempts, counters);
    }
}

/// Sends the run's verdicts (as they stand at its end) as annotations on its attempts' spans,
/// where the receiver is Phoenix; another receiver has no such API, and is sent none.
fn annotate(rt: &tokio::runtime::Runtime, s: &Sending, attempts: &[Span], counters: &Counters) {
    let verdicts = match s.log.head(&s.run) {
        Ok(Some(head)) => {
            crate::queries::judges::verdicts(s.log.as_ref(), &s.run, head).unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let notes = annotations::of(&s.run, attempts, &verdicts);
    match rt.block_on(annotations::send(&s.endpoint, notes)) {
        Ok(annotations::Sent::Taken(n)) => {
            counters.annotated.store(n as u64, Ordering::Relaxed);
        }
        Ok(annotations::Sent::None | annotations::Sent::NoApi) => {}
        Err(e) => {
            if let Ok(mut last) = counters.last_error.lock() {
                *last = Some(format!(
                    "the verdicts' annotations: {}",
                    runlog_gateway::http::in_one_line(&e)
                ));
            }
        }
    }
}
