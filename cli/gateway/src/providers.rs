//! The upstreams the gateway passes calls to (`[providers.NAME]` in a workflow file), which
//! provider a call goes to, how the real key is put on it, and errors in each provider's own
//! shape, so an SDK raises on them as on the provider's.

use runlog_core::model_call::ModelApi;
use serde::Deserialize;

/// The API family a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Anthropic's Messages API (`x-api-key`).
    Anthropic,
    /// OpenAI's Chat Completions and Responses APIs (`Authorization: Bearer`).
    Openai,
}

/// One upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// Its name in the workflow (`anthropic`, `openai`, or the table's name).
    pub name: String,
    /// What it speaks.
    pub kind: ProviderKind,
    /// Where: `http://HOST:PORT` with an optional path prefix (the API's paths follow it).
    pub base_url: String,
    /// The variable of the runner's environment holding its key.
    pub api_key_env: String,
    /// CA certificates (PEM) its `https://` address is also trusted by, beside the system's.
    pub ca_file: Option<std::path::PathBuf>,
    /// Its rate limits, held for every run of the process.
    pub limits: crate::limits::RateLimits,
}

impl ProviderKind {
    /// Both kinds.
    pub const ALL: [ProviderKind; 2] = [ProviderKind::Anthropic, ProviderKind::Openai];

    /// Its name in a workflow file.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Openai => "openai",
        }
    }

    /// The variable its SDKs read their key from: a provider's key unless it names another.
    pub fn key_env(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Openai => "OPENAI_API_KEY",
        }
    }
}

impl Provider {
    /// The public provider of `kind`: `api.anthropic.com` with `ANTHROPIC_API_KEY`, or
    /// `api.openai.com/v1` with `OPENAI_API_KEY`.
    pub fn public(kind: ProviderKind) -> Provider {
        let base_url = match kind {
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Openai => "https://api.openai.com/v1",
        };
        Provider {
            name: kind.name().to_owned(),
            kind,
            base_url: base_url.to_owned(),
            api_key_env: kind.key_env().to_owned(),
            ca_file: None,
            limits: Default::default(),
        }
    }

    /// The upstream of `kind` among `providers`: the one named as the kind, else the first
    /// of that kind.
    pub fn for_kind(providers: &[Provider], kind: ProviderKind) -> Option<&Provider> {
        providers
            .iter()
            .find(|p| p.kind == kind && p.name == kind.name())
            .or_else(|| providers.iter().find(|p| p.kind == kind))
    }

    /// The header that carries the key to it.
    pub fn auth_header(&self, key: &str) -> (&'static str, String) {
        match self.kind {
            ProviderKind::Anthropic => ("x-api-key", key.to_owned()),
            ProviderKind::Openai => ("authorization", format!("Bearer {key}")),
        }
    }
}

/// Which kind of provider serves `api` (the model list goes where its caller's key points).
pub fn kind_of(api: ModelApi, anthropic_caller: bool) -> ProviderKind {
    match api {
        ModelApi::Messages | ModelApi::CountTokens => ProviderKind::Anthropic,
        ModelApi::ChatCompletions | ModelApi::Responses => ProviderKind::Openai,
        ModelApi::Models if anthropic_caller => ProviderKind::Anthropic,
        ModelApi::Models => ProviderKind::Openai,
    }
}

/// How a call over budget is answered: 402 (which the SDKs raise on without retrying, as they
/// retry 429) with the API's billing error type.
pub fn over_budget(kind: ProviderKind) -> (axum::http::StatusCode, &'static str) {
    let error_type = match kind {
        ProviderKind::Anthropic => "billing_error",
        ProviderKind::Openai => "insufficient_quota",
    };
    (axum::http::StatusCode::PAYMENT_REQUIRED, error_type)
}

/// An error answer as `kind`'s API words one (Anthropic: `{"type":"error","error":{...}}`;
/// OpenAI: `{"error":{"message","type","code"}}`).
pub fn error_body(kind: ProviderKind, error_type: &str, message: &str) -> String {
    let body = match kind {
        ProviderKind::Anthropic => serde_json::json!({
            "type": "error",
            "error": {"type": error_type, "message": message},
        }),
        ProviderKind::Openai => serde_json::json!({
            "error": {"message": message, "type": error_type, "code": error_type, "param": null},
        }),
    };
    body.to_string()
}
