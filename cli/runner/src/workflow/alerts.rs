//! A workflow's `[[alerts]]`: its receivers, checked where they are written.

use super::file::AlertFile;
use crate::alerting::{AlertFormat, AlertTarget};
use runlog_core::alerts::AlertOn;
use runlog_gateway::http::Target;

/// The receivers of `[[alerts]]`, checked: the field that is wrong and why, when one is.
pub(super) fn targets(files: &[AlertFile]) -> Result<Vec<AlertTarget>, (&'static str, String)> {
    files
        .iter()
        .map(|f| {
            Target::of(&f.url).map_err(|e| ("url", e.to_string()))?;
            let on = match &f.on {
                None => AlertOn::ALL.to_vec(),
                Some(names) => names
                    .iter()
                    .map(|n| {
                        AlertOn::ALL
                            .into_iter()
                            .find(|on| on.name() == n)
                            .ok_or_else(|| {
                                let known: Vec<&str> = AlertOn::ALL.map(AlertOn::name).to_vec();
                                ("on", format!("{n:?} is not an alert: {}", known.join(", ")))
                            })
                    })
                    .collect::<Result<_, _>>()?,
            };
            Ok(AlertTarget {
                url: f.url.clone(),
                format: f.format.unwrap_or(AlertFormat::Json),
                on,
                secret_env: f.secret_env.clone(),
            })
        })
        .collect()
}

/// A file of `[[alerts]]` tables alone (`serve --alerts FILE`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AlertsFile {
    #[serde(default)]
    alerts: Vec<AlertFile>,
}

/// The receivers of the `[[alerts]]` in the file at `path`, checked as a workflow's are.
pub fn load(path: &std::path::Path) -> Result<Vec<AlertTarget>, crate::error::WorkflowError> {
    use crate::error::WorkflowError;
    let text = std::fs::read_to_string(path).map_err(|cause| WorkflowError::Read {
        path: path.to_path_buf(),
        cause,
    })?;
    let file: AlertsFile = toml::from_str(&text).map_err(|e| WorkflowError::Syntax {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    targets(&file.alerts).map_err(|(field, message)| WorkflowError::Field {
        path: path.to_path_buf(),
        place: "[[alerts]], ".into(),
        field,
        message,
    })
}
