//! The feedback text a rescued or retried attempt receives.

use std::collections::BTreeMap;

/// Eval feedback: the score, the weakest dimensions first, and the evaluator's notes.
pub fn eval_feedback(score: f64, dimensions: &BTreeMap<String, f64>, notes: &str) -> String {
    let mut dims: Vec<(&String, &f64)> = dimensions.iter().collect();
    dims.sort_by(|a, b| a.1.total_cmp(b.1).then_with(|| a.0.cmp(b.0)));
    let mut out = format!("prior iteration eval feedback: score {score}\n");
    for (name, value) in dims {
        out.push_str(&format!("  {name}: {value}\n"));
    }
    if !notes.is_empty() {
        out.push_str("notes: ");
        out.push_str(notes);
        out.push('\n');
    }
    out
}

/// Merge-conflict feedback: the files, and what the worktree holds for the rescue.
pub fn conflict_feedback(files: &[String]) -> String {
    let mut out = String::from(
        "merge conflict: your branch does not merge into the run's integration branch.\n\
         Your worktree has the integration branch merged in, with conflict markers in:\n",
    );
    for f in files {
        out.push_str(&format!("  {f}\n"));
    }
    out.push_str("Resolve each (keep both changes where they belong) and remove the markers.\n");
    out
}
