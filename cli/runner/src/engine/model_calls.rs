//! The engine's side of the model gateway: the gateway opened as driving starts (when the
//! workflow turns it on), each command given its own key and the gateway's address in place
//! of the providers' keys, a command's keys withdrawn as it ends, and each call recorded
//! (its bodies kept as blobs, secrets replaced first: the request as the call leaves, the
//! answer with the call's record, the calls handed over together committed at once). Under a
//! budget, each call's worst case is judged and recorded here before it leaves
//! (`runlog_core::reservation`).

use super::call_bodies::{self, Storing};
use super::{Engine, Result};
use crate::error::RunnerError;
use crate::finished::{self, Ran};
use crate::workflow::GatewayPlan;
use runlog_core::redact::Counts;
use runlog_core::rerun::Answers;
use runlog_core::reservation::Shortfall;
use runlog_core::usage::UsageStage;
use runlog_core::CommandKind;
use runlog_core::{EventKind, Rejection};
use runlog_core::{Hash, TaskId};
use runlog_gateway::{
    Asked, Book, Gateway, Judged, ModelMap, Passed, Provider, ProviderKind, Reserve, Setup,
    Standing,
};
use std::collections::{HashMap, HashSet};
use tokio::sync::mpsc;

/// An open gateway and the calls it hands over.
pub(super) struct ModelCalls {
    gateway: Gateway,
    passed: mpsc::UnboundedReceiver<Passed>,
    /// The reservations of calls under a budget, to judge.
    reserving: mpsc::UnboundedReceiver<Reserve>,
    /// The requests of calls leaving for their providers, to store while the models answer.
    asked: mpsc::UnboundedReceiver<Asked>,
    /// Requests being stored while their calls are under way, with the secrets replaced in them.
    requests: HashMap<CallKey, (Storing, Counts)>,
    /// The commands (task, attempt, stage) whose calls the gateway measured.
    measured: HashSet<(TaskId, u32, UsageStage)>,
    /// Each running command's last request to each model, as kept: the next one is stored
    /// against it (a conversation sends all of itself again on every turn).
    last_request: HashMap<Conversation, (Hash, Vec<u8>)>,
}

/// What the gateway hands the engine.
pub(super) enum FromGateway {
    /// A call, to record.
    Call(Box<Passed>),
    /// A call's worst case, to judge.
    Reserve(Reserve),
    /// A call's request as it leaves, to store.
    Asked(Asked),
}

/// A command's conversation with one model: task, attempt, stage and model.
type Conversation = (TaskId, u32, UsageStage, Option<String>);

/// A call handed over, its answer on its way to the store.
struct Answered {
    passed: Passed,
    response: Storing,
    /// A stream's assembled message.
    assembled: Option<Storing>,
    /// The secrets replaced in the answer.
    counts: Counts,
}

/// One call of a command: task, attempt, stage and its number among the command's calls.
type CallKey = (TaskId, u32, UsageStage, u32);

impl ModelCalls {
    /// What a command of `id`'s `attempt` gets to reach its models through the gateway: the
    /// gateway's address under every name SDKs and CLIs read, and its own key in place of each
    /// provider's.
    fn env(&self, id: &TaskId, attempt: u32, stage: UsageStage) -> Vec<(String, String)> {
        let key = self.gateway.admit(id, attempt, stage);
        let url = self.gateway.url().to_owned();
        let mut env = vec![
            ("RUNLOG_GATEWAY".to_owned(), url.clone()),
            ("ANTHROPIC_BASE_URL".to_owned(), url.clone()),
            ("OPENAI_BASE_URL".to_owned(), format!("{url}/v1")),
            ("OPENAI_API_BASE".to_owned(), format!("{url}/v1")),
        ];
        env.extend(
            ProviderKind::ALL
                .into_iter()
                .map(|k| (k.key_env().to_owned(), key.clone())),
        );
        // A provider whose key has a name of its own: that name gets the command's key too.
        for p in self.gateway.providers() {
            if !env.iter().any(|(name, _)| name == &p.api_key_env) {
                env.push((p.api_key_env.clone(), key.clone()));
            }
        }
        env
    }

    /// The keys of `id`'s command stop working: it ended.
    fn dismiss(&mut self, id: &TaskId) {
        self.gateway.dismiss(id);
        self.last_request.retain(|(task, ..), _| task != id);
    }

    /// The request this conversation sent last, as kept: the next is stored against it.
    fn take_last_request(&mut self, conversation: &Conversation) -> Option<(Hash, Vec<u8>)> {
        self.last_request.remove(conversation)
    }
}

impl Engine {
    /// Opens the gateway when the workflow turns it on, each provider's key read from the
    /// runner's environment as the host gave it.
    pub(super) async fn open_gateway(&mut self) -> Result<()> {
        let book = self.rerun_book()?;
        // A rerun answered from the recording needs no key: every provider is there to match.
        let replaying = book.is_some();
        let providers = match &self.ctx.runner.gateway {
            GatewayPlan::On(providers) => providers.clone(),
            GatewayPlan::Off if !replaying => return Ok(()),
            GatewayPlan::Off | GatewayPlan::IfKeys => ProviderKind::ALL
                .into_iter()
                .map(Provider::public)
                .filter(|p| replaying || self.ctx.host.var(&p.api_key_env).is_some())
                .collect(),
        };
        if providers.is_empty() {
            return Ok(());
        }
        let keys: HashMap<String, String> = providers
            .iter()
            .filter_map(|p| {
                Some((
                    p.name.clone(),
                    self.ctx.host.var(&p.api_key_env)?.to_owned(),
                ))
            })
            .collect();
        let (tx, passed) = mpsc::unbounded_channel();
        let (judge, reserving) = mpsc::unbounded_channel();
        let (keeper, asked) = mpsc::unbounded_channel();
        let models = runlog_replay::control::experiment_of(self.rec.log().as_ref(), self.run())?
            .map(|x| ModelMap::of(&x.models))
            .unwrap_or_default();
        let setup = Setup {
            providers,
            keys,
            book,
            models,
            bounds: self.ctx.runner.output_bounds.clone(),
            judge: Some(judge),
            asked: Some(keeper),
        };
        let gateway = Gateway::start(setup, tx)
            .await
            .map_err(RunnerError::Gateway)?;
        self.calls = Some(ModelCalls {
            gateway,
            passed,
            reserving,
            asked,
            requests: HashMap::new(),
            measured: HashSet::new(),
            last_request: HashMap::new(),
        });
        Ok(())
    }

    /// In a rerun whose answers come from the recording, the recording (read from the run it
    /// reruns, named by the rerun's record).
    fn rerun_book(&self) -> Result<Option<Book>> {
        let Some(rerun) = runlog_replay::control::rerun_of(self.rec.log().as_ref(), self.run())?
        else {
            return Ok(None);
        };
        if rerun.answers == Answers::Live {
            return Ok(None);
        }
        Book::load(
            self.rec.log().clone(),
            self.run(),
            self.ctx.layout.store(),
            rerun,
        )
        .map(Some)
        .map_err(RunnerError::Recording)
    }

    /// What a command of `id`'s current attempt gets to reach its models through the gateway:
    /// the gateway's address under every name SDKs and CLIs read, and its own key in place of
    /// each provider's.
    pub(super) fn gateway_env(&self, id: &TaskId, ran: Ran) -> Vec<(String, String)> {
        match (&self.calls, self.state().task(id)) {
            (Some(calls), Some(task)) => calls.env(id, task.attempt, ran.stage()),
            _ => Vec::new(),
        }
    }

    /// Whether the gateway measured calls of `id`'s current attempt's `ran` command: then the
    /// usage it printed is its claim.
    pub(super) fn measured(&self, id: &TaskId, ran: Ran) -> bool {
        let (Some(calls), Some(task)) = (&self.calls, self.state().task(id)) else {
            return false;
        };
        calls
            .measured
            .contains(&(id.clone(), task.attempt, ran.stage()))
    }

    /// The keys of `id`'s command stop working: it ended.
    pub(super) fn withdraw_keys(&mut self, id: &TaskId) {
        if let Some(calls) = &mut self.calls {
            calls.dismiss(id);
        }
    }

    /// Records `first` and every call the gateway has handed over by now, made durable
    /// together (one commit for all of them) before any of their answers ends.
    pub(super) fn take_calls(&mut self, first: Option<Passed>) -> Result<()> {
        let mut handed = Vec::new();
        let mut next = first;
        while let Some(passed) = next
            .take()
            .or_else(|| self.calls.as_mut().and_then(|c| c.passed.try_recv().ok()))
        {
            // Every answer starts on its way to the store before the first is waited for.
            handed.push(self.store_answer(passed));
        }
        let mut told = Vec::new();
        for answered in handed {
            told.extend(self.record_call(answered)?);
        }
        if told.is_empty() {
            return Ok(());
        }
        // Durable before the callers have the whole answers; the budgets they spent in force
        // for the next calls.
        self.commit()?;
        self.refresh_budgets();
        for recorded in told {
            let _ = recorded.send(());
        }
        Ok(())
    }

    /// The next call the gateway hands over or reservation it asks for (never, without a
    /// gateway). A call's record comes first: it may free the room a reservation asks for.
    pub(super) async fn next_from_gateway(calls: &mut Option<ModelCalls>) -> Option<FromGateway> {
        let Some(c) = calls else {
            return std::future::pending().await;
        };
        tokio::select! {
            biased;
            Some(passed) = c.passed.recv() => Some(FromGateway::Call(Box::new(passed))),
            Some(asked) = c.reserving.recv() => Some(FromGateway::Reserve(asked)),
            Some(asked) = c.asked.recv() => Some(FromGateway::Asked(asked)),
            else => None,
        }
    }

    /// Judges a call's worst case by the run's rules and records it when it fits. Alone, the
    /// engine's head is the whole truth and the call may go at once (the reservation is
    /// appended with the step); among workers it goes once the append holds against theirs.
    pub(super) fn judge(&mut self, asked: Reserve) -> Result<()> {
        let Reserve {
            reservation,
            judged,
        } = asked;
        let key = reservation.clone();
        let decided = self.rec.record(CommandKind::ReserveModelCall {
            reservation: Box::new(reservation),
        })?;
        let run = self.run().to_owned();
        let refusal = |shortfall: &Shortfall| {
            format!(
                "{}: runlog refused this call before it reached the provider; raise it with `{}`",
                shortfall.describe(),
                shortfall.budget.raise_command(&run)
            )
        };
        let verdict = match decided {
            Ok(events) => {
                let did_not_fit = events.iter().find_map(|(_, e)| match &e.kind {
                    EventKind::ModelCallDidNotFit(d) => Some(d.shortfall()),
                    _ => None,
                });
                match did_not_fit {
                    Some(shortfall) => Judged::Refused(refusal(&shortfall)),
                    None if self.crew.is_some() => {
                        self.commit()?;
                        let held = self.state().in_flight.iter().any(|r| r.key() == key.key());
                        if held {
                            Judged::Go
                        } else {
                            Judged::Wait("another worker's call took the room first".to_owned())
                        }
                    }
                    None => Judged::Go,
                }
            }
            Err(Rejection::CallDoesNotFit { shortfall, .. }) => Judged::Wait(refusal(&shortfall)),
            Err(other) => Judged::Refused(format!("runlog refused this call: {other}")),
        };
        let _ = judged.send(verdict);
        Ok(())
    }

    /// Stores `first` and the other requests of calls that left for their providers by now,
    /// each against the last its conversation sent, so that they are not stored on the path of
    /// their answers' ends.
    pub(super) fn store_requests(&mut self, first: Option<Asked>) {
        let mut next = first;
        while let Some(asked) = next
            .take()
            .or_else(|| self.calls.as_mut().and_then(|c| c.asked.try_recv().ok()))
        {
            let Asked {
                task,
                attempt,
                stage,
                n,
                model,
                request,
            } = asked;
            let mut counts = Counts::new();
            let storing = self.store_in_conversation(
                (task.clone(), attempt, stage, model),
                &request,
                &mut counts,
            );
            if let Some(calls) = &mut self.calls {
                calls
                    .requests
                    .insert((task, attempt, stage, n), (storing, counts));
            }
        }
    }

    /// `request` set to be stored against the last request of `conversation`, and remembered
    /// as its last.
    fn store_in_conversation(
        &mut self,
        conversation: Conversation,
        request: &[u8],
        counts: &mut Counts,
    ) -> Storing {
        let previous = self
            .calls
            .as_mut()
            .and_then(|c| c.take_last_request(&conversation));
        let (storing, text) = call_bodies::store(
            self.rec.log(),
            &self.ctx.redactor,
            request,
            previous,
            counts,
        );
        if let (Some(calls), Some(blob)) = (&mut self.calls, storing.blob()) {
            calls.last_request.insert(conversation, (blob, text));
        }
        storing
    }

    /// `passed` with its answer (and a stream's assembled message) set to be stored.
    fn store_answer(&self, mut passed: Passed) -> Answered {
        let mut counts = Counts::new();
        let response = std::mem::take(&mut passed.response);
        // A stream is kept as its events came and as the message they add up to.
        let assembled = passed
            .call
            .streamed
            .then(|| runlog_core::dialect::assembled(passed.call.api, &response))
            .flatten()
            .map(|whole| {
                let text = whole.to_string();
                self.store_body(text.as_bytes(), &mut counts)
            });
        let response = self.store_body(&response, &mut counts);
        Answered {
            passed,
            response,
            assembled,
            counts,
        }
    }

    fn store_body(&self, bytes: &[u8], counts: &mut Counts) -> Storing {
        call_bodies::store(self.rec.log(), &self.ctx.redactor, bytes, None, counts).0
    }

    /// Records a call the gateway handed over; who to tell once it is durable (the caller of
    /// [`Engine::take_calls`] commits).
    fn record_call(
        &mut self,
        answered: Answered,
    ) -> Result<Option<tokio::sync::oneshot::Sender<()>>> {
        self.store_requests(None);
        let Answered {
            passed,
            response,
            assembled,
            counts: answer_counts,
        } = answered;
        let Passed {
            mut call,
            request,
            recorded,
            diverged,
            mapped,
            ..
        } = passed;
        if let Some(mapped) = mapped {
            self.record(CommandKind::RecordAnswerMapped {
                mapped: Box::new(mapped),
            })?;
        }
        if let Some(divergence) = diverged {
            let stops = !divergence.live;
            let task = divergence.task.clone();
            self.record(CommandKind::RecordDivergence {
                divergence: Box::new(divergence),
            })?;
            // With recorded answers, the attempt stops at its first divergence.
            if stops {
                if let Some(running) = self.procs.busy.get(&task) {
                    running.stop();
                }
            }
        }
        let key: CallKey = (call.task.clone(), call.attempt, call.stage, call.n);
        let stored = self.calls.as_mut().and_then(|c| c.requests.remove(&key));
        let (request, mut counts) = match stored {
            Some(stored) => stored,
            None => {
                let mut counts = Counts::new();
                let conversation = (
                    call.task.clone(),
                    call.attempt,
                    call.stage,
                    call.model.clone(),
                );
                let storing = self.store_in_conversation(conversation, &request, &mut counts);
                (storing, counts)
            }
        };
        let request = request.wait()?;
        for (secret, n) in answer_counts {
            *counts.entry(secret).or_default() += n;
        }
        let response = response.wait()?;
        call.assembled = match assembled {
            Some(whole) => whole.wait()?,
            None => None,
        };
        if let Some(error) = &mut call.error {
            self.ctx.redactor.redact_in_place(error, &mut counts);
        }
        call.request = request;
        call.response = response;
        if let Some(calls) = &mut self.calls {
            calls
                .measured
                .insert((call.task.clone(), call.attempt, call.stage));
        }
        // What a person may not read is said first, as for a command's output.
        if let Some(redaction) = finished::redaction(Some(&call.task), counts) {
            self.record(redaction)?;
        }
        let (task, about) = (
            call.task.clone(),
            format!("{} call {}", call.stage.name(), call.n),
        );
        let kind = CommandKind::RecordModelCall {
            call: Box::new(call),
        };
        // One the rules refuse (its task replaced by a replan, an attempt a rollback undid) is
        // noted on the task and the run goes on.
        if let Err(refused) = self.rec.record(kind)? {
            self.note(&task, format!("{about}: {refused}"))?;
        }
        Ok(recorded)
    }

    /// Tells the gateway where each running task (and the one a replanner replans after) stands
    /// with its budgets (its own and the run's): spent, or bounded (its calls reserved first),
    /// or neither (left out).
    pub(super) fn refresh_budgets(&self) {
        let Some(calls) = &self.calls else {
            return;
        };
        let state = self.state();
        let run = self.rec.run();
        // A replanner calls with the key of the task it replans after, under the same budgets.
        let replanning = self.procs.replanning.as_ref().map(|r| &r.after);
        let budgets = self
            .procs
            .busy
            .keys()
            .chain(replanning)
            .filter_map(|id| {
                let task = state.task(id)?;
                let standing = match state.overspent(task) {
                    Some(stop) => Standing::Spent(format!(
                        "{}: runlog refused this call before it reached the provider; raise it with `{}`",
                        state.stop_words(task, &stop),
                        stop.raise_command(run)
                    )),
                    None if task.budget.is_unbounded() && state.budget.is_unbounded() => {
                        return None
                    }
                    None => Standing::Budgeted,
                };
                Some((id.clone(), standing))
            })
            .collect();
        calls.gateway.set_budgets(budgets);
    }
}
