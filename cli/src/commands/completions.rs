//! `runlog completions SHELL` and `runlog man`: shell completions and man pages, made from the
//! same definitions as the command line itself.

use crate::error::{CliError, Result};
use std::path::PathBuf;

/// Arguments of `runlog completions`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Prints the completion script for the shell.
pub fn run(a: Args) -> Result<()> {
    let mut cmd = crate::command_line();
    clap_complete::generate(a.shell, &mut cmd, "runlog", &mut std::io::stdout());
    Ok(())
}

/// Arguments of `runlog man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write `runlog.1` and a page per command (`runlog-run.1`...) into DIR instead of printing
    /// `runlog.1`.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

/// Prints the man page, or writes every page into a directory.
pub fn man(a: ManArgs) -> Result<()> {
    let cmd = crate::command_line();
    let failed = |e: std::io::Error| CliError::input(format!("cannot write the man pages: {e}"));
    match a.dir {
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(failed)?;
            clap_mangen::generate_to(cmd, &dir).map_err(failed)?;
            outln!("wrote the man pages into {}", dir.display());
        }
        None => clap_mangen::Man::new(cmd)
            .render(&mut std::io::stdout())
            .map_err(failed)?,
    }
    Ok(())
}
