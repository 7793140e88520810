//! Plan validation (ids, dependencies, cycles, depth) and the plan hash used to spot
//! regeneration loops.

use crate::ids::{Hash, TaskId};
use crate::rejection::Rejection;
use crate::settings::{RetryLimit, RetryStrategy, Settings, MAX_NESTING};
use crate::spec::TaskSpec;
use crate::state::{RunState, TaskStatus};
use std::collections::{BTreeMap, BTreeSet};

/// Refuses an id that is not a name ([`crate::NAME_RULE`]); `what` says which kind of id.
pub fn check_name(what: &str, id: &str) -> Result<(), Rejection> {
    match crate::ids::not_a_name(id) {
        None => Ok(()),
        Some(why) => Err(Rejection::NotAName {
            what: what.into(),
            id: id.into(),
            why: why.into(),
        }),
    }
}

/// Checks the settings are in range.
pub fn validate_settings(s: &Settings) -> Result<(), Rejection> {
    let bad = |field: &str, reason: &str| {
        Err(Rejection::InvalidSetting {
            field: field.into(),
            reason: reason.into(),
        })
    };
    if !(s.eval_threshold.is_finite() && (0.0..=1.0).contains(&s.eval_threshold)) {
        return bad("eval_threshold", "must be a number between 0 and 1");
    }
    if s.max_depth == 0 || s.max_depth > MAX_NESTING {
        return bad("max_depth", "must be between 1 and 64");
    }
    if s.jobs == 0 {
        return bad("jobs", "must be at least 1");
    }
    Ok(())
}

/// Checks a retry strategy: a finite positive backoff, and a bound on unlimited retries (an
/// attempt or time budget, a circuit breaker, or a cost or token budget: `money_bounded`).
pub fn validate_strategy(
    task: &str,
    r: &RetryStrategy,
    money_bounded: bool,
) -> Result<(), Rejection> {
    if !(r.backoff.is_finite() && r.backoff >= 1.0) {
        return Err(Rejection::InvalidSetting {
            field: format!("task {task} retry.backoff"),
            reason: "must be a number ≥ 1".into(),
        });
    }
    if r.limit == RetryLimit::Unlimited
        && r.budget.is_unbounded()
        && r.circuit_after == 0
        && !money_bounded
    {
        return Err(Rejection::InvalidSetting {
            field: format!("task {task} retry"),
            reason: "unlimited retries need a bound: an attempt or time budget, a cost or token budget (the task's or the run's), or a circuit breaker"
                .into(),
        });
    }
    Ok(())
}

/// Validates tasks about to join the plan of `state` (whose tasks listed in `cancelling` are
/// about to be cancelled, and whose dependents of `rewired` tasks will wait for their
/// replacements): unique ids, known dependencies and parents, no cycle, depth within
/// `max_depth`, sane strategies (`money_bounded`: whether a cost or token budget bounds a task).
///
/// Existing tasks never wait for new ones, so a pure addition can only close a cycle among the
/// new tasks: only those are searched, which keeps long runs linear. A revision that rewires
/// existing dependencies (`rewired` non-empty) gets the whole graph checked.
pub fn validate_new_tasks(
    state: &RunState,
    new: &[TaskSpec],
    cancelling: &BTreeSet<TaskId>,
    rewired: &[(TaskId, TaskId)],
    max_depth: u32,
    money_bounded: &dyn Fn(&TaskId) -> bool,
) -> Result<(), Rejection> {
    let mut fresh: BTreeMap<&TaskId, &TaskSpec> = BTreeMap::new();
    for spec in new {
        check_name("task", spec.id.as_str())?;
        if let Some(stage) = &spec.stage {
            check_name("stage", stage.as_str())?;
        }
        if state.tasks.contains_key(&spec.id) || fresh.insert(&spec.id, spec).is_some() {
            return Err(Rejection::DuplicateTask {
                task: spec.id.clone(),
            });
        }
        validate_strategy(spec.id.as_str(), &spec.retry, money_bounded(&spec.id))?;
    }
    let lookup = |id: &TaskId| {
        fresh
            .get(id)
            .copied()
            .or_else(|| state.tasks.get(id).map(|t| &t.spec))
    };
    for spec in new {
        for dep in &spec.after {
            if lookup(dep).is_none() || cancelling.contains(dep) {
                return Err(Rejection::UnknownDependency {
                    task: spec.id.clone(),
                    missing: dep.clone(),
                });
            }
        }
        if let Some(parent) = &spec.parent {
            let parent_ok = match state.tasks.get(parent) {
                // An existing task may only become a group before it has run.
                Some(t) => t.attempt == 0 && !t.status.is_terminal(),
                None => fresh.contains_key(parent),
            };
            if !parent_ok || cancelling.contains(parent) {
                return Err(Rejection::UnknownParent {
                    task: spec.id.clone(),
                    parent: parent.clone(),
                });
            }
        }
        let depth = depth_of(&lookup, &spec.id);
        if depth > max_depth {
            return Err(Rejection::TooDeep {
                task: spec.id.clone(),
                depth,
                max: max_depth,
            });
        }
    }
    let cycle = if rewired.is_empty() {
        find_cycle(&fresh)
    } else {
        let mut all: BTreeMap<&TaskId, TaskSpec> = state
            .tasks
            .iter()
            .map(|(id, t)| (id, t.spec.clone()))
            .collect();
        for spec in new {
            all.insert(&spec.id, spec.clone());
        }
        for spec in all.values_mut() {
            for (old, new_id) in rewired {
                if spec.after.contains(old) {
                    spec.after.retain(|d| d != old);
                    spec.after.push(new_id.clone());
                }
            }
        }
        let refs: BTreeMap<&TaskId, &TaskSpec> = all.iter().map(|(k, v)| (*k, v)).collect();
        find_cycle(&refs)
    };
    match cycle {
        Some(cycle) => Err(Rejection::DependencyCycle { cycle }),
        None => Ok(()),
    }
}

/// A task's nesting depth (1 at the top) among `specs`, following `parent`.
pub fn depth_among(specs: &[TaskSpec], id: &TaskId) -> u32 {
    depth_of(&|t| specs.iter().find(|s| &s.id == t), id)
}

impl crate::state::RunState {
    /// Each sub-project task with a child run, in plan order.
    pub fn child_runs(&self) -> Vec<(&TaskId, &crate::ids::RunId)> {
        self.tasks_in_order()
            .filter_map(|t| Some((&t.spec.id, t.child_run()?)))
            .collect()
    }

    /// A task's child run, for a sub-project task that has one.
    pub fn child_run_of(&self, task: &TaskId) -> Option<&crate::ids::RunId> {
        self.task(task)?.child_run()
    }

    /// A task's nesting depth in the plan (1 at the top), following `parent`.
    pub fn depth(&self, id: &TaskId) -> u32 {
        depth_of(&|t| self.task(t).map(|t| &t.spec), id)
    }
}

fn depth_of<'a>(lookup: &dyn Fn(&TaskId) -> Option<&'a TaskSpec>, id: &TaskId) -> u32 {
    let mut depth = 1;
    let mut current = lookup(id).and_then(|s| s.parent.as_ref());
    while let Some(parent) = current {
        depth += 1;
        if depth > MAX_NESTING {
            break;
        }
        current = lookup(parent).and_then(|s| s.parent.as_ref());
    }
    depth
}

/// The waits-for graph over `specs`: a task waits for its `after`, a group waits for its
/// children, and a child waits for whatever its ancestors wait for. Edges leaving `specs` are
/// kept but lead nowhere (those tasks cannot wait for anything in `specs`).
fn waits_for(specs: &BTreeMap<&TaskId, &TaskSpec>) -> BTreeMap<TaskId, Vec<TaskId>> {
    let mut edges: BTreeMap<TaskId, Vec<TaskId>> = BTreeMap::new();
    for (id, spec) in specs {
        let entry = edges.entry((*id).clone()).or_default();
        entry.extend(spec.after.iter().cloned());
        let mut ancestor = spec.parent.as_ref();
        let mut hops = 0;
        while let Some(a) = ancestor {
            hops += 1;
            if hops > MAX_NESTING {
                break;
            }
            if let Some(aspec) = specs.get(a) {
                entry.extend(aspec.after.iter().cloned());
                ancestor = aspec.parent.as_ref();
            } else {
                break;
            }
        }
        if let Some(parent) = &spec.parent {
            edges.entry(parent.clone()).or_default().push((*id).clone());
        }
    }
    edges
}

fn find_cycle(specs: &BTreeMap<&TaskId, &TaskSpec>) -> Option<Vec<TaskId>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Visiting,
        Done,
    }
    let edges = waits_for(specs);
    let mut marks: BTreeMap<&TaskId, Mark> = BTreeMap::new();
    for start in edges.keys() {
        if marks.contains_key(start) {
            continue;
        }
        // Iterative DFS: the path is the stack of nodes being visited.
        let mut path: Vec<(&TaskId, usize)> = vec![(start, 0)];
        marks.insert(start, Mark::Visiting);
        while let Some((node, next)) = path.last_mut() {
            let node: &TaskId = node;
            let succ = edges.get(node).and_then(|e| e.get(*next));
            *next += 1;
            match succ {
                None => {
                    marks.insert(node, Mark::Done);
                    path.pop();
                }
                Some(s) => match marks.get(s) {
                    Some(Mark::Done) => {}
                    Some(Mark::Visiting) => {
                        let from = path.iter().position(|(n, _)| *n == s).unwrap_or(0);
                        let mut cycle: Vec<TaskId> =
                            path.iter().skip(from).map(|(n, _)| (*n).clone()).collect();
                        cycle.push(s.clone());
                        return Some(cycle);
                    }
                    None => {
                        let key = edges.get_key_value(s).map(|(k, _)| k);
                        if let Some(k) = key {
                            marks.insert(k, Mark::Visiting);
                            path.push((k, 0));
                        }
                    }
                },
            }
        }
    }
    None
}

/// Hash of the plan's remaining content: the open tasks' descriptions, files and commands,
/// ids left out, sorted. A replanner that regenerates the same work under new ids still
/// produces the same hash.
pub fn plan_hash(state: &RunState) -> Hash {
    let mut items: Vec<(String, Vec<String>, Option<String>)> = state
        .tasks
        .values()
        .filter(|t| t.status == TaskStatus::Open)
        .map(|t| {
            let mut files = t.spec.files.clone();
            files.sort();
            (t.spec.description.clone(), files, t.spec.run.clone())
        })
        .collect();
    items.sort();
    let mut hasher = blake3::Hasher::new();
    for (desc, files, run) in &items {
        hasher.update(&(desc.len() as u64).to_le_bytes());
        hasher.update(desc.as_bytes());
        for f in files {
            hasher.update(&(f.len() as u64).to_le_bytes());
            hasher.update(f.as_bytes());
        }
        hasher.update(b"\x00run");
        hasher.update(run.as_deref().unwrap_or("").as_bytes());
        hasher.update(b"\x00end");
    }
    Hash(*hasher.finalize().as_bytes())
}
