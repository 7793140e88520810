//! `runlog mcp`: runlog's tools for an agent (Claude Code, Codex, Cursor…) over the Model
//! Context Protocol on standard input and output (see `crate::server::mcp`).

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use crate::server::{mcp, Scope};
use runlog_core::Via;
use std::sync::Arc;

/// Arguments of `runlog mcp`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Only the tools that look (runs, status, log, show, audit, judges, review, diff, cost,
    /// experiments): the tools that act are neither listed nor allowed.
    #[arg(long)]
    read_only: bool,
}

/// Serves until the client closes standard input.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let store = Arc::new(ctx.open()?);
    let caller = mcp::Caller {
        principal: crate::intake::user(nix::unistd::getuid(), Via::Mcp),
        scope: if a.read_only { Scope::Read } else { Scope::Run },
        run: None,
    };
    mcp::stdio(store, ctx.store.clone(), ctx.host.clone(), caller)
        .map_err(|e| CliError::failed(format!("cannot serve the MCP tools: {e}")))
}
