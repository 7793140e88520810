//! Starting and resuming a run: the options checked once, the run's id chosen, its
//! [`Layout`] and [`Context`] made, and an [`Engine`] handed back. Who drives the engine (a
//! terminal, a server, a worker) and how it is stopped is the caller's.

use crate::engine::{Context, Engine, RunOptions};
use crate::error::RunnerError;
use crate::host::Host;
use crate::layout::Layout;
use crate::workflow::{RunnerSettings, Workflow};
use crate::workspace::{Found, RunWorkspace};
use runlog_core::{RunId, RunState, TaskId};
use runlog_replay::Replay;
use runlog_store::{EventLog, Store, StoreError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

type Result<T> = std::result::Result<T, RunnerError>;

/// Each provider's key as the runner's environment holds it, named `provider NAME`: the
/// runner puts it on every call it passes on, so it knows the exact value whatever the
/// variable is called, and an upstream echoing it back is redacted like any secret.
fn provider_keys(runner: &RunnerSettings, host: &Host) -> Vec<(String, String)> {
    use runlog_gateway::{Provider, ProviderKind};
    let mut providers = match &runner.gateway {
        crate::workflow::GatewayPlan::On(list) => list.clone(),
        _ => Vec::new(),
    };
    // A rerun opens the public providers whatever the workflow says.
    providers.extend(ProviderKind::ALL.into_iter().map(Provider::public));
    providers
        .iter()
        .filter_map(|p| {
            let key = host.var(&p.api_key_env)?;
            Some((format!("provider {}", p.name), key.to_owned()))
        })
        .collect()
}

/// Where runs start: the store, and its directory on this host.
#[derive(Debug, Clone)]
pub struct Launcher {
    log: Arc<dyn EventLog>,
    /// The store, when the log is one (the shared store's workers and child runs need it).
    store: Option<Arc<Store>>,
    dir: PathBuf,
    host: Host,
    commands: Arc<dyn crate::process::Commands>,
}

impl Launcher {
    /// Runs in `log`, whose files on this host are under `dir`, in a process whose
    /// environment gave `host`.
    pub fn new(store: Arc<Store>, dir: &Path, host: &Host) -> Self {
        Self {
            log: store.clone(),
            store: Some(store),
            dir: dir.to_path_buf(),
            host: host.clone(),
            commands: Arc::new(crate::process::Os),
        }
    }

    /// Runs in any log (one in memory, for a program embedding the engine), whose run files
    /// on this host are under `dir`.
    pub fn over(log: Arc<dyn EventLog>, dir: &Path, host: &Host) -> Self {
        Self {
            log,
            store: None,
            dir: dir.to_path_buf(),
            host: host.clone(),
            commands: Arc::new(crate::process::Os),
        }
    }

    /// The runs' commands run through `commands` instead of as processes of this host.
    pub fn with_commands(mut self, commands: Arc<dyn crate::process::Commands>) -> Self {
        self.commands = commands;
        self
    }

    /// The context of a run's commands: where, how, and with which secrets replaced.
    fn context_of(
        &self,
        dir: PathBuf,
        runner: RunnerSettings,
        layout: Layout,
        workspace: Option<RunWorkspace>,
    ) -> Context {
        let mut listed = runner.redact_listed.clone();
        listed.extend(provider_keys(&runner, &self.host));
        let redactor = self.host.redactor(&runner.redact_env, &listed);
        Context {
            dir,
            runner,
            layout,
            shared: self.shared(),
            workspace,
            host: self.host.clone(),
            redactor: Arc::new(redactor),
            commands: self.commands.clone(),
        }
    }

    /// The log runs are recorded in.
    pub fn log(&self) -> &Arc<dyn EventLog> {
        &self.log
    }

    /// The store, when the log is one.
    pub fn store(&self) -> Option<&Store> {
        self.store.as_deref()
    }

    /// The store, shared, when the launcher has one (see [`Launcher::store`]).
    pub fn shared_store(&self) -> Option<Arc<Store>> {
        self.store.clone()
    }

    /// The files of `run` on this host.
    pub fn layout(&self, run: &str) -> Layout {
        Layout::new(&self.dir, run)
    }

    fn shared(&self) -> Option<String> {
        let pg = self.store.as_ref()?.postgres()?;
        Some(pg.url().to_owned())
    }

    /// An engine of `run`, given what the host grants its commands.
    fn engine(&self, run: &str, state: RunState, context: Context, opts: RunOptions) -> Engine {
        let engine = Engine::new(self.log.clone(), run, state, context, opts);
        let access = self
            .store
            .clone()
            .and_then(|store| self.host.access(store, &self.dir, run));
        match access {
            Some(access) => engine.with_access(access),
            None => engine,
        }
    }

    /// Starts a run of `wf` (recorded before this returns): its id is `run_id`, which must be
    /// new, or the workflow's name plus a counter.
    pub fn start(&self, wf: &Workflow, run_id: Option<String>, opts: RunOptions) -> Result<Engine> {
        let run = match run_id {
            Some(id) => {
                runlog_core::check_name("run", &id)
                    .map_err(|r| RunnerError::Invalid(Box::new(r)))?;
                if self.log.head(&id).map_err(RunnerError::store)?.is_some() {
                    return Err(RunnerError::RunExists { run: id });
                }
                id
            }
            None => free_run_id(self.log.as_ref(), &crate::paths::name_from(&wf.name))
                .map_err(RunnerError::store)?,
        };
        let layout = self.layout(&run);
        // Before anything is recorded: a workspace git refuses stops the start.
        let (workspace, note) = match RunWorkspace::choose(
            &wf.dir,
            wf.runner.workspace,
            wf.runner.repo.as_deref(),
            &layout,
        )? {
            Found::Git(ws) => (Some(ws), None),
            Found::None(note) => (None, note),
        };
        let opened = workspace.as_ref().map(RunWorkspace::open).transpose()?;
        let context = self.context_of(wf.dir.clone(), wf.runner.clone(), layout, workspace);
        let mut engine = self.engine(&run, RunState::default(), context, opts);
        engine.start(wf.start_commands(RunId::from(run.as_str())))?;
        if let Some((open, notes)) = opened {
            engine.record(open)?;
            for n in notes {
                engine.note_at_start(n);
            }
        }
        if let Some(n) = note {
            engine.note_at_start(n);
        }
        Ok(engine)
    }

    /// Starts the child run of the sub-project task `task` of `parent`, from the workflow file
    /// at `path`, nested under what the parent's depth leaves, and links the two runs.
    pub fn start_child(
        &self,
        path: &Path,
        parent: &str,
        task: &TaskId,
        run_id: Option<String>,
        opts: RunOptions,
    ) -> Result<Engine> {
        let state = Replay::new(self.log.as_ref()).head_state(parent)?;
        let Some(t) = state.task(task).filter(|t| t.sub_project.is_some()) else {
            return Err(RunnerError::NotASubProject {
                run: parent.to_owned(),
                task: task.clone(),
            });
        };
        let left = state
            .settings
            .max_depth
            .saturating_sub(state.depth(&t.spec.id));
        let wf = Workflow::load_within(path, Some(left)).map_err(Box::new)?;
        let mut engine = self.start(&wf, run_id, opts)?;
        engine.link_parent(RunId::from(parent), task.clone())?;
        Ok(engine)
    }

    /// The engine of a recorded run, to go on from its head (`runlog resume`); the notes say
    /// what differs from when it started. The engine makes the run runnable again when it
    /// starts driving (see [`Engine::resuming`]).
    pub fn resume(&self, run: &str, opts: RunOptions) -> Result<(Engine, Vec<String>)> {
        let state = Replay::new(self.log.as_ref()).head_state(run)?;
        let (context, notes) = self.context(&state, run);
        let mut engine = self.engine(run, state, context, opts);
        engine.resuming();
        Ok((engine, notes))
    }

    /// Moves a run's git branches to what its state (after a rollback, at its head) recorded,
    /// keeping the old tips as refs; says what moved. `None` without a git workspace.
    pub fn follow_rollback(&self, run: &str, state: &RunState) -> Result<Option<String>> {
        let (context, _) = self.context(state, run);
        let Some(ws) = context.workspace else {
            return Ok(None);
        };
        ws.follow_rollback(state, state.seq)?;
        let tip = state
            .workspace
            .as_ref()
            .map(|w| w.tip.as_str())
            .unwrap_or_default();
        Ok(Some(format!(
            "branch {} is at {} again; earlier tips are kept under refs/runlog/",
            ws.branch(),
            crate::workspace::short(tip)
        )))
    }

    /// The engine of a running run, for a worker to work on beside others; `None` when the
    /// run's workflow directory is not on this host.
    pub fn join(&self, run: &str, state: RunState, opts: RunOptions) -> Option<Engine> {
        let (context, _) = self.context(&state, run);
        if !context.dir.is_dir() {
            return None;
        }
        Some(self.engine(run, state, context, opts))
    }

    /// How a recorded run's commands run on this host: in its workflow file's directory, with
    /// the runner settings of that file (read again when it can be; the run keeps its recorded
    /// plan either way). With notes for people on what differs.
    fn context(&self, state: &RunState, run: &str) -> (Context, Vec<String>) {
        let path = state
            .run
            .as_ref()
            .map(|r| r.workflow.clone())
            .unwrap_or_default();
        let mut notes = Vec::new();
        let (dir, runner) = match Workflow::load(Path::new(&path)) {
            Ok(wf) => {
                if state
                    .run
                    .as_ref()
                    .is_some_and(|r| r.workflow_hash != wf.hash)
                {
                    notes.push(format!("{path} changed since the run started; the run keeps its recorded plan and commands"));
                }
                (wf.dir, wf.runner)
            }
            Err(_) => {
                let dir = Path::new(&path)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| ".".into());
                notes.push(format!("cannot read the workflow {path}; going on with the recorded plan and no replan command"));
                (dir, RunnerSettings::default())
            }
        };
        let layout = self.layout(run);
        let workspace = match state.workspace.as_ref() {
            Some(w) => match RunWorkspace::at(&w.repo, &dir, &layout) {
                Ok(ws) => Some(ws),
                Err(e) => {
                    notes.push(format!(
                        "the run's repository {} cannot be used here: {e}",
                        w.repo
                    ));
                    None
                }
            },
            None => None,
        };
        let context = self.context_of(dir, runner, layout, workspace);
        (context, notes)
    }
}

/// The first of `PREFIX-1`, `PREFIX-2`... that names no run yet.
pub fn free_run_id(log: &dyn EventLog, prefix: &str) -> std::result::Result<String, StoreError> {
    let runs = log.runs()?;
    let taken = |id: &str| runs.iter().any(|r| r.run == id);
    Ok((1..)
        .map(|n| format!("{prefix}-{n}"))
        .find(|id| !taken(id))
        .unwrap_or_else(|| prefix.to_owned()))
}
