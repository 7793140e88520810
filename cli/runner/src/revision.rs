//! Plan revisions from outside the workflow file: a replanner's or a person's revision
//! (`{"cancel", "add", "replaces", "reason"}`), and the tasks an agent adds to a live run.

use crate::workflow::{Commands, TaskFile};
use runlog_core::{CommandKind, TaskId, TaskSpec};
use serde::Deserialize;

/// Why a revision or an agent's added tasks are not a plan change runlog can decide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// The text holds no revision object.
    #[error("not a plan ({why}); expected {{\"cancel\": [...], \"add\": [...], \"replaces\": {{\"new\": \"old\"}}, \"reason\": \"...\"}}; it began: {began:?}")]
    NotAPlan {
        /// What JSON said.
        why: String,
        /// The text's beginning.
        began: String,
    },
    /// An added task's field is not allowed.
    #[error("added task {task:?}, field {field}: {message}")]
    Field {
        /// The task.
        task: String,
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: String,
    },
    /// An item of an agent's `add_tasks` is not a task.
    #[error("add_tasks item {item}: {why}")]
    AddedTask {
        /// Its place, from 1.
        item: usize,
        /// What JSON said.
        why: String,
    },
}

/// The specs of tasks added to a live run (a plan revision, an agent's `add_tasks`). Their
/// test commands are not discovered: a `test_file` is refused, since only a workflow file's
/// tasks are checked against the files beside it before the run starts.
pub fn added_specs(files: &[TaskFile]) -> Result<Vec<TaskSpec>, PlanError> {
    files
        .iter()
        .map(|t| {
            if t.workflow.is_some() {
                return Err(PlanError::Field {
                    task: t.id.clone(),
                    field: "workflow",
                    message:
                        "sub-projects are declared in a workflow file, not added to a live run"
                            .into(),
                });
            }
            if t.test_file.is_some() {
                return Err(PlanError::Field {
                    task: t.id.clone(),
                    field: "test_file",
                    message: "read only in a workflow file; give the added task a `test` command"
                        .into(),
                });
            }
            if t.budget.is_some() {
                return Err(PlanError::Field {
                    task: t.id.clone(),
                    field: "budget",
                    message:
                        "a task's budget is set in a workflow file, or on the live run by a person"
                            .into(),
                });
            }
            let is_group = files.iter().any(|c| c.parent.as_deref() == Some(&t.id));
            t.to_spec(is_group, Commands::Required, false).map_err(
                |crate::workflow::FieldError { field, message }| PlanError::Field {
                    task: t.id.clone(),
                    field,
                    message,
                },
            )
        })
        .collect()
}

/// A plan revision as a replan command prints it and `runlog replan --file` reads it:
/// `{"cancel": [ids], "add": [tasks, as in a workflow], "replaces": {"new": "old"}, "reason": "..."}`,
/// alone or, as an LLM prints it, inside prose or a ```json fence (the last such object).
/// `answers`: the seq of the board the plan was made from (see `CommandKind::RevisePlan`).
pub fn parse_revision(
    text: &str,
    default_reason: &str,
    answers: Option<u64>,
) -> Result<CommandKind, PlanError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Plan {
        #[serde(default)]
        cancel: Vec<String>,
        #[serde(default)]
        add: Vec<TaskFile>,
        #[serde(default)]
        replaces: std::collections::BTreeMap<String, String>,
        #[serde(default)]
        reason: String,
    }
    let refuse = |e: serde_json::Error| PlanError::NotAPlan {
        why: e.to_string(),
        began: crate::protocol::beginning(text, 200),
    };
    let plan: Plan = match serde_json::from_str(text.trim()) {
        Ok(plan) => plan,
        Err(whole) => {
            match crate::protocol::last_object_with(text, &["cancel", "add", "replaces"]) {
                Some(obj) => {
                    serde_json::from_value(serde_json::Value::Object(obj)).map_err(refuse)?
                }
                None => return Err(refuse(whole)),
            }
        }
    };
    let add = added_specs(&plan.add)?;
    Ok(CommandKind::RevisePlan {
        cancel: plan.cancel.into_iter().map(TaskId).collect(),
        add,
        replaces: plan
            .replaces
            .into_iter()
            .map(|(new, old)| runlog_core::Replacement {
                old: TaskId(old),
                new: TaskId(new),
            })
            .collect(),
        reason: if plan.reason.is_empty() {
            default_reason.to_owned()
        } else {
            plan.reason
        },
        answers,
    })
}
