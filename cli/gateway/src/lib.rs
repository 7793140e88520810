//! The model gateway: a listener on loopback that speaks the providers' own APIs (Anthropic
//! Messages, OpenAI Chat Completions and Responses, the model lists), so agents reach their
//! models through the runner without being changed. Each command is given a key of its own in
//! place of the provider's (`admit`), which names its task, attempt and stage and is refused
//! once the command has ended (`dismiss`); the real keys stay in the runner. Every call's
//! request is handed over as it leaves (`Asked`, stored while the model answers), its answer
//! passed on as it streams, and the call handed to the engine to record (`Passed`), with the
//! usage the provider's answer counted.
//!
//! [`http`] is the one HTTP client runlog reaches services outside it with: the providers here,
//! OTLP receivers from the command line.

mod budget;
pub mod http;
mod limits;
mod providers;
mod recorded;
mod relay;
mod upstream;

pub use budget::{
    Judged, OutputBounds, Reserve, Standing, DEFAULT_MAX_OUTPUT_TOKENS, RESERVE_WAIT,
};
pub use limits::{RateLimits, DEFAULT_LIMIT_WAIT};
pub use recorded::{Book, RecordingError};

pub use providers::{Provider, ProviderKind};
pub use upstream::GatewayError;

use runlog_core::model_call::ModelCall;
use runlog_core::usage::UsageStage;
use runlog_core::TaskId;
use std::collections::HashMap;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The largest request body passed on (a coding agent's whole context is well below it).
pub const MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;

/// A call that went through (or was refused), for the engine to record: the call, and the
/// request and answer as they passed (to be kept as blobs, secrets replaced).
#[derive(Debug)]
pub struct Passed {
    /// The call, its bodies not yet kept.
    pub call: ModelCall,
    /// The request body, unless it was handed over as the call left ([`Asked`]): then empty.
    pub request: Vec<u8>,
    /// The answer's body as it came.
    pub response: Vec<u8>,
    /// Told once the call is recorded (durably) and the budgets it spent are known to the
    /// gateway: the answer's last frame waits for it.
    pub recorded: Option<tokio::sync::oneshot::Sender<()>>,
    /// In a rerun, how the call differs from the recording's (recorded before the call).
    pub diverged: Option<runlog_core::rerun::Divergence>,
    /// In a rerun, the recorded run's places its answer was given as the rerun's.
    pub mapped: Option<runlog_core::relocate::AnswerMapped>,
}

/// A call's request, handed over as the call leaves for its provider so that it is stored
/// while the model answers, off the path of the answer's end. Its [`Passed`] follows.
#[derive(Debug)]
pub struct Asked {
    /// The call it opens: task, attempt, stage, and its number among the command's calls.
    pub task: TaskId,
    /// The attempt.
    pub attempt: u32,
    /// The command of the attempt.
    pub stage: UsageStage,
    /// Its number among the command's calls.
    pub n: u32,
    /// The model the request names.
    pub model: Option<String>,
    /// The request body as the command sent it.
    pub request: Vec<u8>,
}

/// Who a key was given to.
#[derive(Debug)]
struct Caller {
    task: TaskId,
    attempt: u32,
    stage: UsageStage,
    /// Calls made so far with the key.
    calls: AtomicU32,
    /// In a rerun, where the command's calls are answered from now.
    following: Mutex<Following>,
}

/// Where a command's calls stand in a rerun.
#[derive(Debug, Clone, Default)]
enum Following {
    /// Answered from the recording while they ask what it asked.
    #[default]
    Recording,
    /// One differed: they go to the provider (`recorded-then-live`).
    Live,
    /// One differed: they are refused, with these words (`recorded`).
    Stopped(String),
}

/// What the listener's handlers share.
#[derive(Debug)]
struct Shared {
    providers: Vec<Provider>,
    /// Each provider's key, by provider name, as the runner's environment held it.
    keys: HashMap<String, String>,
    callers: Mutex<HashMap<String, Arc<Caller>>>,
    /// Where running tasks stand with their budgets (a task not here has none).
    budgets: Mutex<HashMap<TaskId, Standing>>,
    passed: mpsc::UnboundedSender<Passed>,
    /// Who judges reservations (none: a call under a budget is refused).
    judge: Option<mpsc::UnboundedSender<Reserve>>,
    /// Who stores requests as their calls leave (none: each comes with its call's record).
    asked: Option<mpsc::UnboundedSender<Asked>>,
    /// Told each time a call's record settles what it held.
    settled: tokio::sync::Notify,
    upstreams: upstream::Upstreams,
    /// In a rerun, the recording that answers calls.
    book: Option<Book>,
    /// In an experiment's rerun, the models asked for that another answers.
    models: ModelMap,
    /// The output bounds given to requests without one.
    bounds: OutputBounds,
    /// Each provider's rate limiter, by provider name (shared by the process's runs).
    limiters: HashMap<String, Arc<limits::Limiter>>,
}

/// What a gateway passes calls to and how it answers them.
#[derive(Debug, Default)]
pub struct Setup {
    /// The providers.
    pub providers: Vec<Provider>,
    /// Each provider's key, by provider name.
    pub keys: HashMap<String, String>,
    /// In a rerun, the recording that answers calls.
    pub book: Option<Book>,
    /// In an experiment's rerun, the models asked for that another answers.
    pub models: ModelMap,
    /// The output bounds given to requests without one, under a budget.
    pub bounds: OutputBounds,
    /// Who judges the reservations of calls under a budget.
    pub judge: Option<mpsc::UnboundedSender<Reserve>>,
    /// Who stores each request as its call leaves, before the call's [`Passed`] comes (none:
    /// the request comes with it).
    pub asked: Option<mpsc::UnboundedSender<Asked>>,
}

impl Setup {
    /// Calls to `providers` with `keys`, answered live, no budget judged.
    pub fn new(providers: Vec<Provider>, keys: HashMap<String, String>) -> Setup {
        Setup {
            providers,
            keys,
            ..Setup::default()
        }
    }
}

/// An experiment variant's model map: a call asking the first model is answered by the
/// second (asked of the provider under that name).
#[derive(Debug, Clone, Default)]
pub struct ModelMap(HashMap<String, String>);

impl ModelMap {
    /// The map of `pairs` (asked, answering).
    pub fn of(pairs: &[(String, String)]) -> ModelMap {
        ModelMap(pairs.iter().cloned().collect())
    }

    /// The model that answers a call asking `model`, when the map changes it.
    fn answering(&self, model: Option<&str>) -> Option<String> {
        self.0.get(model?).cloned()
    }
}

impl Shared {
    fn caller(&self, key: &str) -> Option<Arc<Caller>> {
        self.callers.lock().ok()?.get(key).cloned()
    }

    fn standing(&self, task: &TaskId) -> Option<Standing> {
        self.budgets.lock().ok()?.get(task).cloned()
    }
}

/// A running gateway; stops listening when dropped.
#[derive(Debug)]
pub struct Gateway {
    url: String,
    shared: Arc<Shared>,
    server: tokio::task::JoinHandle<()>,
}

/// What the gateway would not open with (a provider's `ca_file` that is not one), found when
/// the workflow loads rather than when its run starts.
pub fn check(providers: &[Provider]) -> Result<(), GatewayError> {
    let with_ca: Vec<Provider> = providers
        .iter()
        .filter(|p| p.ca_file.is_some())
        .cloned()
        .collect();
    upstream::Upstreams::of(&with_ca).map(|_| ())
}

impl Gateway {
    /// Listens on a free port of 127.0.0.1 for calls as `setup` says; each call is handed to
    /// `passed`. Must be called within a tokio runtime.
    pub async fn start(
        setup: Setup,
        passed: mpsc::UnboundedSender<Passed>,
    ) -> Result<Gateway, GatewayError> {
        let Setup {
            providers,
            keys,
            book,
            models,
            bounds,
            judge,
            asked,
        } = setup;
        let upstreams = upstream::Upstreams::of(&providers)?;
        let limiters = providers
            .iter()
            .filter_map(|p| {
                let l = limits::limiter(&p.base_url, &p.api_key_env, p.limits)?;
                Some((p.name.clone(), l))
            })
            .collect();
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .map_err(GatewayError::Listen)?;
        let address = listener.local_addr().map_err(GatewayError::Listen)?;
        let url = format!("http://{address}");
        let shared = Arc::new(Shared {
            providers,
            keys,
            callers: Mutex::new(HashMap::new()),
            budgets: Mutex::new(HashMap::new()),
            passed,
            judge,
            asked,
            settled: tokio::sync::Notify::new(),
            upstreams,
            book,
            models,
            bounds,
            limiters,
        });
        let app = axum::Router::new()
            .fallback(relay::relay)
            .with_state(shared.clone());
        // Without TCP_NODELAY an answer's pieces wait on delayed acknowledgements (40 ms).
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        tracing::debug!(%url, "model gateway listening");
        Ok(Gateway {
            url,
            shared,
            server,
        })
    }

    /// The providers it passes calls to.
    pub fn providers(&self) -> &[Provider] {
        &self.shared.providers
    }

    /// Its base URL (`http://127.0.0.1:PORT`); the APIs' paths (`/v1/messages`...) follow it.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A key for one command of `task`'s attempt `attempt`: good until [`Gateway::dismiss`].
    pub fn admit(&self, task: &TaskId, attempt: u32, stage: UsageStage) -> String {
        let Some(hex) = fresh_hex() else {
            // Nothing is admitted: every call the command makes is refused, none is let in
            // under a key someone could guess.
            tracing::warn!(%task, "no random source (/dev/urandom): the command's model calls will be refused");
            return "runlog-no-key: the kernel's random source could not be read".to_owned();
        };
        let key = format!("runlog-{hex}");
        let caller = Arc::new(Caller {
            task: task.clone(),
            attempt,
            stage,
            calls: AtomicU32::new(0),
            following: Mutex::new(Following::Recording),
        });
        if let Ok(mut callers) = self.shared.callers.lock() {
            callers.insert(key.clone(), caller);
        }
        key
    }

    /// Every key given to `task`'s commands stops working (its command ended).
    pub fn dismiss(&self, task: &TaskId) {
        if let Ok(mut callers) = self.shared.callers.lock() {
            callers.retain(|_, c| &c.task != task);
        }
    }
}

impl Gateway {
    /// Where each running task stands with its budgets now: a call of a task whose budget is
    /// spent is answered with an error and reaches no provider; one of a task under a budget
    /// has its worst case reserved first. A task left out has no budget.
    pub fn set_budgets(&self, budgets: HashMap<TaskId, Standing>) {
        if let Ok(mut now) = self.shared.budgets.lock() {
            *now = budgets;
        }
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Caller {
    fn next_call(&self) -> u32 {
        self.calls.fetch_add(1, Ordering::Relaxed).saturating_add(1)
    }
}

/// 128 bits from the kernel's random source, as hex: a key no other process can guess; none
/// when the source cannot be read (a key from anything guessable would be no key).
pub fn fresh_hex() -> Option<String> {
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .ok()?;
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
