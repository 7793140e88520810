//! The supervisor state stack as `runlog stack --json` and `GET /v1/runs/{run}/stack` show it.

/// The stack, newest first, and the latest result per stage, as `--json` and the API show it.
pub fn as_json(run: &str, p: &runlog_core::projections::Projections) -> serde_json::Value {
    let entries: Vec<_> = p.stack.newest_first().collect();
    serde_json::json!({"run": run, "seq": p.state.seq, "stack": entries, "latest_results": p.stack.all_latest_results()})
}
