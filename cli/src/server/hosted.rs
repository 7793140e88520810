//! Runs the server executes itself (`POST /v1/runs`): each engine on the server's runtime, its
//! agents the server's children, so a run outlives the terminal or script that started it. An
//! interrupt asked through the API (`POST /v1/runs/{run}/interrupt`) stops it as Ctrl-C stops
//! `runlog run`; stopping the server interrupts every run it hosts and waits for them.

use super::errors::ApiError;
use runlog_core::RunState;
use runlog_runner::{Launcher, Observer, RunOptions, Workflow};
use runlog_store::Store;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, watch};

/// The runs this server executes, by id, and the runtime their engines run on: their own
/// threads, at the process's priority, while the API's threads run below it, so readers
/// can take only the CPU the engines leave.
pub struct Hosted {
    runs: Mutex<HashMap<String, Run>>,
    /// The experiments executing here, each with the switch that stops it.
    experiments: Mutex<HashMap<String, watch::Sender<bool>>>,
    tasks: tokio::sync::Mutex<tokio::task::JoinSet<()>>,
    engines: tokio::runtime::Handle,
    /// One permit per run executing; none left, a start is answered 429.
    places: Arc<tokio::sync::Semaphore>,
    max_runs: usize,
    /// Where the runs send their traces live, if anywhere.
    trace: Option<crate::otlp::Target>,
    /// What this process's environment gave.
    host: runlog_runner::Host,
}

impl std::fmt::Debug for Hosted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hosted")
            .field("max_runs", &self.max_runs)
            .field("runs", &self.live())
            .finish()
    }
}

/// A run this server executes: the switch that interrupts it, and its state as its engine
/// shows it.
#[derive(Debug)]
struct Run {
    ask: watch::Sender<bool>,
    state: watch::Receiver<Arc<RunState>>,
}

/// What starting a run asks for.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Start {
    /// The workflow file, relative to the server's working directory.
    pub workflow: PathBuf,
    /// The run's id [default: the workflow's name plus a counter].
    pub run: Option<String>,
    /// Tasks at once [default: the workflow's jobs].
    pub jobs: Option<u32>,
}

impl Hosted {
    /// Hosts at most `max_runs` runs at once, their engines on `engines`.
    pub fn new(
        engines: tokio::runtime::Handle,
        max_runs: usize,
        trace: Option<crate::otlp::Target>,
        host: runlog_runner::Host,
    ) -> Self {
        Self {
            trace,
            host,
            runs: Mutex::default(),
            experiments: Mutex::default(),
            tasks: tokio::sync::Mutex::default(),
            engines,
            places: Arc::new(tokio::sync::Semaphore::new(max_runs)),
            max_runs,
        }
    }

    /// What this process's environment gave (the clock commands are stamped with).
    pub fn host(&self) -> &runlog_runner::Host {
        &self.host
    }

    /// Starts a run and returns its id once it is recorded; it then runs on its own.
    pub async fn start(
        self: &Arc<Self>,
        store: Arc<Store>,
        dir: PathBuf,
        start: Start,
    ) -> Result<String, ApiError> {
        self.execute(store, dir, move |launcher| {
            let wf = Workflow::load(&start.workflow)?;
            let opts = RunOptions::with_jobs(start.jobs)?;
            Ok(launcher.start(&wf, start.run, opts)?)
        })
        .await
    }

    /// Records a rerun of a run (`runlog rerun`'s) and returns its id; it then runs on its own.
    pub async fn rerun(
        self: &Arc<Self>,
        store: Arc<Store>,
        dir: PathBuf,
        asked: crate::queries::rerun::Asked,
    ) -> Result<String, ApiError> {
        let now = self.host.clock().now();
        self.execute(store, dir, move |launcher| {
            let started = crate::queries::rerun::start(launcher.log().as_ref(), asked, now)?;
            let (engine, _notes) = launcher.resume(&started.run, RunOptions::default())?;
            Ok(engine)
        })
        .await
    }

    /// Drives a recorded run on from its log (`runlog resume`'s); its id once it is executing.
    /// A run that succeeded already is refused: there is nothing to drive.
    pub async fn resume(
        self: &Arc<Self>,
        store: Arc<Store>,
        dir: PathBuf,
        run: String,
    ) -> Result<String, ApiError> {
        if self.lock().contains_key(&run) {
            return Err(ApiError::with_status(
                axum::http::StatusCode::CONFLICT,
                format!("run {run} is executing on this server already"),
                "follow it (GET /v1/runs/RUN/stream), or interrupt it first",
            ));
        }
        self.execute(store, dir, move |launcher| {
            let (engine, _notes) = launcher.resume(&run, RunOptions::default())?;
            if engine.succeeded() {
                return Err(ApiError::with_status(
                    axum::http::StatusCode::CONFLICT,
                    format!("run {run} succeeded already; there is nothing to resume"),
                    "rerun it (POST /v1/runs/RUN/rerun) to execute it again",
                ));
            }
            Ok(engine)
        })
        .await
    }

    /// Executes the run whose engine `prepare` makes (recording what starts it), once there
    /// is a place for it; its id once it is recorded.
    async fn execute(
        self: &Arc<Self>,
        store: Arc<Store>,
        dir: PathBuf,
        prepare: impl FnOnce(&Launcher) -> Result<runlog_runner::Engine, ApiError> + Send + 'static,
    ) -> Result<String, ApiError> {
        let place = self.place()?;
        let (started, id) = oneshot::channel();
        let (ask, asked) = watch::channel(false);
        let hosted = self.clone();
        let mut tasks = self.tasks.lock().await;
        tasks.spawn_on(
            async move {
                // Given back when the run's task ends, however it ends.
                let _place = place;
                let prepared = prepare(&Launcher::new(store.clone(), &dir, &hosted.host));
                let engine = match prepared {
                    Ok(engine) => engine,
                    Err(e) => {
                        let _ = started.send(Err(e));
                        return;
                    }
                };
                let run = engine.run_id().to_owned();
                let (shown, state) = watch::channel(Arc::new(RunState::default()));
                let (observer, exporting) = match crate::otlp::traced(
                    store.clone(),
                    &run,
                    hosted.trace.as_ref(),
                    Published(shown),
                ) {
                    Ok(traced) => traced,
                    Err(e) => {
                        let _ = started.send(Err(ApiError::from(e)));
                        return;
                    }
                };
                let engine = engine.stop_when(asked).observed_by(observer);
                hosted.lock().insert(run.clone(), Run { ask, state });
                let _ = started.send(Ok(run.clone()));
                if store.postgres().is_some() {
                    // On the shared store the workers execute it (`runlog worker`).
                    hosted.lock().remove(&run);
                    return;
                }
                if let Err(e) = engine.drive().await {
                    errln!("run {run} stopped: {e}");
                }
                hosted.lock().remove(&run);
                if let Some(exporting) = exporting {
                    let run = run.clone();
                    let said =
                        tokio::task::spawn_blocking(move || exporting.finish_report().said(&run))
                            .await;
                    if let Ok(said) = said {
                        errln!("{said}");
                    }
                }
            },
            &self.engines,
        );
        drop(tasks);
        id.await
            .map_err(|_| ApiError::internal("the run's task ended before it started"))?
    }

    /// Executes experiment `name` (defined already) on the engines' runtime, one rerun at a
    /// time, in one of the server's places; it stops when the server does.
    pub async fn experiment(
        self: &Arc<Self>,
        store: Arc<Store>,
        dir: PathBuf,
        name: String,
    ) -> Result<(), ApiError> {
        let place = self.place()?;
        let (ask, asked) = watch::channel(false);
        self.experiments
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.clone(), ask);
        let hosted = self.clone();
        let mut tasks = self.tasks.lock().await;
        tasks.spawn_on(
            async move {
                let _place = place;
                let launcher = Launcher::new(store, &dir, &hosted.host);
                let mut said =
                    |_: &crate::queries::experiment::Planned,
                     _: &crate::queries::experiment::report::Progress| {};
                let done = crate::experimenting::execute(
                    &launcher,
                    &hosted.host,
                    &name,
                    1,
                    asked,
                    &mut said,
                )
                .await;
                if let Err(e) = done {
                    errln!("experiment {name} stopped: {e}");
                }
                hosted
                    .experiments
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .remove(&name);
            },
            &self.engines,
        );
        Ok(())
    }

    /// A place for one more run or experiment, or the answer that there is none.
    fn place(&self) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
        self.places.clone().try_acquire_owned().map_err(|_| {
            ApiError::with_status(
                axum::http::StatusCode::TOO_MANY_REQUESTS,
                format!("this server executes {} runs already", self.max_runs),
                "wait for one to finish, or start the server with a higher --max-runs",
            )
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Run>> {
        self.runs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether any run (or experiment) executes here.
    pub fn executing(&self) -> bool {
        !self.lock().is_empty()
            || !self
                .experiments
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_empty()
    }

    /// Asks a hosted run to stop; `false` when this server does not execute it.
    pub fn interrupt(&self, run: &str) -> bool {
        self.lock()
            .get(run)
            .is_some_and(|r| r.ask.send(true).is_ok())
    }

    /// The state of a run this server executes, as its engine last showed it.
    pub fn state(&self, run: &str) -> Option<Arc<RunState>> {
        self.lock().get(run).map(|r| r.state.borrow().clone())
    }

    /// The ids of the runs executing now.
    pub fn live(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.lock().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Interrupts every hosted run and waits for each to record it.
    pub async fn stop_all(&self) {
        for r in self.lock().values() {
            let _ = r.ask.send(true);
        }
        for ask in self
            .experiments
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            let _ = ask.send(true);
        }
        let mut tasks = self.tasks.lock().await;
        while tasks.join_next().await.is_some() {}
    }
}

/// Shows a hosted run's state to the API's readers once per step of its engine, so they read
/// it instead of replaying the log.
struct Published(watch::Sender<Arc<RunState>>);

impl Observer for Published {
    fn step(&mut self, state: &RunState) {
        if self.0.borrow().seq != state.seq {
            self.0.send_replace(Arc::new(state.clone()));
        }
    }
}
