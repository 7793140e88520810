//! An experiment in Arize Phoenix (`runlog experiment export NAME --phoenix URL`): the suite's
//! tasks as a dataset (one example a task: the run and task as input, the recording's outcome
//! as output), each variant (`base` too) as an experiment on it, each execution of a task as
//! an experiment run (its repeat as the repetition), with its outcome, score and cost as
//! evaluations. Through Phoenix's REST API; each export makes a new dataset version's worth of
//! experiments, named by the experiment and the time of the export.

use super::send::{ask_json, SendError};
use super::Endpoint;
use axum::http::Method;
use runlog_core::calendar::rfc3339;
use runlog_core::experiment::report::{Execution, Outcome};
use runlog_core::Timestamp;
use serde_json::{json, Value};
use std::collections::HashMap;

/// What an export made in Phoenix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Sent {
    /// The dataset.
    pub dataset: String,
    /// Its id.
    pub dataset_id: String,
    /// Each variant's experiment: its name and id, and how many runs it got.
    pub experiments: Vec<(String, String, usize)>,
}

fn refused(endpoint: &Endpoint, path: &str, what: &str, answer: &Value) -> SendError {
    SendError::Refused {
        url: format!("{}{path}", endpoint.url().trim_end_matches("/v1/traces")),
        status: 200,
        body: format!(
            "no {what} in its answer: {}",
            answer.to_string().chars().take(200).collect::<String>()
        ),
    }
}

/// Sends `view` to the Phoenix at `endpoint` (its traces URL's server), named `dataset`.
pub async fn to_phoenix(
    endpoint: &Endpoint,
    view: &crate::queries::experiment::report::ExperimentView,
    dataset: &str,
) -> Result<Sent, SendError> {
    let base = endpoint
        .target
        .path
        .trim_end_matches("/v1/traces")
        .to_owned();
    let tasks = &view.figures.tasks;
    let upload = json!({
        "action": "create",
        "name": dataset,
        "description": format!("runlog experiment {}: the suite's tasks", view.name),
        "inputs": tasks.iter().map(|t| json!({"run": t.run, "task": t.task})).collect::<Vec<_>>(),
        "outputs": tasks.iter().map(|t| {
            let base = t.cells.first().and_then(|c| c.executions.first()).and_then(|e| e.outcome.as_ref());
            json!({"done": base.map(|o| o.done), "score": base.and_then(|o| o.score)})
        }).collect::<Vec<_>>(),
        "metadata": tasks.iter().map(|t| json!({"runlog.run": t.run, "runlog.task": t.task, "runlog.experiment": view.name})).collect::<Vec<_>>(),
    });
    let path = format!("{base}/v1/datasets/upload?sync=true");
    let answer = ask_json(endpoint, Method::POST, &path, Some(&upload)).await?;
    let dataset_id = answer
        .pointer("/data/dataset_id")
        .and_then(Value::as_str)
        .ok_or_else(|| refused(endpoint, &path, "dataset_id", &answer))?
        .to_owned();
    let version_id = answer
        .pointer("/data/version_id")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let path = format!("{base}/v1/datasets/{dataset_id}/examples");
    let answer = ask_json(endpoint, Method::GET, &path, None).await?;
    let examples: HashMap<(String, String), String> = answer
        .pointer("/data/examples")
        .and_then(Value::as_array)
        .ok_or_else(|| refused(endpoint, &path, "examples", &answer))?
        .iter()
        .filter_map(|e| {
            let key = (
                e.pointer("/input/run").and_then(Value::as_str)?.to_owned(),
                e.pointer("/input/task").and_then(Value::as_str)?.to_owned(),
            );
            Some((key, e.pointer("/id").and_then(Value::as_str)?.to_owned()))
        })
        .collect();
    let mut experiments = Vec::new();
    for (i, variant) in view.variants.iter().enumerate() {
        let repetitions = tasks
            .iter()
            .filter_map(|t| t.cells.get(i).map(|c| c.executions.len()))
            .max()
            .unwrap_or(1)
            .max(1);
        let path = format!("{base}/v1/datasets/{dataset_id}/experiments");
        let made = ask_json(
            endpoint,
            Method::POST,
            &path,
            Some(&json!({
                "name": variant.name,
                "description": variant.file.as_deref().map_or_else(
                    || "the recorded runs".to_owned(),
                    |f| format!("variant file {f}"),
                ),
                "metadata": {"runlog.experiment": view.name, "runlog.variant": variant.name, "models": variant.models},
                "version_id": version_id,
                "repetitions": repetitions,
            })),
        )
        .await?;
        let experiment_id = made
            .pointer("/data/id")
            .and_then(Value::as_str)
            .ok_or_else(|| refused(endpoint, &path, "experiment id", &made))?
            .to_owned();
        let mut runs = 0;
        for t in tasks {
            let (Some(cell), Some(example)) = (
                t.cells.get(i),
                examples.get(&(t.run.to_string(), t.task.to_string())),
            ) else {
                continue;
            };
            for (k, e) in cell.executions.iter().enumerate() {
                let Some(o) = &e.outcome else { continue };
                let run_id = run(
                    endpoint,
                    &base,
                    &experiment_id,
                    example,
                    k + 1,
                    e,
                    o,
                    view.defined_ms,
                )
                .await?;
                evaluate(endpoint, &base, &run_id, o, view.defined_ms).await?;
                runs += 1;
            }
        }
        experiments.push((variant.name.clone(), experiment_id, runs));
    }
    Ok(Sent {
        dataset: dataset.to_owned(),
        dataset_id,
        experiments,
    })
}

#[allow(clippy::too_many_arguments)]
async fn run(
    endpoint: &Endpoint,
    base: &str,
    experiment_id: &str,
    example: &str,
    repetition: usize,
    e: &Execution,
    o: &Outcome,
    at: u64,
) -> Result<String, SendError> {
    let path = format!("{base}/v1/experiments/{experiment_id}/runs");
    let answer = ask_json(
        endpoint,
        Method::POST,
        &path,
        Some(&json!({
            "dataset_example_id": example,
            "output": {"done": o.done, "tests": o.tests, "judged": o.judged, "score": o.score,
                       "cost_usd": o.cost_usd, "runlog.run": e.rerun},
            "repetition_number": repetition,
            "start_time": rfc3339(Timestamp(at)),
            "end_time": rfc3339(Timestamp(at.saturating_add(o.wall_ms))),
        })),
    )
    .await?;
    answer
        .pointer("/data/id")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| refused(endpoint, &path, "run id", &answer))
}

/// The execution's outcome, score and cost as evaluations of its run.
async fn evaluate(
    endpoint: &Endpoint,
    base: &str,
    run_id: &str,
    o: &Outcome,
    at: u64,
) -> Result<(), SendError> {
    let mut results = vec![(
        "done",
        json!({"label": if o.done { "done" } else { "not done" }, "score": if o.done { 1.0 } else { 0.0 }}),
    )];
    if let Some(score) = o.score {
        results.push(("score", json!({"score": score})));
    }
    results.push(("cost_usd", json!({"score": o.cost_usd})));
    for (name, result) in results {
        ask_json(
            endpoint,
            Method::POST,
            &format!("{base}/v1/experiment_evaluations"),
            Some(&json!({
                "experiment_run_id": run_id,
                "name": name,
                "annotator_kind": "CODE",
                "start_time": rfc3339(Timestamp(at)),
                "end_time": rfc3339(Timestamp(at.saturating_add(o.wall_ms))),
                "result": result,
            })),
        )
        .await?;
    }
    Ok(())
}
