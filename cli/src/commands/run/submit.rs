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
use runlog_core::{evolve_in_place, EventKind, RunState};
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
    let workflow = std::path::absolute(s.workflow).unwrap_or_else(|_| s.workflow.to_path_buf());
    let body = serde_json::json!({"workflow": workflow, "run": s.run, "jobs": s.jobs});
    let (status, answer) = rt.block_on(server.post("/v1/runs", &body))?;
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
            crate::render::json(&serde_json::json!({"run": run, "executing": true}));
        } else {
            println!("{run}");
        }
        return Ok(None);
    }
    if !s.quiet {
        eprintln!("run {run} executes in runlog serve; Ctrl-C interrupts it, closing this terminal does not");
    }
    let log = Arc::new(ctx.open()?);
    let ended = rt.block_on(follow(server, log.clone(), &run, s.quiet, signals))?;
    match ended {
        Some(ended) => super::finish(log.as_ref(), ctx, &run, &ended),
        None => {
            eprintln!("stopped following; run {run} goes on in runlog serve (`runlog log {run} --follow`)");
            Ok(None)
        }
    }
}

/// Shows the run's events until it finishes or is interrupted (`Some`), or until the terminal
/// goes (`None`).
async fn follow(
    server: &Server,
    log: Arc<Store>,
    run: &str,
    quiet: bool,
    mut signals: Signals,
) -> Result<Option<Ended>> {
    let started = Instant::now();
    let view = View::new(quiet);
    let (tx, mut followed) = tokio::sync::mpsc::channel(1_024);
    let mut follower = Follower::new(log.clone(), run, 1, Ends::AtRunEnd);
    // The follower blocks on the store: a thread of its own hands its events over.
    std::thread::spawn(move || loop {
        let step = match follower.next(Duration::from_millis(500)) {
            Ok(Some(Followed::Idle)) if tx.is_closed() => return,
            Ok(Some(Followed::Idle)) => continue,
            Ok(Some(Followed::Event(seq, e))) => Ok((seq, e)),
            Ok(None) => return,
            Err(e) => Err(e),
        };
        if tx.blocking_send(step).is_err() {
            return;
        }
    });
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
                    interrupted = matches!(event.kind, EventKind::RunInterrupted { .. });
                }
                Some(Err(e)) => {
                    return Err(CliError::failed(format!("following run {run}: {e}"))
                        .with_hint(format!("`runlog status {run}` says where it is")));
                }
                None => {
                    view.done();
                    let state = settled(&log, run, state.seq).await?;
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
