//! `runlog viz RUN [--format dot|mermaid] [--at SEQ]`: the task graph with status colours.

use crate::ctx::Ctx;
use crate::error::Result;
use crate::render;
use runlog_core::projections::Board;
use runlog_replay::Replay;

/// The graph languages `viz` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Graphviz: `runlog viz RUN | dot -Tsvg > run.svg`.
    Dot,
    /// Mermaid, for Markdown renderers.
    Mermaid,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Dot => "dot",
            Format::Mermaid => "mermaid",
        }
    }
}

/// Arguments of `runlog viz`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// The graph language.
    #[arg(long, value_enum, default_value_t = Format::Dot)]
    format: Format,
    /// As it was after this seq.
    #[arg(long, value_name = "SEQ")]
    at: Option<u64>,
}

/// Prints the graph (with --json, inside an object with the run and seq).
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let state = Replay::new(&log).state_at_or_head(&a.run, a.at)?;
    let board = Board::of(&state);
    let graph = match a.format {
        Format::Dot => render::viz::dot(&a.run, &state, &board),
        Format::Mermaid => render::viz::mermaid(&state, &board),
    };
    if ctx.json {
        render::json(&serde_json::json!({
            "run": a.run,
            "seq": state.seq,
            "format": a.format.name(),
            "graph": graph,
        }))?;
    } else {
        out!("{graph}");
    }
    Ok(())
}
