//! Integrity and data movement: verify, digest, export, import, diff, viz.

use crate::error::{CliError, Result};
use crate::output;
use runlog_core::palette;
use runlog_core::projections::Board;
use runlog_replay::diff::{diff as diff_sides, Side};
use runlog_replay::digest::{check, digest as make_digest, Digest, DigestCheck};
use runlog_replay::export::{export as export_run, import as import_run};
use runlog_replay::Replay;
use runlog_store::EventLog;
use std::path::Path;

/// `runlog verify [RUN]`: checksums and chain of one run or all; exit 1 on damage.
pub fn verify(store: &Path, run: Option<&str>, json: bool) -> Result<()> {
    let log = crate::store::open(store, false)?;
    let runs: Vec<String> = match run {
        Some(r) => {
            // Existence only: the head itself may sit in the damage verify is about to report.
            let known: Vec<String> = log.runs()?.into_iter().map(|m| m.run).collect();
            if !known.iter().any(|k| k == r) {
                return Err(runlog_replay::ReplayError::UnknownRun {
                    run: r.to_owned(),
                    known,
                }
                .into());
            }
            vec![r.to_owned()]
        }
        None => log.runs()?.into_iter().map(|m| m.run).collect(),
    };
    let mut damaged = 0;
    for r in &runs {
        let report = log.verify(r)?;
        if json {
            output::json(&serde_json::json!({
                "run": r,
                "ok": report.is_ok(),
                "verified": report.verified,
                "head_seq": report.head.map(|h| h.seq),
                "damage": report.damage.as_ref().map(|d| serde_json::json!({"seq": d.seq, "kind": format!("{:?}", d.kind), "reason": d.reason})),
            }));
        } else {
            match &report.damage {
                None => println!(
                    "{r}: ok, {} events, checksums and chain verified",
                    report.verified
                ),
                Some(d) => println!(
                    "{r}: DAMAGED: {d} ({} events before it verified)",
                    report.verified
                ),
            }
        }
        if !report.is_ok() {
            damaged += 1;
        }
    }
    if damaged > 0 {
        return Err(CliError::failed(format!("{damaged} run(s) damaged")).with_hint("export the intact prefix with `runlog export`, or fork from a seq before the damage"));
    }
    Ok(())
}

/// `runlog digest RUN [--check FILE]`.
pub fn digest(store: &Path, run: &str, check_file: Option<&Path>) -> Result<()> {
    let log = crate::store::open(store, false)?;
    match check_file {
        None => {
            output::json(&make_digest(&log, run)?);
            Ok(())
        }
        Some(file) => {
            let text = std::fs::read_to_string(file)
                .map_err(|e| CliError::input(format!("cannot read {}: {e}", file.display())))?;
            let d: Digest = serde_json::from_str(text.trim()).map_err(|e| {
                CliError::input(format!("{} is not a runlog digest: {e}", file.display()))
            })?;
            if d.run != run {
                return Err(CliError::input(format!(
                    "the digest is for run {}, not {run}",
                    d.run
                )));
            }
            match check(&log, &d)? {
                DigestCheck::Matches => {
                    println!("{run}: matches the digest up to seq {}", d.head_seq);
                    Ok(())
                }
                DigestCheck::Differs { found } => Err(CliError::failed(format!(
                    "{run}: history up to seq {} differs from the digest (found {found})",
                    d.head_seq
                ))),
                DigestCheck::Missing { head } => Err(CliError::failed(format!(
                    "{run}: the log ends at seq {head}, before the digest's seq {}",
                    d.head_seq
                ))),
            }
        }
    }
}

/// `runlog export RUN [-o FILE]`.
pub fn export(store: &Path, run: &str, out: Option<&Path>) -> Result<()> {
    let log = crate::store::open(store, false)?;
    let header = match out {
        Some(path) => {
            let mut f =
                std::io::BufWriter::new(std::fs::File::create(path).map_err(|e| {
                    CliError::input(format!("cannot create {}: {e}", path.display()))
                })?);
            let h = export_run(&log, run, &mut f)?;
            std::io::Write::flush(&mut f)
                .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
            eprintln!(
                "exported {} events of {run} to {} (head {})",
                h.events,
                path.display(),
                h.head_hash
            );
            h
        }
        None => export_run(&log, run, &mut std::io::stdout().lock())?,
    };
    let _ = header;
    Ok(())
}

/// `runlog import FILE [--as NEW]`.
pub fn import(store: &Path, file: &Path, as_run: Option<&str>, json: bool) -> Result<()> {
    let log = crate::store::open(store, true)?;
    let f = std::fs::File::open(file)
        .map_err(|e| CliError::input(format!("cannot read {}: {e}", file.display())))?;
    let imported = import_run(&log, &mut std::io::BufReader::new(f), as_run)?;
    if json {
        output::json(&imported);
    } else {
        println!(
            "imported {} events as run {} (head {}{})",
            imported.events,
            imported.run,
            imported.head_hash,
            if imported.same_head_hash {
                ", same as the export"
            } else {
                "; another id, another chain"
            }
        );
    }
    Ok(())
}

/// `RUN` or `RUN@SEQ`.
fn side(arg: &str) -> (String, Option<u64>) {
    match arg.rsplit_once('@') {
        Some((run, seq)) if seq.parse::<u64>().is_ok() => (run.to_owned(), seq.parse().ok()),
        _ => (arg.to_owned(), None),
    }
}

/// `runlog diff A[@SEQ] B[@SEQ]`.
pub fn diff(store: &Path, a: &str, b: &str, json: bool) -> Result<()> {
    let log = crate::store::open(store, false)?;
    let replay = Replay::new(&log);
    let (ra, sa) = side(a);
    let (rb, sb) = side(b);
    let pa = replay.project(
        &ra,
        sa,
        Some(&mut output::replay_progress("replaying the left side")),
    )?;
    let pb = replay.project(
        &rb,
        sb,
        Some(&mut output::replay_progress("replaying the right side")),
    )?;
    let d = diff_sides(
        Side {
            state: &pa.state,
            stack: &pa.stack,
        },
        Side {
            state: &pb.state,
            stack: &pb.stack,
        },
    );
    if json {
        output::json(&d);
        return Ok(());
    }
    println!("diff {ra}@{} → {rb}@{}", pa.state.seq, pb.state.seq);
    if d.is_empty() {
        println!("  no differences");
    }
    for t in &d.tasks {
        println!("  {:<20} {}", t.task, output::task_changes(t).join("; "));
    }
    for s in &d.stages {
        println!(
            "  stage {:<14} {} → {}",
            s.stage,
            s.left
                .as_ref()
                .map_or("-".into(), |v| serde_json::to_string(v).unwrap_or_default()),
            s.right
                .as_ref()
                .map_or("-".into(), |v| serde_json::to_string(v).unwrap_or_default())
        );
    }
    Ok(())
}

/// `runlog viz RUN [--format dot|mermaid] [--at SEQ]`.
pub fn viz(store: &Path, run: &str, format: &str, at: Option<u64>) -> Result<()> {
    let log = crate::store::open(store, false)?;
    let replay = Replay::new(&log);
    let state = replay.state_at_or_head(run, at)?;
    let board = Board::of(&state);
    let fill = |row: &runlog_core::projections::board::BoardRow| {
        if matches!(row.readiness, Some(runlog_core::Readiness::Blocked { .. })) {
            palette::BLOCKED.hex()
        } else {
            palette::colour(row.status).map_or_else(|| "#ffffff".to_owned(), |c| c.hex())
        }
    };
    let quote = |s: &str| s.replace('"', "'");
    match format {
        "dot" => {
            println!("digraph \"{}\" {{\n  rankdir=LR;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];", quote(run));
            for row in &board.rows {
                println!(
                    "  \"{}\" [label=\"{}\\n{}\", fillcolor=\"{}\"];",
                    quote(row.id.as_str()),
                    quote(row.id.as_str()),
                    row.status.name(),
                    fill(row)
                );
            }
            for t in state.tasks_in_order() {
                for dep in &t.spec.after {
                    println!(
                        "  \"{}\" -> \"{}\";",
                        quote(dep.as_str()),
                        quote(t.spec.id.as_str())
                    );
                }
                if let Some(p) = &t.spec.parent {
                    println!(
                        "  \"{}\" -> \"{}\" [style=dashed, arrowhead=none];",
                        quote(p.as_str()),
                        quote(t.spec.id.as_str())
                    );
                }
            }
            println!("}}");
        }
        "mermaid" => {
            let node = |id: &str| id.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
            println!("graph LR");
            for row in &board.rows {
                println!(
                    "  {}[\"{}<br/>{}\"]",
                    node(row.id.as_str()),
                    quote(row.id.as_str()),
                    row.status.name()
                );
                println!("  style {} fill:{}", node(row.id.as_str()), fill(row));
            }
            for t in state.tasks_in_order() {
                for dep in &t.spec.after {
                    println!("  {} --> {}", node(dep.as_str()), node(t.spec.id.as_str()));
                }
                if let Some(p) = &t.spec.parent {
                    println!("  {} -.- {}", node(p.as_str()), node(t.spec.id.as_str()));
                }
            }
        }
        other => {
            return Err(CliError::input(format!("unknown format {other:?}"))
                .with_hint("use --format dot or --format mermaid"))
        }
    }
    Ok(())
}
