//! A rerun's answers from the recording: the recorded run's calls by command (task, attempt,
//! stage), and for each call of the rerun, the recorded call that asked the same, or how it
//! differs. A call is compared first with the recorded call of its own number, then with the
//! command's other unused ones (an agent's background calls may be made in another order).

use runlog_core::model_call::{CallEnd, ModelApi, ModelCall};
use runlog_core::relocate::{Mapped, Relocation};
use runlog_core::rerun::{differs, Answers, Asked, Rerun};
use runlog_core::usage::UsageStage;
use runlog_core::{EventKind, TaskId};
use runlog_store::EventLog;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What a rerun's calls are answered from.
pub struct Book {
    /// Where answers come from.
    pub answers: Answers,
    rerun: Rerun,
    /// The rerun's own id: in its requests, read as the recorded run's.
    run: String,
    /// The rerun's store directory on this host (its worktrees are under it).
    store: String,
    /// The recorded run's places and the rerun's, once a recorded request has said where the
    /// recorded run's store was.
    places: Mutex<Option<Arc<Relocation>>>,
    log: Arc<dyn EventLog>,
    calls: Mutex<HashMap<Command, Vec<Recorded>>>,
}

impl std::fmt::Debug for Book {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Book")
            .field("answers", &self.answers)
            .field("from_run", &self.rerun.from_run)
            .finish_non_exhaustive()
    }
}

/// A command of a run: task, attempt, stage.
type Command = (TaskId, u32, UsageStage);

/// One recorded call.
struct Recorded {
    seq: u64,
    call: ModelCall,
    /// Its request's bytes, read from the store the first time a call is compared with it.
    request: Option<Vec<u8>>,
    used: bool,
}

/// Why a rerun's recording cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// The run it reruns is gone.
    #[error("the run {run} it reruns is not in the store")]
    Missing {
        /// That run.
        run: String,
    },
    /// Its log could not be read.
    #[error("cannot read the recording of {run}")]
    Read {
        /// That run.
        run: String,
        /// Why.
        #[source]
        source: runlog_replay::ReplayError,
    },
}

/// How a call of the rerun is answered.
#[derive(Debug)]
pub enum Found {
    /// By the recorded call at `seq`, whose answer this is.
    Served {
        /// The recorded call's seq.
        seq: u64,
        /// The recorded call.
        call: Box<ModelCall>,
        /// Its answer's bytes, the recorded run's places given as the rerun's.
        response: Vec<u8>,
        /// What was mapped in it (nothing when it named none of them).
        mapped: Vec<Mapped>,
    },
    /// Not: it differs (the recorded call it was compared with, and how).
    Differs {
        /// The seq of the recorded call of its number, if there is one.
        seq: Option<u64>,
        /// How it differs, in words.
        why: String,
    },
}

impl Book {
    /// The answers of `rerun` (run `run`'s, its store at `store` on this host), read from the
    /// run it reruns: every call that was answered (refused calls and divergences are not
    /// answers).
    pub fn load(
        log: Arc<dyn EventLog>,
        run: &str,
        store: &std::path::Path,
        rerun: Rerun,
    ) -> Result<Book, RecordingError> {
        let from = rerun.from_run.as_str();
        let failed = |source| RecordingError::Read {
            run: from.to_owned(),
            source,
        };
        let head = log
            .head(from)
            .map_err(|e| failed(runlog_replay::ReplayError::Store(e)))?
            .map(|h| h.seq)
            .ok_or_else(|| RecordingError::Missing {
                run: from.to_owned(),
            })?;
        let mut calls: HashMap<Command, Vec<Recorded>> = HashMap::new();
        runlog_replay::events::for_each(log.as_ref(), from, 1, head, &mut |seq, e| {
            if let EventKind::ModelCalled(call) = e.kind {
                let answered = matches!(call.end, CallEnd::Answered | CallEnd::Replayed { .. });
                if answered && call.response.is_some() {
                    calls
                        .entry((call.task.clone(), call.attempt, call.stage))
                        .or_default()
                        .push(Recorded {
                            seq,
                            call: *call,
                            request: None,
                            used: false,
                        });
                }
            }
            Ok(true)
        })
        .map_err(failed)?;
        Ok(Book {
            answers: rerun.answers,
            rerun,
            run: run.to_owned(),
            store: store.to_string_lossy().into_owned(),
            places: Mutex::new(None),
            log,
            calls: Mutex::new(calls),
        })
    }

    /// How call `n` of the rerun's `task` attempt `attempt` (its `stage` command), to
    /// `provider`'s `api` asking `request`, is answered.
    pub fn find(
        &self,
        (task, attempt, stage): (&TaskId, u32, UsageStage),
        n: u32,
        (provider, api): (&str, ModelApi),
        request: &[u8],
    ) -> Found {
        let recorded_attempt = self.rerun.recorded_attempt(task, attempt);
        let key = (task.clone(), recorded_attempt, stage);
        let Ok(mut calls) = self.calls.lock() else {
            return Found::Differs {
                seq: None,
                why: "the recording could not be read (a thread failed)".into(),
            };
        };
        let Some(list) = calls.get_mut(&key).filter(|l| !l.is_empty()) else {
            return Found::Differs {
                seq: None,
                why: format!(
                    "the recording has no calls of attempt {recorded_attempt}'s {} command",
                    stage.name()
                ),
            };
        };
        let log = self.log.as_ref();
        let first = list.iter().position(|r| r.call.n == n).unwrap_or(0);
        let places = self.places(list, first);
        let asked_back = places.back(&String::from_utf8_lossy(request));
        let now = Asked {
            provider,
            api: api.name(),
            body: asked_back.as_bytes(),
        };
        let rename = (self.run.as_str(), self.rerun.from_run.as_str());
        // How the recorded call at `i` differs from this one (`None`: it asked the same).
        let compare = |list: &mut Vec<Recorded>, i: usize| -> Option<String> {
            let r = list.get_mut(i)?;
            if let Err(why) = r.read_request(log) {
                return Some(format!("the recorded request cannot be read: {why}"));
            }
            let was = Asked {
                provider: &r.call.provider,
                api: r.call.api.name(),
                body: r.request.as_deref().unwrap_or_default(),
            };
            differs(now, was, rename)
        };
        let own = list.iter().position(|r| r.call.n == n && !r.used);
        let own_why = own.map(|i| (i, compare(list, i)));
        let matched = match &own_why {
            Some((i, None)) => Some(*i),
            // The command's other calls not answered yet: background calls come in any order.
            _ => (0..list.len()).find(|&i| {
                Some(i) != own && list.get(i).is_some_and(|r| !r.used) && compare(list, i).is_none()
            }),
        };
        if let Some(r) = matched.and_then(|i| list.get_mut(i)) {
            r.used = true;
            let response = match r.call.response {
                Some(body) => read(log, &body.blob.0),
                None => Ok(Vec::new()),
            };
            return match response {
                Ok(response) => {
                    let (response, mapped) = places.answer(r.call.api, r.call.streamed, &response);
                    Found::Served {
                        seq: r.seq,
                        call: Box::new(r.call.clone()),
                        response,
                        mapped,
                    }
                }
                Err(why) => Found::Differs {
                    seq: Some(r.seq),
                    why: format!("the recorded answer cannot be read: {why}"),
                },
            };
        }
        match own_why.and_then(|(i, why)| Some((list.get(i)?.seq, why?))) {
            Some((seq, why)) => Found::Differs {
                seq: Some(seq),
                why,
            },
            None => Found::Differs {
                seq: None,
                why: format!(
                    "the recording's attempt {recorded_attempt} made no call {n} asking this ({} made)",
                    list.len()
                ),
            },
        }
    }
}

impl Book {
    /// The recorded run's places and the rerun's: where the recorded run's store was is read
    /// from a recorded request (`list`'s at `i`, the first that names a worktree of the
    /// recorded run), else taken to be the rerun's.
    fn places(&self, list: &mut [Recorded], i: usize) -> Arc<Relocation> {
        let Ok(mut places) = self.places.lock() else {
            return Arc::new(Relocation::new(
                self.rerun.from_run.as_str(),
                &self.run,
                &self.store,
                &self.store,
            ));
        };
        if let Some(known) = places.as_ref() {
            return known.clone();
        }
        let from = self.rerun.from_run.as_str();
        let seen = list.get_mut(i).and_then(|r| {
            r.read_request(self.log.as_ref()).ok()?;
            Relocation::store_seen(&String::from_utf8_lossy(r.request.as_deref()?), from)
        });
        let then = seen.as_deref().unwrap_or(&self.store);
        let relocation = Arc::new(Relocation::new(from, &self.run, then, &self.store));
        // Known once a request named the recorded run's store; else asked again next call.
        if seen.is_some() {
            *places = Some(relocation.clone());
        }
        relocation
    }
}

impl Recorded {
    /// Its request's bytes, read from the store once.
    fn read_request(&mut self, log: &dyn EventLog) -> Result<(), String> {
        if self.request.is_none() {
            self.request = Some(match self.call.request {
                Some(body) => read(log, &body.blob.0)?,
                None => Vec::new(),
            });
        }
        Ok(())
    }
}

fn read(log: &dyn EventLog, hash: &[u8; 32]) -> Result<Vec<u8>, String> {
    log.get_blob(hash)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| "a recorded body is missing from the store (forgotten?)".to_owned())
}
