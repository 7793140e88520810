//! `runlog status RUN [--at SEQ] [--tree]`: the task board.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::queries::board::BoardView;
use crate::render;
use crate::render::{color, join, pad, readiness, status_word};
use runlog_core::projections::Board;
use runlog_replay::Replay;
use std::io::Write;

/// Arguments of `runlog status`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// Show the board as it was after this seq.
    #[arg(long, value_name = "SEQ")]
    at: Option<u64>,
    /// Indent tasks under their groups, and show each sub-project's child run (its board at
    /// its head) under its task.
    #[arg(long)]
    tree: bool,
}

/// Prints the board at the head or at `--at`.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let run = a.run.as_str();
    let log = ctx.open()?;
    let replay = Replay::new(&log);
    let state = replay.state_at_or_head(run, a.at)?;
    let seq = state.seq;
    let board = Board::of(&state);
    if ctx.json {
        render::json(&BoardView::of(&replay, run, &state))?;
        return Ok(());
    }
    let head = replay.head_seq(run)?;
    let at_text = if seq == head {
        format!("head, seq {seq}")
    } else {
        format!("seq {seq} of {head}")
    };
    let mut out = render::listing();
    header(&mut out, run, &at_text, &board, costed(&state, &board)).map_err(CliError::stdout)?;
    print_rows(&mut out, &replay, &state, &board, a.tree, (0, 0))?;
    out.flush().map_err(CliError::stdout)
}

/// Whether the board shows costs: runs that record no usage and have no budget keep the board
/// as it was.
fn costed(state: &runlog_core::RunState, board: &Board) -> bool {
    !state.usage.is_empty() || !board.budgets.is_empty()
}

/// The lines above the rows: where the board stands, a paused dispatch, the cost, the titles.
fn header(
    out: &mut impl Write,
    run: &str,
    at_text: &str,
    board: &Board,
    costed: bool,
) -> std::io::Result<()> {
    writeln!(out, "run {run} at {at_text}")?;
    if let Some(after) = &board.paused_for_replan {
        writeln!(out, "dispatch paused: replan requested after {after}")?;
    }
    if costed {
        writeln!(
            out,
            "cost {}{}",
            render::spend(&board.spend),
            budget_words(board)
        )?;
    }
    writeln!(
        out,
        "{:<24} {:<13} {:>7} {:>7} {:>6}{}  detail",
        "TASK",
        "STATUS",
        "ATTEMPT",
        "RESCUE",
        "SCORE",
        if costed {
            format!(" {:>10}", "COST")
        } else {
            String::new()
        }
    )
}

/// The run's budget and what is left, for the board's header: `; budget $5.0000, $1.2000 left`.
fn budget_words(board: &Board) -> String {
    let Some(b) = board.budgets.iter().find(|b| b.task.is_none()) else {
        return String::new();
    };
    let left: Vec<String> = b
        .usd_left
        .map(runlog_core::usage::usd)
        .into_iter()
        .chain(b.tokens_left.map(|t| format!("{t} tokens")))
        .collect();
    format!(
        "; budget {}, {} left",
        render::event::limits_words(&b.limits),
        left.join(", ")
    )
}

/// Deepest chain of child runs `--tree` follows (sub-projects are nested under max_depth).
const MAX_CHILD_LEVELS: u32 = 8;

/// The board's rows; with `tree`, each indented by its depth below `base`, and a sub-project
/// task's child run's rows under it (`levels`: how many child runs down this board is).
fn print_rows(
    out: &mut impl Write,
    replay: &Replay<'_>,
    state: &runlog_core::RunState,
    board: &Board,
    tree: bool,
    (base, levels): (u32, u32),
) -> Result<()> {
    let c = color();
    let untested = state.done_untested();
    for row in &board.rows {
        let depth = base + row.depth;
        let indent = if tree {
            "  ".repeat(depth.saturating_sub(1) as usize) + if depth > 1 { "└ " } else { "" }
        } else {
            String::new()
        };
        let name = format!("{indent}{}", row.id);
        let visible = status_word(row, false).len();
        let mut detail = readiness(&row.readiness);
        if untested.contains(&row.id) {
            detail = "untested".into();
        }
        if !row.failed_children.is_empty() {
            detail = format!("failed below: {}", join(&row.failed_children));
        }
        if let Some(note) = &row.note {
            detail = if detail.is_empty() {
                note.clone()
            } else {
                format!("{detail}; {note}")
            };
        }
        let score = row.score.map(|s| format!("{s:.2}")).unwrap_or_default();
        let cost = if costed(state, board) {
            format!(" {:>10}", render::cost_cell(&row.spend))
        } else {
            String::new()
        };
        writeln!(
            out,
            "{:<24} {} {:>7} {:>7} {:>6}{cost}  {detail}",
            name,
            pad(&status_word(row, c), visible, 13),
            row.attempt,
            row.rescues,
            score
        )
        .map_err(CliError::stdout)?;
        for words in &row.outside {
            writeln!(out, "{:<24} ⚠ {words}", "").map_err(CliError::stdout)?;
        }
        let child = state.child_run_of(&runlog_core::TaskId::from(row.id.as_str()));
        if let Some(child) = child.filter(|_| tree && levels < MAX_CHILD_LEVELS) {
            // A child run that cannot be read leaves its parent's board whole.
            if let Ok(child_state) = replay.head_state(child.as_str()) {
                let child_board = Board::of(&child_state);
                print_rows(
                    out,
                    replay,
                    &child_state,
                    &child_board,
                    tree,
                    (depth, levels + 1),
                )?;
            }
        }
    }
    Ok(())
}
