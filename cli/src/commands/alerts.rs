//! `runlog alerts test WORKFLOW`: one alert sent to each receiver of a workflow's `[[alerts]]`,
//! signed as a run's are, to see that they arrive before a run needs them to.

use crate::ctx::Ctx;
use crate::error::{CliError, Result};
use runlog_runner::alerting::{self, AlertTarget};
use runlog_runner::Workflow;
use std::path::PathBuf;

/// Arguments of `runlog alerts`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    what: What,
}

#[derive(Debug, clap::Subcommand)]
enum What {
    /// Send one alert (`on` = `test`) to each receiver of the workflow's `[[alerts]]`, with its
    /// signature when it names a `secret_env`; exit 1 if one was not delivered.
    ///
    /// Example: runlog alerts test workflow.toml
    Test {
        /// The workflow file.
        workflow: PathBuf,
    },
}

/// Receivers of alerts beside each workflow's own, for a runner that executes many runs
/// (`serve`, `worker`).
#[derive(Debug, clap::Args)]
pub struct MoreReceivers {
    /// Send the alerts of every run this executes to the receivers of this file's `[[alerts]]`
    /// tables too (besides each workflow's own; see docs/alerts.md).
    #[arg(long, value_name = "FILE")]
    alerts: Option<PathBuf>,
}

impl MoreReceivers {
    /// `ctx`'s host, sending every run's alerts to these receivers too.
    pub fn host(&self, ctx: &Ctx) -> Result<runlog_runner::Host> {
        Ok(match &self.alerts {
            Some(file) => ctx
                .host
                .clone()
                .alerting(runlog_runner::workflow::alerts::load(file)?),
            None => ctx.host.clone(),
        })
    }
}

/// Sends them and says how each went.
pub fn run(a: Args, ctx: &Ctx) -> Result<()> {
    let What::Test { workflow } = a.what;
    let wf = Workflow::load(&workflow)?;
    if wf.runner.alerts.is_empty() {
        return Err(CliError::input(format!(
            "{} has no [[alerts]]: nothing to send",
            workflow.display()
        ))
        .with_hint("add [[alerts]] with url = \"https://...\" (see docs/alerts.md)"));
    }
    let targets: Vec<(AlertTarget, Option<String>)> = wf
        .runner
        .alerts
        .iter()
        .map(|t| {
            let key = t.secret_env.as_deref().and_then(|v| ctx.host.var(v));
            (t.clone(), key.map(str::to_owned))
        })
        .collect();
    let missing: Vec<&str> = targets
        .iter()
        .filter(|(_, key)| key.is_none())
        .filter_map(|(t, _)| t.secret_env.as_deref())
        .collect();
    if let Some(name) = missing.first() {
        return Err(CliError::input(format!(
            "{name} is not set: the alerts it signs would go unsigned"
        ))
        .with_hint(format!("export {name}=... (the key the receiver checks)")));
    }
    let rt = crate::runtime::for_command("alerts test")?;
    let sent = rt.block_on(alerting::send_test(&wf.name, targets));
    let failed = sent.iter().filter(|s| s.error.is_some()).count();
    if ctx.json {
        for s in &sent {
            crate::render::json(s)?;
        }
    } else {
        for s in &sent {
            outln!("{}", s.describe());
        }
    }
    if failed > 0 {
        return Err(CliError::failed(format!(
            "{failed} of {} receivers did not take the test alert",
            sent.len()
        )));
    }
    Ok(())
}
