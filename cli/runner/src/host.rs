//! What this process was given by its environment, read once by the program that hosts the
//! runner (the binary) and handed down: nothing below reads a variable itself.

use crate::clock::Clock;
use crate::step::KillPoint;
use runlog_core::redact::{Redactor, DEFAULT_ENV_PATTERNS};
use std::sync::Arc;
use std::time::Duration;

/// How long a worker's lease lasts unless `RUNLOG_LEASE_MS` says otherwise.
const LEASE: Duration = Duration::from_secs(10);

/// This process's environment, as the runner uses it.
#[derive(Debug, Clone)]
pub struct Host {
    /// `RUNLOG_TEST_CLOCK`: a fixed clock's start, for reproducible runs.
    clock_start: Option<u64>,
    /// Every variable, whose values are secrets when their names match a workflow's
    /// `redact_env`.
    vars: Arc<[(String, String)]>,
    /// The redactor of commands from outside: the default patterns over `vars`.
    intake: Arc<Redactor>,
    /// `RUNLOG_LEASE_MS`: how long `run` and `resume` hold their lease on the shared store.
    lease: Duration,
    /// `RUNLOG_TEST_KILL_AFTER_APPENDS`, read only in builds with the `fault-points` feature.
    kill_after_appends: Option<u32>,
    /// The network-fault tests' switches, read only in builds with the `fault-points` feature:
    /// `RUNLOG_TEST_ACK_LOG`, where a worker writes each append it saw acknowledged, and
    /// `RUNLOG_TEST_UNFENCED`, a worker whose appends do not check its lease.
    ack_log: Option<std::path::PathBuf>,
    unfenced: bool,
    /// What the program hosting the runner gives each run's commands besides (see
    /// [`Host::granting`]).
    granting: Option<Granting>,
    /// Receivers of every run's alerts besides its workflow's (`serve --alerts FILE`).
    alerts: Arc<[crate::alerting::AlertTarget]>,
}

/// How the program hosting the runner gives a run's commands access to what it serves (the
/// binary: runlog's MCP tools for the run): called with the store, its directory on this host,
/// this host and the run, as each engine is made; what it returns lives as long as the engine.
#[derive(Clone)]
pub struct Granting(pub Arc<Grant>);

/// The function a [`Granting`] holds.
pub type Grant = dyn Fn(Arc<runlog_store::Store>, &std::path::Path, &Host, &str) -> Option<crate::Access>
    + Send
    + Sync;

impl std::fmt::Debug for Granting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Granting")
    }
}

impl Default for Host {
    /// A host that gave nothing: the wall clock, no secrets, a 10 s lease.
    fn default() -> Self {
        Self::of(Vec::new(), None)
    }
}

impl Host {
    /// This process's environment. Called once, by the binary.
    pub fn from_env() -> Self {
        let mut host = Self::of(std::env::vars().collect(), var("RUNLOG_TEST_CLOCK"));
        host.lease =
            var("RUNLOG_LEASE_MS").map_or(LEASE, |ms: u64| Duration::from_millis(ms.max(100)));
        if cfg!(feature = "fault-points") {
            host.kill_after_appends = var("RUNLOG_TEST_KILL_AFTER_APPENDS");
            host.ack_log = std::env::var_os("RUNLOG_TEST_ACK_LOG").map(Into::into);
            host.unfenced = var::<u8>("RUNLOG_TEST_UNFENCED") == Some(1);
        }
        host
    }

    /// A host with these variables and, when `clock_start` is given, a fixed clock.
    pub fn of(vars: Vec<(String, String)>, clock_start: Option<u64>) -> Self {
        let intake = Redactor::new(Redactor::named_in(
            vars.iter().cloned(),
            DEFAULT_ENV_PATTERNS,
        ));
        Self {
            clock_start,
            vars: vars.into(),
            intake: Arc::new(intake),
            lease: LEASE,
            kill_after_appends: None,
            ack_log: None,
            unfenced: false,
            granting: None,
            alerts: Arc::new([]),
        }
    }

    /// This host, every run it drives sending its alerts to `alerts` too.
    pub fn alerting(mut self, alerts: Vec<crate::alerting::AlertTarget>) -> Self {
        self.alerts = alerts.into();
        self
    }

    /// Where every run's alerts go besides its workflow's receivers.
    pub fn alerts(&self) -> &[crate::alerting::AlertTarget] {
        &self.alerts
    }

    /// This host, each engine it makes given what `granting` grants its run.
    pub fn granting(mut self, granting: Granting) -> Self {
        self.granting = Some(granting);
        self
    }

    /// What `granting` grants `run` of `store` (whose files here are under `dir`), if anything.
    pub(crate) fn access(
        &self,
        store: Arc<runlog_store::Store>,
        dir: &std::path::Path,
        run: &str,
    ) -> Option<crate::Access> {
        let g = self.granting.as_ref()?;
        (g.0)(store, dir, self, run)
    }

    /// A clock of its own for one engine or one command: the wall clock, or a fixed clock from
    /// its start (ticking a second per reading).
    pub fn clock(&self) -> Clock {
        Clock::new(self.clock_start)
    }

    /// The redactor of what comes from outside (commands of the API, `emit`, a person's
    /// decision): the default patterns (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`, `*_HEADERS`).
    pub fn intake_redactor(&self) -> &Redactor {
        &self.intake
    }

    /// The redactor of a run's output: the variables whose names match `patterns`, the
    /// `listed` secrets, and the well-known key shapes.
    pub fn redactor(&self, patterns: &[String], listed: &[(String, String)]) -> Redactor {
        let mut secrets = Redactor::named_in(self.vars.iter().cloned(), patterns);
        secrets.extend(listed.iter().cloned());
        Redactor::new(secrets)
    }

    /// The value the environment gave `name` (a provider's key), if any.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// How long a lease on the shared store lasts.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// The network-fault tests' switches for worker `worker` on the shared store, when asked
    /// for (nothing otherwise, and nothing in a build without the `fault-points` feature).
    pub(crate) fn fault_points(
        &self,
        pg: &runlog_store::PgLog,
        worker: &str,
    ) -> Result<(), crate::RunnerError> {
        #[cfg(feature = "fault-points")]
        {
            if let Some(path) = &self.ack_log {
                pg.record_acks(path, worker)
                    .map_err(|cause| crate::RunnerError::System {
                        what: "open the acknowledgements' file (RUNLOG_TEST_ACK_LOG)",
                        cause,
                    })?;
            }
            if self.unfenced {
                pg.unfence();
            }
        }
        let _ = (pg, worker);
        Ok(())
    }

    /// The crash tests' cut between an append and its processes, when asked for.
    pub(crate) fn kill_point(&self) -> KillPoint {
        KillPoint::new(self.kill_after_appends)
    }
}

/// A variable's value read as a `T`; none when unset or not a `T`.
fn var<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}
