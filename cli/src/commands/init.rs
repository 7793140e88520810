//! `runlog init [DIR]`: a starter workflow (an agent, a test and an evaluator, with comments that
//! teach each field) and the three small scripts it calls, ready to run.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::render;
use std::path::{Path, PathBuf};

/// Arguments of `runlog init`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Where to write the workflow and its scripts (made if missing).
    #[arg(default_value = ".")]
    dir: PathBuf,
}

/// The files written: name, content, whether it is a program.
const FILES: &[(&str, &str, bool)] = &[
    ("workflow.toml", include_str!("init/workflow.toml"), false),
    ("agent.sh", include_str!("init/agent.sh"), true),
    ("test.sh", include_str!("init/test.sh"), true),
    ("evaluate.sh", include_str!("init/evaluate.sh"), true),
];

/// Writes the starter files, refusing to overwrite any, and says how to run them.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let taken: Vec<String> = FILES
        .iter()
        .map(|(name, _, _)| a.dir.join(name))
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if !taken.is_empty() {
        return Err(CliError::input(format!(
            "{} exist already; runlog init writes only new files",
            taken.join(", ")
        ))
        .with_hint("choose an empty directory: runlog init DIR"));
    }
    std::fs::create_dir_all(&a.dir).map_err(|e| write_error(&a.dir, &e))?;
    let mut written = Vec::new();
    for (name, content, program) in FILES {
        let path = a.dir.join(name);
        std::fs::write(&path, content).map_err(|e| write_error(&path, &e))?;
        if *program {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| write_error(&path, &e))?;
        }
        written.push(path.display().to_string());
    }
    let workflow = a.dir.join("workflow.toml");
    let command = format!("{} run {}", ctx.command(), shown(&workflow));
    if ctx.json {
        render::json(&serde_json::json!({"files": written, "run": command}))?;
    } else {
        for file in &written {
            outln!("wrote {file}");
        }
        outln!("run it: {command}");
    }
    Ok(())
}

fn write_error(path: &Path, e: &std::io::Error) -> CliError {
    CliError::input(format!("cannot write {}: {e}", path.display()))
        .with_hint("choose a directory you can write: runlog init DIR")
}

/// A path as a person types it (`./x` → `x`).
fn shown(path: &Path) -> String {
    path.strip_prefix(".").unwrap_or(path).display().to_string()
}
