//! A run as an OpenTelemetry trace, sent to an OTLP/HTTP receiver (Arize Phoenix, Langfuse, an
//! OpenTelemetry Collector, Jaeger) or written as OTLP JSON: the spans `core`'s
//! [`TraceBuilder`](runlog_core::projections::trace::TraceBuilder) folds from the run's events,
//! in the protocol's own message types (`opentelemetry-proto`).

pub mod annotations;
pub mod content;
mod convert;
mod endpoint;
pub mod experiment;
mod history;
mod live;
mod send;

pub use convert::request;
pub use endpoint::{Delivery, Endpoint};
pub use history::spans_of;
pub use live::{start as start_live, Exporting, Traced};
pub use send::post;

/// Where a live export goes: the endpoint and the project.
#[derive(Debug, Clone)]
pub struct Target {
    /// The endpoint.
    pub endpoint: Endpoint,
    /// The project the receiver files the trace under.
    pub project: String,
    /// Whether what model calls said goes on their spans.
    pub content: bool,
}

/// Live export of a run's trace (`run`, `resume`).
#[derive(Debug, Clone, clap::Args)]
pub struct TraceArgs {
    /// Send the run's trace, each span when its part of the run ends, to this OTLP/HTTP(S)
    /// endpoint (Arize Phoenix: http://127.0.0.1:6006; Langfuse Cloud:
    /// https://cloud.langfuse.com/api/public/otel; a Collector: http://127.0.0.1:4318). A
    /// receiver that is down or slow never holds the run up; the summary says what was missed
    /// [env: RUNLOG_OTLP_ENDPOINT, then OTEL_EXPORTER_OTLP_ENDPOINT]
    #[arg(long, value_name = "URL")]
    otlp: Option<String>,
    #[command(flatten)]
    delivery: Delivery,
    /// The project the receiver files the trace under.
    #[arg(long = "otlp-project", value_name = "NAME", default_value = "runlog")]
    otlp_project: String,
    /// Put what each model call said on its span, as `export --content` does (a trace often
    /// goes where a conversation should not: never without being asked).
    #[arg(long = "otlp-content", requires = "otlp")]
    otlp_content: bool,
}

impl TraceArgs {
    /// Where to export, from the flags or the environment; none when neither says.
    pub fn target(&self) -> crate::error::Result<Option<Target>> {
        Ok(
            Endpoint::from_flag_or_env(self.otlp.as_deref(), &self.delivery)?.map(|endpoint| {
                Target {
                    endpoint,
                    project: self.otlp_project.clone(),
                    content: self.otlp_content,
                }
            }),
        )
    }
}

/// `inner`, exporting `run`'s trace (of `log`) live to `target` when there is one.
pub fn traced<O: runlog_runner::Observer>(
    log: std::sync::Arc<dyn runlog_store::EventLog>,
    run: &str,
    target: Option<&Target>,
    inner: O,
) -> Result<(Traced<O>, Option<Exporting>), runlog_replay::ReplayError> {
    match target {
        Some(t) => {
            let (traced, exporting) = start_live(log, run, t, inner)?;
            Ok((traced, Some(exporting)))
        }
        None => Ok((Traced::plain(inner), None)),
    }
}
