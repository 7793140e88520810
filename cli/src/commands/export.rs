//! `runlog export RUN [-o FILE]`: a run as JSON lines (a header, then one event per line); as
//! an OpenTelemetry trace with `--otlp URL` (sent) or `--format otlp-json` (written).

use crate::ctx::Ctx;
use crate::error::{bad_file, CliError, Result};
use crate::otlp;
use crate::render;
use runlog_replay::export::export as export_run;
use runlog_store::EventLog;
use std::path::PathBuf;

/// Arguments of `runlog export`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run.
    run: String,
    /// Write to this file (with --json, a summary of what was written goes to stdout).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// What to write: the run's events as JSON lines, or its trace as OTLP JSON.
    #[arg(long, value_enum, default_value = "jsonl")]
    format: Format,
    /// Send the run's trace to this OTLP/HTTP(S) endpoint (protobuf), e.g. Arize Phoenix at
    /// http://127.0.0.1:6006, Langfuse Cloud at https://cloud.langfuse.com/api/public/otel or a
    /// Collector at http://127.0.0.1:4318 [env: RUNLOG_OTLP_ENDPOINT, then
    /// OTEL_EXPORTER_OTLP_ENDPOINT, when --format otlp is given without it]
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    #[command(flatten)]
    delivery: otlp::Delivery,
    /// The project the receiver files the trace under (Phoenix's project) [default: runlog]
    #[arg(long, value_name = "NAME", default_value = "runlog")]
    project: String,
    /// Put what each model call said on its span: the request and the answer whole, each
    /// message by role (as Phoenix shows a conversation). Left out unless asked: prompts and
    /// replies hold a task's code and data, and a trace often goes where they should not
    #[arg(long)]
    content: bool,
}

impl Args {
    /// Whether the trace is sent to a receiver (a socket the receiver may close, where a
    /// broken pipe is an error to report, not a reader gone).
    pub fn sends(&self) -> bool {
        self.otlp.is_some() || self.format == Format::Otlp
    }
}

/// What `export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Format {
    /// The run's events, one JSON line each (what `import` reads).
    Jsonl,
    /// The run's trace as an OTLP JSON export request.
    OtlpJson,
    /// The run's trace, sent to --otlp URL (or the OTLP environment variables).
    Otlp,
}

/// Spans per OTLP request.
const SPANS_PER_REQUEST: usize = 512;

/// The run's trace, written or sent.
fn export_trace(a: &Args, ctx: &Ctx) -> Result<()> {
    let log = ctx.open()?;
    let replay = runlog_replay::Replay::new(&log);
    let mut trace = otlp::spans_of(&replay, &a.run)?;
    if a.content {
        otlp::content::add(&log, &a.run, &mut trace.spans)?;
    }
    let trace_id: String = trace
        .ids
        .trace_id
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    if a.format == Format::OtlpJson {
        let request = otlp::request(trace.ids, &a.run, &a.project, &trace.spans);
        let text = serde_json::to_string(&request)
            .map_err(|e| CliError::failed(format!("cannot write the trace as JSON: {e}")))?;
        match &a.output {
            Some(path) => std::fs::write(path, text + "\n").map_err(|e| {
                bad_file(
                    format!("cannot write: {e}"),
                    path,
                    "-o takes a file in a directory that exists and that you may write",
                )
            })?,
            None => outln!("{text}"),
        }
        if a.output.is_some() {
            errln!(
                "wrote {} spans of {} (trace {trace_id})",
                trace.spans.len(),
                a.run
            );
        }
        return Ok(());
    }
    let Some(endpoint) = otlp::Endpoint::from_flag_or_env(a.otlp.as_deref(), &a.delivery)? else {
        return Err(
            CliError::input("--format otlp sends the trace: give --otlp URL")
                .with_hint("or set RUNLOG_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT"),
        );
    };
    let rt = crate::runtime::for_command("export")?;
    let mut sent = 0;
    for chunk in trace.spans.chunks(SPANS_PER_REQUEST) {
        let body =
            prost::Message::encode_to_vec(&otlp::request(trace.ids, &a.run, &a.project, chunk));
        rt.block_on(otlp::post(&endpoint, body)).map_err(|e| {
            let fix = e.fix(&endpoint);
            CliError::sending(format!("sending the trace of {}", a.run), e).with_hint(format!(
                "{fix}; {sent} of {} spans were sent, and sending again gives the same ids: runlog export {} --otlp {}",
                trace.spans.len(),
                a.run,
                endpoint.url()
            ))
        })?;
        sent += chunk.len();
    }
    // Verdicts and people's decisions beside the trace, where the receiver is Phoenix.
    // Kept by `runlog judges` in the store's cache: the run is not walked a second time.
    let verdicts = match log.head(&a.run)? {
        Some(head) => crate::queries::judges::verdicts(&log, &a.run, head)?,
        None => Vec::new(),
    };
    let annotations = otlp::annotations::of(&a.run, &trace.spans, &verdicts);
    let annotated = match rt.block_on(otlp::annotations::send(&endpoint, annotations)) {
        Ok(otlp::annotations::Sent::Taken(n)) => n,
        Ok(otlp::annotations::Sent::None) => 0,
        Ok(otlp::annotations::Sent::NoApi) => {
            errln!("note: the receiver takes no span annotations (Arize Phoenix's API): the verdicts are on the spans as events only");
            0
        }
        Err(e) => {
            // The trace went; the annotations are its extra, said and not fatal.
            errln!(
                "warning: the verdicts were not sent as annotations: {e} ({})",
                e.fix(&endpoint)
            );
            0
        }
    };
    if ctx.json {
        render::json(
            &serde_json::json!({"run": a.run, "trace_id": trace_id, "spans": sent, "events": trace.events, "endpoint": endpoint.url(), "annotations": annotated}),
        )?;
    } else {
        outln!(
            "exported {sent} spans of {} ({} events) to {} (trace {trace_id})",
            a.run,
            trace.events,
            endpoint.url()
        );
        if annotated > 0 {
            outln!(
                "annotated the attempts' spans with {annotated} verdicts and people's decisions"
            );
        }
    }
    Ok(())
}

/// Writes the export to stdout or to `-o FILE`.
pub fn run(mut a: Args, ctx: &Ctx) -> Result<()> {
    if a.otlp.is_some() && a.format == Format::Jsonl {
        a.format = Format::Otlp;
    }
    if a.format != Format::Jsonl {
        return export_trace(&a, ctx);
    }
    if a.content {
        return Err(CliError::input(
            "--content puts what model calls said on a trace's spans: a JSON-lines export carries the calls' bodies already",
        )
        .with_hint(format!(
            "runlog export {} --format otlp-json --content, or --otlp URL --content",
            a.run
        )));
    }
    let log = ctx.open()?;
    let run = a.run.as_str();
    let Some(path) = a.output else {
        let mut out = render::listing();
        export_run(&log, run, &mut out)?;
        return std::io::Write::flush(&mut out).map_err(CliError::stdout);
    };
    let file = std::fs::File::create(&path).map_err(|e| {
        bad_file(
            format!("cannot create: {e}"),
            &path,
            "-o takes a file in a directory that exists and that you may write",
        )
    })?;
    let mut out = std::io::BufWriter::new(file);
    let h = export_run(&log, run, &mut out)?;
    std::io::Write::flush(&mut out)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))?;
    if ctx.json {
        render::json(&serde_json::json!({
            "run": run,
            "file": path.display().to_string(),
            "events": h.events,
            "head_hash": h.head_hash,
        }))?;
    } else {
        errln!(
            "exported {} events of {run} to {} (head {})",
            h.events,
            path.display(),
            h.head_hash
        );
    }
    Ok(())
}
