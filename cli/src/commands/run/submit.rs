//! `runlog run` when a `runlog serve` serves the store: the run is submitted to the server,
//! which executes it, and this terminal follows it with the same live view and closing summary
//! as a run it executes itself. Ctrl-C (or SIGTERM) asks the server to interrupt the run; a
//! closed terminal (SIGHUP) only stops following: the run goes on in the server. With
//! `--detach`, the run's id is printed at once.

use crate::client::{refused, Server};
use crate::ctx::Ctx;
use crate::error::{CliError, ExitKind, Result};
use crate::follow::{Ends, Followed, Follower};
use crate::signals::{Signal, Signals};
use crate::view::View;
use runlog_core::{evolve_in_place, Event, EventKind, RunState};
use runlog_runner::Ended;
use runlog_store::Store;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What `runlog run` asks of the server.
#[derive(Debug)]
pub struct Submit<'a> {
    /// The workflow file.
    pub workflow: &'a Path,
    /// The run's id, if chosen.
    pub run: Option<String>,
    /// `--jobs`.
    pub jobs: Option<u32>,
    /// `--quiet`.
    pub quiet: bool,
    /// `--detach`.
    pub detach: bool,
}

/// Submits the run and, unless detached, follows it to its end.
pub fn submit_and_follow(server: &Server, s: Submit<'_>, ctx: &Ctx) -> Result<Option<ExitKind>> {
    let rt = crate::runtime::for_command("follow")?;
    // Listening from the start: a Ctrl-C right after submitting still reaches the run.
    let signals = {
        let _runtime = rt.enter();
        Signals::new()?
    };
    // A remote server reads the path on its own host, as given; this host's server, absolute.
    let workflow = if server.is_remote() {
        s.workflow.to_path_buf()
    } else {
        std::path::absolute(s.workflow).unwrap_or_else(|_| s.workflow.to_path_buf())
    };
    let body = serde_json::json!({"workflow": workflow, "run": s.run, "jobs": s.jobs});
    let (status, answer) = rt.block_on(server.post("/v1/runs", &body))?;
    if status == 401 && server.is_remote() {
        return Err(refused(status, &answer).with_hint(
            "set RUNLOG_TOKEN to a token of the server's --token-file with the `run` scope",
        ));
    }
    if status != 201 {
        return Err(refused(status, &answer));
    }
    let run = answer
        .get("run")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if s.detach {
        if ctx.json {
            crate::render::json(&serde_json::json!({"run": run, "executing": true}))?;
        } else {
            outln!("{run}");
        }
        return Ok(None);
    }
    if !s.quiet {
        errln!(
            "run {run} executes in runlog serve ({}); Ctrl-C interrupts it, closing this terminal does not",
            server.describe()
        );
    }
    let source = if server.is_remote() {
        Source::Remote(Arc::new(runlog_store::Log::memory()?))
    } else {
        Source::Local(Arc::new(ctx.open()?))
    };
    let ended = rt.block_on(follow(server, &source, &run, s.quiet, signals))?;
    let log: &dyn runlog_store::EventLog = match &source {
        Source::Local(store) => store.as_ref(),
        Source::Remote(copy) => copy.as_ref(),
    };
    match ended {
        // The commands that go on are run where the store is: the server's host.
        Some(ended) if server.is_remote() => {
            let exit = super::finish(log, ctx, "runlog", &run, &ended);
            if !ctx.json {
                outln!(
                    "  (the commands above run on the server's host; the web view: {}/)",
                    server.describe()
                );
            }
            exit
        }
        Some(ended) => super::finish(log, ctx, &ctx.command(), &run, &ended),
        None => {
            errln!("stopped following; run {run} goes on in runlog serve (`runlog log {run} --follow`)");
            Ok(None)
        }
    }
}

/// Where the run's events are read: this host's store, or (a server on another host) its event
/// stream, copied into a log in memory for the closing summary.
enum Source {
    Local(Arc<Store>),
    Remote(Arc<runlog_store::Log>),
}

type Step = std::result::Result<(u64, Event), CliError>;

/// The store's events of `run` from its start, until it ends, on `tx`.
fn from_store(store: Arc<Store>, run: &str, tx: tokio::sync::mpsc::Sender<Step>) {
    let mut follower = Follower::new(store, run, 1, Ends::AtRunEnd);
    // The follower blocks on the store: a thread of its own hands its events over.
    std::thread::spawn(move || loop {
        let step = match follower.next(Duration::from_millis(500)) {
            Ok(Some(Followed::Idle)) if tx.is_closed() => return,
            Ok(Some(Followed::Idle)) => continue,
            Ok(Some(Followed::Event(seq, e))) => Ok((seq, e)),
            Ok(None) => return,
            Err(e) => Err(CliError::failed(e.to_string())),
        };
        if tx.blocking_send(step).is_err() {
            return;
        }
    });
}

/// An event as the stream's `data` carries it.
#[derive(serde::Deserialize)]
struct Line {
    seq: u64,
    at: u64,
    event: EventKind,
}

/// The server's event stream of `run` from its start, each event also appended to `copy`,
/// until the run finishes or is interrupted, on `tx`.
fn from_stream(
    server: Server,
    run: &str,
    copy: Arc<runlog_store::Log>,
    tx: tokio::sync::mpsc::Sender<Step>,
) {
    let (data_tx, mut data) = tokio::sync::mpsc::channel(1_024);
    let path = format!("/v1/runs/{run}/stream?from=1");
    let reader = tx.clone();
    // The stream never ends on its own: it is dropped once the run's end is handed over.
    let stream = tokio::spawn(async move {
        if let Err(e) = server.stream(&path, data_tx).await {
            let _ = reader.send(Err(e)).await;
        }
    });
    let run = run.to_owned();
    tokio::spawn(async move {
        while let Some(text) = data.recv().await {
            let step = text
                .map_err(|e| CliError::failed(e.to_string()))
                .and_then(|text| {
                    let line: Line = serde_json::from_str(&text).map_err(|e| {
                        CliError::failed(format!("the stream sent what is not an event ({e})"))
                    })?;
                    let event = Event {
                        at: runlog_core::Timestamp(line.at),
                        kind: line.event,
                    };
                    let body = runlog_core::codec::encode_event(&event)
                        .map_err(|e| CliError::failed(e.to_string()))?;
                    runlog_store::EventLog::append(
                        copy.as_ref(),
                        &run,
                        Some(line.seq.saturating_sub(1)),
                        vec![body],
                    )
                    .map_err(|e| CliError::failed(e.to_string()))?;
                    Ok((line.seq, event))
                });
            let ends = matches!(
                &step,
                Ok((_, e)) if matches!(e.kind, EventKind::RunFinished { .. } | EventKind::RunInterrupted { .. })
            );
            if tx.send(step).await.is_err() || ends {
                break;
            }
        }
        stream.abort();
    });
}

/// Shows the run's events until it finishes or is interrupted (`Some`), or until the terminal
/// goes (`None`).
async fn follow(
    server: &Server,
    source: &Source,
    run: &str,
    quiet: bool,
    mut signals: Signals,
) -> Result<Option<Ended>> {
    let started = Instant::now();
    let mut view = View::new(quiet);
    let (tx, mut followed) = tokio::sync::mpsc::channel(1_024);
    match source {
        Source::Local(store) => from_store(store.clone(), run, tx),
        Source::Remote(copy) => from_stream(server.clone(), run, copy.clone(), tx),
    }
    let mut state = RunState::default();
    let mut interrupted = false;
    let interrupt = format!("/v1/runs/{run}/interrupt");
    loop {
        tokio::select! {
            step = followed.recv() => match step {
                Some(Ok((seq, event))) => {
                    evolve_in_place(&mut state, &event);
                    state.seq = seq;
                    view.event(&event, &state);
                    // The lines of events that came together go out together.
                    if followed.is_empty() {
                        view.show(Some(&state));
                    }
                    interrupted = matches!(event.kind, EventKind::RunInterrupted { .. });
                }
                Some(Err(e)) => {
                    return Err(CliError::failed(format!("following run {run}: {e}"))
                        .with_hint(format!("`runlog status {run}` says where it is")));
                }
                None => {
                    view.done();
                    let state = match source {
                        Source::Local(store) => settled(store, run, state.seq).await?,
                        Source::Remote(copy) => runlog_replay::Replay::new(copy.as_ref()).head_state(run)?,
                    };
                    return Ok(Some(Ended { state, interrupted, elapsed: started.elapsed() }));
                }
            },
            signal = signals.next() => {
                if signal == Signal::Hangup {
                    return Ok(None);
                }
                server.post(&interrupt, &serde_json::json!({})).await?;
            }
        }
    }
}

/// The whole fold of the run (rollbacks and forks resolved) for the closing summary, once the
/// store's reads show the event the subscription announced: a subscriber can hear of an append
/// a moment before a read through the store's owner returns it (seen under load in CI, where
/// the summary said "running").
async fn settled(log: &Store, run: &str, seq: u64) -> Result<RunState> {
    let replay = runlog_replay::Replay::new(log);
    for _ in 0..200 {
        let state = replay.head_state(run)?;
        if state.seq >= seq {
            return Ok(state);
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    Err(CliError::failed(format!(
        "run {run} ended at seq {seq}, but the store still reads an earlier head after 5 s"
    ))
    .with_hint(format!("`runlog status {run}` says where it is")))
}
