//! The `runlog` binary. The commands arrive with the runner and CLI issues.

use clap::Parser;

/// runlog: an event-sourced workflow engine for AI-agent task pipelines.
#[derive(Debug, Parser)]
#[command(name = "runlog", version, about)]
struct Cli {}

fn main() {
    let _cli = Cli::parse();
}
