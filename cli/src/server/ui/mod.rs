//! The web view: pages served beside `/v1` on the server's TCP address, from assets compiled
//! into the binary (no CDN, nothing to install). The pages hold no data; they read the same
//! `/v1` API the CLI's scripts use, so they need no token of their own and the API's token
//! rules cover every byte of a run that reaches a browser.

#[cfg(feature = "ts")]
pub mod types;

use axum::http::header;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::path::{Path, PathBuf};

const PAGE: &str = include_str!("index.html");
/// The page's script modules (ES modules, no build step), by their path under `/ui/js/`.
const MODULES: &[(&str, &str)] = &[
    ("main.js", include_str!("js/main.js")),
    ("dom.js", include_str!("js/dom.js")),
    ("api.js", include_str!("js/api.js")),
    ("runs.js", include_str!("js/runs.js")),
    ("judges.js", include_str!("js/judges.js")),
    ("experiments.js", include_str!("js/experiments.js")),
    ("layout.js", include_str!("js/layout.js")),
    ("run/page.js", include_str!("js/run/page.js")),
    ("run/board.js", include_str!("js/run/board.js")),
    ("run/audit.js", include_str!("js/run/audit.js")),
    ("run/supervisor.js", include_str!("js/run/supervisor.js")),
    ("run/diff.js", include_str!("js/run/diff.js")),
    ("run/task.js", include_str!("js/run/task.js")),
    ("run/graph.js", include_str!("js/run/graph.js")),
    ("run/events.js", include_str!("js/run/events.js")),
    ("run/timeline.js", include_str!("js/run/timeline.js")),
    (
        "run/conversation.js",
        include_str!("js/run/conversation.js"),
    ),
    ("compare.js", include_str!("js/compare.js")),
    ("run/live.js", include_str!("js/run/live.js")),
];
const STYLE: &str = include_str!("app.css");

/// The style sheet: the status colours of [`crate::render::palette`], then the page's rules.
static STYLE_SHEET: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| crate::render::palette::css_properties() + STYLE);

/// Pages may load only their own script, style and API: an agent's output shown on a page can
/// never run as script or pull anything from elsewhere.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
                      connect-src 'self'; img-src 'self' data:; base-uri 'none'; \
                      frame-ancestors 'none'";

fn asset(kind: &'static str, body: &'static str) -> impl IntoResponse + use<> {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
}

async fn page() -> impl IntoResponse {
    asset("text/html; charset=utf-8", PAGE)
}

async fn module(axum::extract::Path(path): axum::extract::Path<String>) -> Response {
    match MODULES.iter().find(|(name, _)| *name == path) {
        Some((_, body)) => asset("text/javascript; charset=utf-8", body).into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// The pages' routes: the runs page at `/`, a run at `/runs/{run}`, the evaluators at
/// `/judges`, the experiments at `/experiments`, two attempts side by side at `/compare` (the
/// same page; its script reads the address), its script modules and its style sheet.
pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(page))
        .route("/runs/{run}", get(page))
        .route("/judges", get(page))
        .route("/experiments", get(page))
        .route("/experiments/{name}", get(page))
        .route("/compare", get(page))
        .route("/ui/js/{*path}", get(module))
        .route(
            "/ui/app.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE_SHEET.as_str()) }),
        )
}

/// The file in a store directory that names the address a server's view is on, while it
/// serves: how `runlog ui` finds it.
pub fn address_file(store: &Path) -> PathBuf {
    store.join("view.url")
}
