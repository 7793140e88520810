//! A state's encoding (snapshots): its tasks in the order they were added, each as a mask of
//! the fields that differ from their default and then those fields alone.
//!
//! A snapshot's decode is most of a `state_at` on a large run, and it costs about the same per
//! field whether the field holds anything or not. Most of a task's fields keep their default
//! all its life (no sub-project, no budget, no checkpoints, nothing replaced), so leaving them
//! out saves a good part of the decode. A task's spec is encoded the same way here; inside an
//! event it keeps its own, unchanged encoding. A task's id is its key in the state's table and
//! its place in the state's order: it is encoded once, in the task, and both are rebuilt from
//! it. The reverse dependencies are read as a sorted list and built into their map at once.
//!
//! Every field is named in one list per type, and the codec destructures and builds the value
//! from that list: a field added to the type and not to the list does not compile.

use crate::ids::{IdMap, TaskId};
use crate::spec::TaskSpec;
use crate::state::{RunState, TaskState};
use bincode::de::Decoder;
use bincode::enc::Encoder;
use bincode::error::{DecodeError, EncodeError};
use bincode::{Decode, Encode};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Encode and decode functions for `$ty`: the `always` fields as they are, then a mask of the
/// `sparse` fields that differ from `Default::default()`, then those. The `given` fields are
/// the caller's to encode, and to hand to the decode.
macro_rules! sparse_codec {
    (
        $ty:ident, $encode:ident, $decode:ident,
        given: [$($given:ident: $given_ty:ty),* $(,)?],
        always: [$($always:ident),* $(,)?],
        sparse: [$($sparse:ident),* $(,)?] $(,)?
    ) => {
        // One bit of a u64 mask for each sparse field, and the decode's check of the bits past
        // the last one needs one more.
        const _: () = assert!([$(stringify!($sparse)),*].len() < 64);

        fn $encode<E: Encoder>(value: &$ty, encoder: &mut E) -> Result<(), EncodeError> {
            let $ty { $($given: _,)* $($always,)* $($sparse,)* } = value;
            $($always.encode(encoder)?;)*
            let mut mask = 0u64;
            let mut bit = 1u64;
            $(
                if !is_default($sparse) {
                    mask |= bit;
                }
                bit <<= 1;
            )*
            let _ = bit;
            mask.encode(encoder)?;
            let mut bit = 1u64;
            $(
                if mask & bit != 0 {
                    $sparse.encode(encoder)?;
                }
                bit <<= 1;
            )*
            let _ = bit;
            Ok(())
        }

        fn $decode<C, D: Decoder<Context = C>>(
            $($given: $given_ty,)*
            decoder: &mut D,
        ) -> Result<$ty, DecodeError> {
            $(let $always = Decode::decode(decoder)?;)*
            let mask = u64::decode(decoder)?;
            let mut bit = 1u64;
            $(
                let $sparse = if mask & bit != 0 {
                    Decode::decode(decoder)?
                } else {
                    Default::default()
                };
                bit <<= 1;
            )*
            if mask >> bit.trailing_zeros() != 0 {
                return Err(DecodeError::Other("a field mask names fields the type does not have"));
            }
            Ok($ty { $($given,)* $($always,)* $($sparse,)* })
        }
    };
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

sparse_codec!(
    TaskSpec, encode_spec, decode_spec,
    given: [],
    always: [id, description],
    sparse: [after, parent, files, destructive, run, test, eval, requires_testing, stage, retry, checkpoints],
);

sparse_codec!(
    TaskState, encode_task, decode_task,
    given: [spec: TaskSpec],
    always: [status],
    sparse: [
        attempt, running, agent, worktree, rescues, test_failures, stage_retries,
        first_started_at, retry_due, checkpoints, class, feedback, last_tests_passed, last_score,
        last_dimensions, last_gate, eval_error, reason, replaced_by, sub_project, worker,
        abandoned, code, budget, spend, budget_stop, held, outside, did_not_fit,
    ],
);

sparse_codec!(
    RunState, encode_run, decode_run,
    given: [
        tasks: IdMap<TaskId, Arc<TaskState>>,
        order: Arc<Vec<TaskId>>,
        dependents: Arc<BTreeMap<TaskId, Vec<TaskId>>>,
    ],
    always: [seq, settings, status, stages],
    sparse: [
        run, fork, children, replan, plan_hashes, parent, workspace, prices, budget, spend,
        usage, review, in_flight, keys,
    ],
);

/// Tasks decoded ahead of their table: enough for any real run, and no more than that from a
/// length the bytes claim.
const TABLE_AHEAD: usize = 1 << 16;

impl Encode for RunState {
    fn encode<E: Encoder>(&self, encoder: &mut E) -> Result<(), EncodeError> {
        if self.order.len() != self.tasks.len() {
            return Err(EncodeError::Other("a state's order and its tasks differ"));
        }
        self.order.len().encode(encoder)?;
        for id in self.order.iter() {
            match self.tasks.get(id) {
                Some(task) if task.spec.id == *id => task.encode(encoder)?,
                _ => return Err(EncodeError::Other("a state's order and its tasks differ")),
            }
        }
        self.dependents.encode(encoder)?;
        encode_run(self, encoder)
    }
}

impl<Context> Decode<Context> for RunState {
    fn decode<D: Decoder<Context = Context>>(decoder: &mut D) -> Result<Self, DecodeError> {
        let len = usize::decode(decoder)?;
        decoder.claim_container_read::<(TaskId, Arc<TaskState>)>(len)?;
        let mut tasks = IdMap::with_capacity_and_hasher(len.min(TABLE_AHEAD), Default::default());
        let mut order = Vec::with_capacity(len.min(TABLE_AHEAD));
        for _ in 0..len {
            let task = Arc::new(TaskState::decode(decoder)?);
            let id = task.spec.id.clone();
            order.push(id.clone());
            if tasks.insert(id, task).is_some() {
                return Err(DecodeError::Other("a task appears twice in a state"));
            }
        }
        // As a map encodes: its length, then its pairs in key order.
        let len = usize::decode(decoder)?;
        decoder.claim_container_read::<(TaskId, Vec<TaskId>)>(len)?;
        let mut dependents = Vec::with_capacity(len.min(TABLE_AHEAD));
        for _ in 0..len {
            dependents.push(<(TaskId, Vec<TaskId>)>::decode(decoder)?);
        }
        decode_run(
            tasks,
            Arc::new(order),
            Arc::new(dependents.into_iter().collect()),
            decoder,
        )
    }
}
bincode::impl_borrow_decode!(RunState);

impl Encode for TaskState {
    fn encode<E: Encoder>(&self, encoder: &mut E) -> Result<(), EncodeError> {
        encode_spec(&self.spec, encoder)?;
        encode_task(self, encoder)
    }
}

impl<Context> Decode<Context> for TaskState {
    fn decode<D: Decoder<Context = Context>>(decoder: &mut D) -> Result<Self, DecodeError> {
        let spec = decode_spec(decoder)?;
        decode_task(spec, decoder)
    }
}
bincode::impl_borrow_decode!(TaskState);

#[cfg(test)]
mod tests {
    use crate::codec::{decode_state, encode_state};
    use crate::event::GateOutcome;
    use crate::ids::{AgentId, IdMap, RunId, StageId, TaskId, Timestamp};
    use crate::settings::{Budget, RetryLimit, RetryStrategy};
    use crate::spec::{TaskClass, TaskSpec};
    use crate::state::{RunState, SubProject, TaskCode, TaskState, TaskStatus};
    use crate::usage::{BudgetKind, BudgetStop, Limits, Spend, Tokens};
    use std::collections::{BTreeMap, BTreeSet};

    /// A task with every field, its spec's too, away from its default.
    fn filled() -> TaskState {
        let spec = TaskSpec {
            id: TaskId::from("t1"),
            description: "all of it".into(),
            after: vec![TaskId::from("t0")],
            parent: Some(TaskId::from("g")),
            files: vec!["src/a.rs".into()],
            destructive: Some(true),
            run: Some("./agent.sh".into()),
            test: Some("./test.sh".into()),
            eval: Some("./judge.sh".into()),
            requires_testing: true,
            stage: Some(StageId::from("s")),
            retry: RetryStrategy {
                limit: RetryLimit::Unlimited,
                budget: Budget {
                    max_attempts: Some(9),
                    max_elapsed_ms: None,
                },
                delay_ms: 0,
                backoff: 1.5,
                timeout_ms: Some(60_000),
                circuit_after: 0,
            },
            checkpoints: vec!["half".into()],
        };
        TaskState {
            spec,
            status: TaskStatus::Done,
            attempt: 3,
            running: true,
            agent: Some(AgentId::from("agent-t1")),
            worktree: Some("t1".into()),
            rescues: 1,
            test_failures: 2,
            stage_retries: 4,
            first_started_at: Some(Timestamp(5)),
            retry_due: Some(Timestamp(9)),
            checkpoints: BTreeSet::from(["half".to_owned()]),
            class: Some(TaskClass::Merge),
            feedback: Some("try again".into()),
            last_tests_passed: Some(false),
            last_score: Some(0.5),
            last_dimensions: BTreeMap::from([("style".to_owned(), 0.25)]),
            last_gate: Some(GateOutcome::Rescue { n: 1 }),
            eval_error: Some("judge crashed".into()),
            reason: Some("why".into()),
            replaced_by: vec![TaskId::from("t2")],
            sub_project: Some(SubProject {
                workflow: "child.toml".into(),
                child: Some(RunId::from("c")),
                waiting: None,
            }),
            worker: Some("w1".into()),
            abandoned: true,
            code: TaskCode {
                commit: Some("abc".into()),
                merged: None,
                conflict: None,
            },
            budget: Limits {
                max_cost_usd: Some(1.0),
                max_tokens: None,
            },
            spend: Spend {
                tokens: Tokens {
                    input: 10,
                    ..Tokens::default()
                },
                cost_usd: 0.01,
                unpriced: 0,
            },
            budget_stop: Some(BudgetStop {
                budget: None,
                kind: BudgetKind::CostUsd,
                limit: 1.0,
                spent: 1.5,
            }),
            held: Some(GateOutcome::Pass),
            outside: vec![crate::outside::OutsideWrites {
                task: TaskId::from("t1"),
                attempt: 2,
                written: vec![crate::outside::Written {
                    place: crate::outside::Place::Checkout,
                    paths: vec!["hello.txt".into()],
                    more: 0,
                }],
                policy: crate::outside::OutsidePolicy::Warn,
            }],
            did_not_fit: Some(crate::reservation::DidNotFit {
                reservation: crate::reservation::Reservation {
                    task: TaskId::from("t1"),
                    attempt: 2,
                    stage: crate::usage::UsageStage::Agent,
                    n: 4,
                    provider: "anthropic".into(),
                    api: crate::model_call::ModelApi::Messages,
                    model: Some("m".into()),
                    input_tokens: 2_000,
                    output_tokens: 4_096,
                    bound: crate::reservation::OutputBound::Request,
                    cost_usd: Some(0.07),
                },
                budget: BudgetStop {
                    budget: None,
                    kind: BudgetKind::CostUsd,
                    limit: 1.0,
                    spent: 0.98,
                },
            }),
        }
    }

    fn state_of(task: TaskState) -> RunState {
        let mut tasks = IdMap::default();
        tasks.insert(task.spec.id.clone(), std::sync::Arc::new(task));
        RunState {
            order: std::sync::Arc::new(tasks.keys().cloned().collect()),
            tasks,
            ..RunState::default()
        }
    }

    /// A task as JSON, flattened one level into its spec: field name to value.
    fn serde_json_like(task: &TaskState) -> BTreeMap<String, serde_json::Value> {
        let serde_json::Value::Object(mut fields) = serde_json::to_value(task).unwrap() else {
            panic!("a task is a JSON object");
        };
        let Some(serde_json::Value::Object(spec)) = fields.remove("spec") else {
            panic!("a task has a spec");
        };
        let spec = spec.into_iter().map(|(k, v)| (format!("spec.{k}"), v));
        fields.into_iter().chain(spec).collect()
    }

    #[test]
    fn the_filled_task_leaves_no_field_at_its_default() {
        // Otherwise the round trip below would not show that every field is carried.
        let full = serde_json_like(&filled());
        let fresh = serde_json_like(&TaskState::new(TaskSpec::new("t1", "all of it")));
        for (field, value) in &full {
            if field != "spec.id" && field != "spec.description" && field != "spec.requires_testing"
            {
                assert_ne!(Some(value), fresh.get(field), "{field} is at its default");
            }
        }
    }

    #[test]
    fn every_field_survives_a_snapshot() {
        let state = state_of(filled());
        let back = decode_state(&encode_state(&state).unwrap()).unwrap();
        assert_eq!(back, state);
    }

    #[test]
    fn a_fresh_task_survives_a_snapshot_and_takes_few_bytes() {
        let fresh = state_of(TaskState::new(TaskSpec::new("t1", "x")));
        let bytes = encode_state(&fresh).unwrap();
        assert_eq!(decode_state(&bytes).unwrap(), fresh);
        let full = encode_state(&state_of(filled())).unwrap();
        assert!(
            bytes.len() + 100 < full.len(),
            "{} against {}",
            bytes.len(),
            full.len()
        );
    }

    proptest::proptest! {
        #[test]
        fn bytes_changed_or_cut_decode_or_fail_never_panic(
            changes in proptest::collection::vec((0usize..4096, proptest::num::u8::ANY), 1..8),
            keep in 0usize..4096,
        ) {
            let mut bytes = encode_state(&state_of(filled())).unwrap();
            let len = bytes.len();
            for (at, byte) in changes {
                bytes[at % len] = byte;
            }
            bytes.truncate(keep % (len + 1));
            let _ = decode_state(&bytes);
        }
    }

    #[test]
    fn a_mask_naming_a_field_the_task_lacks_is_refused() {
        let config = bincode::config::standard();
        // A spec's id, description and mask, the mask with a bit past its eleven fields.
        let bytes = bincode::encode_to_vec(("t1", "x", 1u64 << 40), config).unwrap();
        let decoded = bincode::decode_from_slice::<TaskState, _>(&bytes, config);
        assert!(decoded.is_err());
    }
}
