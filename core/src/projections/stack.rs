//! Seed 002's queries over the supervisor state stack.

use crate::ids::StageId;
use crate::state::{RunState, StackEntry};
use crate::value::Value;
use std::collections::BTreeMap;

/// The latest result a stage completed with (`get_stage_result`); a stage that printed no
/// result (`Null`) has none, as in seed 002.
pub fn latest_result<'s>(state: &'s RunState, stage: &StageId) -> Option<&'s Value> {
    state
        .stack
        .iter()
        .rev()
        .filter(|e| &e.stage == stage)
        .find_map(|e| e.result.as_ref().filter(|r| !r.is_null()))
}

/// The latest result of every stage that completed (`get_all_stage_results`).
pub fn all_latest_results(state: &RunState) -> BTreeMap<&StageId, &Value> {
    let mut out = BTreeMap::new();
    for entry in state.stack.iter().rev() {
        if let Some(result) = entry.result.as_ref().filter(|r| !r.is_null()) {
            out.entry(&entry.stage).or_insert(result);
        }
    }
    out
}

/// The stack, most recent first.
pub fn newest_first(state: &RunState) -> impl Iterator<Item = &StackEntry> {
    state.stack.iter().rev()
}
