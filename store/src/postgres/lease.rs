//! Workers' leases and fencing. A worker joins under a name and gets a fencing token (a
//! sequence, so each joining gets a larger one); it renews its lease every quarter of its
//! length. Every append it makes checks, inside the append's transaction, that its row still
//! has its token and a lease ahead of the server's clock, holding the row (FOR SHARE) until the
//! commit: so once a lease has expired, or the name was taken over, nothing more is recorded
//! for that worker, and whoever abandons its attempts knows it cannot answer back.
//!
//! Every lease statement reads `clock_timestamp()`, the server's clock as the row is looked
//! at, never `now()`, which is when the statement's transaction began: a renewal that waited
//! on the row's lock (held by the worker's own slow append) was judged at the time it started
//! and brought back a lease that had expired meanwhile, after another worker had seen it
//! expire and abandoned its attempts (the network-fault tests' seed 15, with each message of
//! the worker delayed 69 to 136 ms).

use super::{Pg, PgLog};
use crate::error::{Result, StoreError};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A worker's hold on the store, checked by each of its appends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fence {
    pub(crate) worker: String,
    pub(crate) token: i64,
}

/// The lease of this process, if it joined as a worker.
#[derive(Debug, Default)]
pub(super) struct Held {
    fence: Mutex<Option<Fence>>,
    lost: Arc<AtomicBool>,
    /// The fault tests' switch: appends go unchecked (the checker must see what follows).
    unfenced: AtomicBool,
}

impl Held {
    pub(super) fn fence(&self) -> Option<Fence> {
        self.fence.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The fence an append checks: the lease's, unless the tests turned it off.
    pub(super) fn append_fence(&self) -> Option<Fence> {
        if self.unfenced.load(Ordering::Acquire) {
            return None;
        }
        self.fence()
    }

    #[cfg(feature = "testkit")]
    pub(super) fn unfence(&self) {
        self.unfenced.store(true, Ordering::Release);
    }
}

/// Checks `fence` inside an append's transaction.
pub(super) async fn check(
    pg: &Pg,
    tx: &deadpool_postgres::Transaction<'_>,
    fence: &Fence,
) -> Result<()> {
    let row = tx
        .query_opt(
            "SELECT token, expires_at > clock_timestamp() FROM runlog_workers WHERE name = $1 FOR SHARE",
            &[&fence.worker],
        )
        .await
        .map_err(|e| pg.error("cannot check the worker's lease", &e))?;
    let why = match row {
        None => "its lease was removed".to_owned(),
        Some(r) if r.get::<_, i64>(0) != fence.token => {
            "another process joined under its name".to_owned()
        }
        Some(r) if !r.get::<_, bool>(1) => "its lease expired".to_owned(),
        Some(_) => return Ok(()),
    };
    Err(StoreError::Fenced {
        worker: fence.worker.clone(),
        why,
    })
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

/// This host's name, as workers' leases record it ("unknown" when it cannot be read).
pub fn host_name() -> String {
    std::fs::read_to_string("/etc/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

impl PgLog {
    /// Joins as worker `name` with a lease of `lease`, renewed in the background; from now on
    /// every append of this handle is fenced by it. A name a live worker holds is refused.
    pub fn join(&self, name: &str, lease: Duration) -> Result<()> {
        let host = host_name();
        let pid = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
        let (worker, ms) = (name.to_owned(), millis(lease));
        let token = self.call(move |pg| async move {
            let client = pg.client().await?;
            let joined = client
                .query_opt(
                    "INSERT INTO runlog_workers (name, token, host, pid, expires_at)
                     VALUES ($1, nextval('runlog_fence'), $2, $3,
                             clock_timestamp() + $4 * interval '1 millisecond')
                     ON CONFLICT (name) DO UPDATE
                        SET token = EXCLUDED.token, host = EXCLUDED.host, pid = EXCLUDED.pid,
                            joined_at = clock_timestamp(), expires_at = EXCLUDED.expires_at
                        WHERE runlog_workers.expires_at <= clock_timestamp()
                     RETURNING token",
                    &[&worker, &host, &pid, &ms],
                )
                .await
                .map_err(|e| pg.error("cannot join as a worker", &e))?;
            if let Some(row) = joined {
                return Ok(row.get::<_, i64>(0));
            }
            let holder = client
                .query_one(
                    "SELECT host, pid FROM runlog_workers WHERE name = $1",
                    &[&worker],
                )
                .await
                .map_err(|e| pg.error("cannot join as a worker", &e))?;
            Err(StoreError::WorkerNameTaken {
                worker,
                host: holder.get(0),
                pid: holder.get(1),
            })
        })?;
        let fence = Fence {
            worker: name.to_owned(),
            token,
        };
        *self.held.fence.lock().unwrap_or_else(|p| p.into_inner()) = Some(fence.clone());
        self.held.lost.store(false, Ordering::Release);
        tracing::debug!(
            worker = name,
            lease_ms = lease.as_millis() as u64,
            "joined as a worker"
        );
        self.handle
            .spawn(renew(self.pg.clone(), fence, lease, self.held.lost.clone()));
        Ok(())
    }

    /// Whether this process's lease was lost (a renewal found it expired or taken over).
    pub fn lease_lost(&self) -> bool {
        self.held.lost.load(Ordering::Acquire)
    }

    /// Whether this process still holds its lease, asked of the server now (a process that was
    /// frozen past its lease learns it here before its renewal runs).
    pub fn lease_held(&self) -> Result<bool> {
        let Some(fence) = self.held.fence() else {
            return Ok(false);
        };
        let held = !self
            .query(
                "cannot check the worker's lease",
                "SELECT 1 FROM runlog_workers WHERE name = $1 AND token = $2 AND expires_at > clock_timestamp()",
                vec![Box::new(fence.worker), Box::new(fence.token)],
            )?
            .is_empty();
        if !held {
            self.held.lost.store(true, Ordering::Release);
        }
        Ok(held)
    }

    /// The workers whose leases are live now, by the server's clock.
    pub fn live_workers(&self) -> Result<Vec<String>> {
        let found = self.query(
            "cannot list the workers",
            "SELECT name FROM runlog_workers WHERE expires_at > clock_timestamp() ORDER BY name",
            Vec::new(),
        )?;
        Ok(found.iter().map(|r| r.get(0)).collect())
    }

    /// Of `workers`, those whose leases are gone: expired, confirmed under each row's lock (a
    /// renewal the server is still committing is waited for, and seen), or never held. A lease
    /// confirmed expired here is never renewed: a renewal asks for a lease still running.
    /// Reading the live workers alone is not enough: a renewal executed before the lease ran
    /// out but committed after the read brought back a lease another worker had seen expire
    /// (the network-fault tests' seed 188, with a partition splitting the renewal's messages).
    pub fn expired(&self, workers: &[String]) -> Result<Vec<String>> {
        let found = self.query(
            "cannot check the workers' leases",
            "WITH confirmed AS (
                UPDATE runlog_workers SET expires_at = expires_at
                WHERE name = ANY($1) AND expires_at <= clock_timestamp()
                RETURNING name)
             SELECT n FROM unnest($1::text[]) AS n
             WHERE n IN (SELECT name FROM confirmed)
                OR NOT EXISTS (SELECT 1 FROM runlog_workers w WHERE w.name = n)",
            vec![Box::new(workers.to_vec())],
        )?;
        Ok(found.iter().map(|r| r.get(0)).collect())
    }

    /// Gives the lease up (a worker leaving cleanly): its name is free at once.
    pub fn leave(&self) -> Result<()> {
        let Some(fence) = self
            .held
            .fence
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        else {
            return Ok(());
        };
        self.held.lost.store(true, Ordering::Release);
        self.call(move |pg| async move {
            let client = pg.client().await?;
            client
                .execute(
                    "DELETE FROM runlog_workers WHERE name = $1 AND token = $2",
                    &[&fence.worker, &fence.token],
                )
                .await
                .map_err(|e| pg.error("cannot leave", &e))?;
            Ok(())
        })
    }
}

/// Renews the lease every quarter of its length until it is lost or given up.
async fn renew(pg: Arc<Pg>, fence: Fence, lease: Duration, lost: Arc<AtomicBool>) {
    let ms = millis(lease);
    loop {
        tokio::time::sleep(lease / 4).await;
        if lost.load(Ordering::Acquire) {
            return;
        }
        let Ok(client) = pg.client().await else {
            tracing::debug!(worker = %fence.worker, "no connection to renew the lease: trying at the next beat");
            continue;
        };
        let renewed = client
            .execute(
                "UPDATE runlog_workers SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
                 WHERE name = $1 AND token = $2 AND expires_at > clock_timestamp()",
                &[&fence.worker, &fence.token, &ms],
            )
            .await;
        // A failed statement is retried at the next beat; only a definite "not yours" is lost.
        match renewed {
            Ok(0) => {
                tracing::warn!(worker = %fence.worker, "the lease expired or was taken over: this worker records nothing more");
                lost.store(true, Ordering::Release);
                return;
            }
            Ok(_) => tracing::trace!(worker = %fence.worker, "lease renewed"),
            Err(e) => {
                tracing::debug!(worker = %fence.worker, error = %e, "the lease's renewal failed: trying at the next beat")
            }
        }
    }
}
