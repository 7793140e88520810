//! `runlog forget RUN… [--older-than AGE] [--keep-export DIR]`: runs removed from the store for
//! good, each leaving a tombstone (its head, digest, outcome, who, when, why) in the register
//! of forgotten runs; the space they took is given back.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::queries::forget::{choose, record, unshared_blobs, Doomed, Refusal};
use crate::render;
use std::path::{Path, PathBuf};

/// Arguments of `runlog forget`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The runs to forget
    runs: Vec<String>,
    /// Also every run that has ended and whose last event is older than AGE: a number and a
    /// unit, `d` (days), `h` (hours) or `m` (minutes), e.g. 30d
    #[arg(long, value_name = "AGE", value_parser = parse_age)]
    older_than: Option<u64>,
    /// Before forgetting, write each run's export (`RUN.jsonl`, as `runlog export`) and digest
    /// (`RUN.digest.json`) into DIR, to keep elsewhere: `runlog digest RUN --export FILE` checks
    /// the export against the tombstone later
    #[arg(long, value_name = "DIR")]
    keep_export: Option<PathBuf>,
    /// Why, recorded in each tombstone
    #[arg(long, default_value = "forgotten on request")]
    reason: String,
    /// Say what would be forgotten, and what is refused, without changing anything
    #[arg(long)]
    dry_run: bool,
}

/// `--retain-days` of `serve` and `worker`: runs that ended more than N days ago are forgotten
/// as the process starts, before it opens the store (a directory store is rebuilt by a forget,
/// which only its one owner can do).
#[derive(Debug, Clone, clap::Args)]
pub struct Retention {
    /// Forget every run that ended more than DAYS days ago (a tombstone of each kept), as this
    /// process starts; runs something still needs (a fork, an unfinished parent) are kept
    #[arg(long, value_name = "DAYS", env = "RUNLOG_RETAIN_DAYS", value_parser = clap::value_parser!(u64).range(1..=36_500))]
    pub retain_days: Option<u64>,
}

impl Retention {
    /// Applies the retention, if one is set.
    pub fn apply(&self, ctx: &Ctx) -> Result<()> {
        let Some(days) = self.retain_days else {
            return Ok(());
        };
        let quiet = Ctx {
            json: false,
            ..ctx.clone()
        };
        run(
            Args {
                runs: Vec::new(),
                older_than: Some(days * 86_400_000),
                keep_export: None,
                reason: format!("ended more than {days} days ago (--retain-days {days})"),
                dry_run: false,
            },
            &quiet,
        )
    }
}

/// `--older-than`'s AGE in milliseconds.
pub(crate) fn parse_age(text: &str) -> std::result::Result<u64, AgeError> {
    let (number, unit) = text.split_at(text.trim_end_matches(char::is_alphabetic).len());
    let n: u64 = number
        .parse()
        .map_err(|_| AgeError::NotAnAge(text.to_owned()))?;
    let unit_ms = match unit {
        "d" => 86_400_000,
        "h" => 3_600_000,
        "m" => 60_000,
        _ => return Err(AgeError::Unit(text.to_owned())),
    };
    n.checked_mul(unit_ms)
        .ok_or_else(|| AgeError::TooLong(text.to_owned()))
}

/// Why `--older-than`'s AGE is not an age.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AgeError {
    /// No number.
    #[error("{0:?} is not an age: write a number and a unit, e.g. 30d")]
    NotAnAge(String),
    /// No unit runlog knows.
    #[error("{0:?}: the unit is d, h or m, e.g. 30d")]
    Unit(String),
    /// More milliseconds than there are.
    #[error("{0:?} is too long ago")]
    TooLong(String),
}

/// What a forget did (`--json`).
#[derive(Debug, serde::Serialize)]
struct Report<'a> {
    forgotten: &'a [Doomed],
    refused: &'a [Refusal],
    exported: Option<String>,
    dry_run: bool,
    /// The store directory's bytes before and after (a directory store).
    bytes_before: Option<u64>,
    bytes_after: Option<u64>,
}

/// Chooses, records the tombstones, removes the runs and their files; exit 1 if a named run is
/// refused (then nothing is forgotten).
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    if a.runs.is_empty() && a.older_than.is_none() {
        return Err(
            CliError::input("name the runs to forget, or --older-than AGE")
                .with_hint("runlog forget RUN…, or runlog forget --older-than 30d"),
        );
    }
    let clock = ctx.host.clock();
    let log = ctx.open()?;
    let now = clock.now();
    let (doomed, refused) = choose(
        &log,
        &ctx.store,
        ctx.shared.is_some(),
        &a.runs,
        a.older_than,
        now.0,
    )?;
    let named_refused: Vec<&Refusal> = refused
        .iter()
        .filter(|r| a.runs.iter().any(|n| n == r.run()))
        .collect();
    if let Some(first) = named_refused.first() {
        let why: Vec<String> = named_refused.iter().map(ToString::to_string).collect();
        return Err(
            CliError::failed(format!("nothing was forgotten: {}", why.join("; "))).with_hint(
                match first {
                    Refusal::Live { .. } => {
                        "wait for the run to end, or stop it (Ctrl-C in its terminal)"
                    }
                    Refusal::Forked { .. } => {
                        "forget the forks in the same command, or keep the run"
                    }
                    Refusal::ParentNeedsIt { .. } => {
                        "let the parent run finish, or forget it in the same command"
                    }
                },
            ),
        );
    }
    if ctx.shared.is_none() && !log.is_owner() && !a.dry_run && !doomed.is_empty() {
        return Err(CliError::input(format!(
            "the store {} is open in another process ({})",
            ctx.store.display(),
            log.owner().unwrap_or_else(|| "unknown".into())
        ))
        .with_hint(
            "forgetting rebuilds the store's database: stop `runlog serve` and the runs using it first (`runlog serve --retain-days N` forgets old runs as it starts)",
        ));
    }
    let bytes = |dir: &Path| {
        ctx.shared
            .is_none()
            .then(|| runlog_store::layout::dir_size(dir))
    };
    let before = bytes(&ctx.store);
    if a.dry_run || doomed.is_empty() {
        return report(ctx, &a, &doomed, &refused, before, before);
    }
    if let Some(dir) = &a.keep_export {
        keep_exports(&log, dir, &doomed)?;
    }
    let blobs = unshared_blobs(&log, &doomed)?;
    let repos = repositories(&log, &doomed)?;
    // The register of forgotten runs is chained: a secret in the reason would stay for good.
    let mut reason = a.reason.clone();
    ctx.host
        .intake_redactor()
        .redact_in_place(&mut reason, &mut Default::default());
    record(&log, &doomed, &crate::intake::os_user(), &reason, now)?;
    let runs: Vec<String> = doomed.iter().map(|d| d.run.clone()).collect();
    match log.postgres() {
        Some(pg) => {
            pg.forget(&runs, &blobs)?;
            drop(log);
        }
        None => {
            drop(log);
            runlog_store::forget(&ctx.store, &runs, &blobs)
                .map_err(|e| crate::store::explain(&ctx.store, e))?;
        }
    }
    for run in &runs {
        remove_files(&ctx.store, run)?;
    }
    for (run, repo) in &repos {
        // The worktrees' files went with the run's directory: git forgets them and the tasks'
        // branches too. What fails here leaves refs behind, never a run half forgotten.
        if let Err(e) = runlog_runner::workspace::forget_run(repo, run) {
            errln!(
                "note: run {run} is forgotten; its task branches in {} stay: {e}",
                repo.display()
            );
        }
    }
    report(ctx, &a, &doomed, &refused, before, bytes(&ctx.store))
}

/// The repositories on this host the runs worked in, from each run's `workspace-opened`. A
/// run records it before its first attempt starts, so each read stops there: forgetting
/// thousands of runs reads their first events, never a replay of each.
fn repositories(
    log: &dyn runlog_store::EventLog,
    doomed: &[Doomed],
) -> Result<Vec<(String, std::path::PathBuf)>> {
    use runlog_core::EventKind;
    let mut out = Vec::new();
    for d in doomed {
        let mut repo = None;
        runlog_replay::events::for_each(log, &d.run, 1, d.head_seq, &mut |_, e| {
            Ok(match e.kind {
                EventKind::WorkspaceOpened { repo: r, .. } => {
                    repo = Some(std::path::PathBuf::from(r));
                    false
                }
                EventKind::TaskStarted { .. } => false,
                _ => true,
            })
        })?;
        // A shared repository named by URL is reached through a clone under the store, which
        // goes with the store's files.
        if let Some(repo) = repo.filter(|r| r.is_dir()) {
            out.push((d.run.clone(), repo));
        }
    }
    Ok(out)
}

/// Each run's export and digest, written before anything is removed.
fn keep_exports(log: &dyn runlog_store::EventLog, dir: &Path, doomed: &[Doomed]) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::input(format!("cannot create {}: {e}", dir.display())))?;
    for d in doomed {
        let path = dir.join(format!("{}.jsonl", d.run));
        let file = std::fs::File::create(&path)
            .map_err(|e| CliError::input(format!("cannot create {}: {e}", path.display())))?;
        let mut out = std::io::BufWriter::new(file);
        runlog_replay::export::export(log, &d.run, &mut out)?;
        let file = out
            .into_inner()
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
        file.sync_all()
            .map_err(|e| CliError::input(format!("cannot sync {}: {e}", path.display())))?;
        let digest = runlog_replay::digest::digest(log, &d.run)?;
        let digest_path = dir.join(format!("{}.digest.json", d.run));
        std::fs::write(
            &digest_path,
            format!("{}\n", serde_json::to_string(&digest).unwrap_or_default()),
        )
        .map_err(|e| CliError::input(format!("cannot write {}: {e}", digest_path.display())))?;
    }
    Ok(())
}

/// The run's files on this host: worktrees, feedback, history and usage files, its marker.
fn remove_files(store: &Path, run: &str) -> Result<()> {
    let layout = runlog_runner::Layout::new(store, run);
    for path in [layout.work(), layout.marker()] {
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(CliError::input(format!(
                    "run {run} is forgotten, but {} could not be removed: {e}",
                    path.display()
                )))
            }
            _ => {}
        }
    }
    Ok(())
}

fn report(
    ctx: &Ctx,
    a: &Args,
    doomed: &[Doomed],
    refused: &[Refusal],
    before: Option<u64>,
    after: Option<u64>,
) -> Result<()> {
    if ctx.json {
        render::json(&Report {
            forgotten: doomed,
            refused,
            exported: a.keep_export.as_ref().map(|d| d.display().to_string()),
            dry_run: a.dry_run,
            bytes_before: before,
            bytes_after: after,
        })?;
        return Ok(());
    }
    let verb = if a.dry_run { "would forget" } else { "forgot" };
    for d in doomed {
        outln!(
            "{verb} {}: {}, {} events ending in {}",
            d.run,
            d.outcome,
            d.head_seq,
            d.head_hash.to_hex()
        );
    }
    for r in refused {
        outln!("kept {}: {r}", r.run());
    }
    if doomed.is_empty() {
        outln!("nothing to forget");
    }
    if let Some(dir) = &a.keep_export {
        if !a.dry_run && !doomed.is_empty() {
            outln!("exports and digests kept in {}", dir.display());
        }
    }
    if let (Some(b), Some(after)) = (before, after) {
        if !a.dry_run && !doomed.is_empty() {
            outln!(
                "the store went from {} to {}",
                render::bytes(b),
                render::bytes(after)
            );
        }
    }
    Ok(())
}
