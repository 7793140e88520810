//! This process's lease on the shared store: what makes a `runlog worker`, and the `runlog run`
//! or `resume` of a run there, one worker among many (see [`crate::Crew`]).

use crate::crew::Crew;
use crate::engine::Engine;
use crate::error::RunnerError;
use runlog_store::{PgLog, Store};
use std::sync::Arc;
use std::time::Duration;

/// A lease held until dropped.
#[derive(Debug)]
pub struct Member {
    pg: Arc<PgLog>,
    /// What its engines share.
    pub crew: Crew,
}

impl Member {
    /// Joins the shared store as a worker named `name` (default: HOST.PID). `None` on a store
    /// directory (or no store), where one process drives each run.
    pub fn join(
        log: Option<&Store>,
        name: Option<String>,
        lease: Duration,
        host: &crate::Host,
    ) -> Result<Option<Self>, RunnerError> {
        let Some(pg) = log.and_then(Store::postgres) else {
            return Ok(None);
        };
        let name = match name {
            Some(n) => {
                runlog_core::check_name("worker", &n)
                    .map_err(|r| RunnerError::Invalid(Box::new(r)))?;
                n
            }
            None => {
                let host = runlog_store::postgres::host_name();
                crate::paths::name_from(&format!("{host}.{}", std::process::id()))
            }
        };
        host.fault_points(&pg, &name)?;
        pg.join(&name, lease).map_err(RunnerError::Lease)?;
        let crew = Crew::new(name, pg.clone());
        Ok(Some(Self { pg, crew }))
    }

    /// The run's engine works as this worker; `owns_run`: a stop interrupts the run (its
    /// `runlog run` or `resume`) instead of the worker leaving it to the others.
    pub fn enlist(&self, engine: &mut Engine, owns_run: bool) {
        engine.as_worker(self.crew.also_for(owns_run));
    }

    /// Whether the lease was lost (not renewed in time): the worker can record nothing more.
    pub fn lost(&self) -> bool {
        self.pg.lease_lost()
    }

    /// Whether the server still holds this worker's lease, read now.
    pub fn held(&self) -> Result<bool, RunnerError> {
        self.pg.lease_held().map_err(RunnerError::Lease)
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.pg.leave();
    }
}
