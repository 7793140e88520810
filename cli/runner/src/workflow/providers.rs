//! A workflow's `[providers]`: the gateway's plan (which providers, their addresses, keys and
//! rate limits), checked where it is written.

use super::file::{GatewayMode, WorkflowFile};
use super::GatewayPlan;
use crate::error::WorkflowError;
use std::path::Path;
use std::time::Duration;

/// The file's gateway plan: `gateway = "off"`, or on with its `[providers]`, or nothing said.
pub(super) fn plan(file: &WorkflowFile, dir: &Path) -> GatewayPlan {
    use runlog_gateway::{Provider, ProviderKind};
    match file.settings.gateway {
        Some(GatewayMode::Off) => return GatewayPlan::Off,
        None if file.providers.is_empty() => return GatewayPlan::IfKeys,
        _ => {}
    }
    let mut providers: Vec<Provider> = file
        .providers
        .iter()
        .map(|(name, p)| Provider {
            name: name.clone(),
            kind: p.kind,
            base_url: p.base_url.trim().to_owned(),
            ca_file: p.ca_file.as_ref().map(|f| dir.join(f)),
            api_key_env: p
                .api_key_env
                .clone()
                .unwrap_or_else(|| p.kind.key_env().to_owned()),
            limits: runlog_gateway::RateLimits {
                requests_per_minute: p.requests_per_minute,
                tokens_per_minute: p.tokens_per_minute,
                concurrent: p.concurrent,
                wait: p.limit_wait_ms.map(Duration::from_millis),
            },
        })
        .collect();
    for kind in ProviderKind::ALL {
        if !providers.iter().any(|p| p.kind == kind) {
            providers.push(Provider::public(kind));
        }
    }
    GatewayPlan::On(providers)
}

/// What the gateway could not work with: a rate limit of 0, a `ca_file` that is not one.
pub(super) fn check(
    file: &WorkflowFile,
    gateway: &GatewayPlan,
    path: &Path,
) -> Result<(), WorkflowError> {
    for (name, p) in &file.providers {
        let zero = [
            ("requests_per_minute", p.requests_per_minute == Some(0)),
            ("tokens_per_minute", p.tokens_per_minute == Some(0)),
            ("concurrent", p.concurrent == Some(0)),
        ];
        if let Some((field, _)) = zero.into_iter().find(|(_, zero)| *zero) {
            return Err(WorkflowError::Field {
                path: path.to_path_buf(),
                place: format!("[providers.{name}], "),
                field,
                message: "0 would refuse every call: at least 1 (leave it out for no limit)".into(),
            });
        }
    }
    if let GatewayPlan::On(providers) = &gateway {
        if let Err(runlog_gateway::GatewayError::Ca {
            provider,
            path: ca,
            why,
        }) = runlog_gateway::check(providers)
        {
            return Err(WorkflowError::Field {
                path: path.to_path_buf(),
                place: format!("[providers.{provider}], "),
                field: "ca_file",
                message: format!("{}: {why}", ca.display()),
            });
        }
    }
    Ok(())
}
