//! A run as an OpenTelemetry trace, sent to an OTLP/HTTP receiver (Arize Phoenix, Langfuse, an
//! OpenTelemetry Collector, Jaeger) or written as OTLP JSON: the spans `core`'s
//! [`TraceBuilder`](runlog_core::projections::trace::TraceBuilder) folds from the run's events,
//! in the protocol's own message types (`opentelemetry-proto`).

mod convert;
mod endpoint;
mod history;
mod live;
mod send;

pub use convert::request;
pub use endpoint::Endpoint;
pub use history::spans_of;
pub use live::{start as start_live, Report, Traced};
pub use send::post;
