//! runlog as a Model Context Protocol server: the tools an agent is given to ask what happened
//! in the store and, with a token whose scope allows it, to act on it. Over stdio (`runlog
//! mcp`, acting as the user who started it) and over Streamable HTTP at `/mcp` on `runlog
//! serve` (behind the same tokens and scopes as `/v1`).
//!
//! Each tool asks `/v1` in-process: its answer is the view the API returns (its
//! `outputSchema` is the route's schema in the OpenAPI document) and an action passes the same
//! scope check, intake and write path, recorded with `via = mcp` and who asked.

pub mod inside;
mod schemas;
mod tools;

use super::api::Granted;
use super::tokens::Scope;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use rmcp::handler::server::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    ToolAnnotations,
};
use rmcp::service::{RequestContext, RoleServer};
use runlog_core::{Principal, Via};
use serde_json::{json, Value};
use std::sync::Arc;
use tower::ServiceExt;

/// The most JSON one tool answers at once (about 16,000 tokens): `log` pages to fit, any other
/// tool whose answer is larger says how to ask for less.
pub const MAX_ANSWER: usize = 64 * 1024;

/// Who calls the tools, and what they may do.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Recorded as who issued what they act on (`via = mcp`).
    pub principal: Principal,
    /// What they may do.
    pub scope: Scope,
    /// A token valid for this run only (an agent's inside a run).
    pub run: Option<String>,
}

/// One tool with what `tools/list` says of it.
struct Listed {
    tool: tools::Tool,
    shown: rmcp::model::Tool,
    /// It looks at one run: a run's own token may call it.
    for_a_run: bool,
}

/// The MCP server over a store's `/v1` routes.
#[derive(Clone)]
pub struct Server {
    v1: axum::Router,
    /// Over stdio: the user who started it. Over HTTP: read from each request.
    fixed: Option<Caller>,
    tools: Arc<Vec<Listed>>,
}

impl Server {
    /// A server asking `v1` (the API's routes, with no tokens of their own: the caller's
    /// scope is checked here and by each route); `fixed`, the caller over stdio.
    pub fn new(v1: axum::Router, fixed: Option<Caller>) -> Self {
        let tools = tools::all()
            .into_iter()
            .map(|tool| {
                let input = match (tool.input)().to_value() {
                    Value::Object(m) => m,
                    _ => serde_json::Map::new(),
                };
                // A tool about one run takes `run`: a run's own token may call those that look.
                let takes_run = input
                    .get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|f| f == "run"));
                let for_a_run = takes_run && tool.effect == tools::Effect::Looks;
                let annotations = ToolAnnotations::new()
                    .read_only(tool.effect == tools::Effect::Looks)
                    .destructive(tool.effect == tools::Effect::Destroys);
                let mut shown =
                    rmcp::model::Tool::new(tool.name, tool.description, Arc::new(input))
                        .with_annotations(annotations);
                if let Some(out) = schemas::output(tool.route, tool.wrap) {
                    shown = shown.with_raw_output_schema(Arc::new(out));
                }
                Listed {
                    tool,
                    shown,
                    for_a_run,
                }
            })
            .collect();
        Self {
            v1,
            fixed,
            tools: Arc::new(tools),
        }
    }

    /// Who asks: the stdio server's user, or the request's token (or peer) over HTTP.
    fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<Caller, ErrorData> {
        if let Some(c) = &self.fixed {
            return Ok(c.clone());
        }
        let parts = ctx
            .extensions
            .get::<axum::http::request::Parts>()
            .ok_or_else(|| {
                ErrorData::internal_error("the request's HTTP parts are missing", None)
            })?;
        let granted = parts.extensions.get::<Granted>();
        let unix = parts
            .extensions
            .get::<axum::extract::ConnectInfo<super::connections::UnixPeer>>()
            .and_then(|c| c.0 .0);
        let name = match (parts.extensions.get::<Principal>(), unix) {
            (Some(p), _) => p.name.clone(),
            (None, Some(uid)) => crate::intake::user(uid, Via::Mcp).name,
            (None, None) => "mcp".to_owned(),
        };
        Ok(Caller {
            principal: Principal {
                name,
                via: Via::Mcp,
            },
            // Without tokens (the socket, a loopback address) every route is allowed, as on `/v1`.
            scope: granted.map_or(Scope::Run, |g| g.scope),
            run: granted.and_then(|g| g.run.clone()),
        })
    }

    /// Whether `caller` sees and may call `listed`.
    fn allows(caller: &Caller, listed: &Listed) -> bool {
        caller.scope >= listed.tool.scope && (caller.run.is_none() || listed.for_a_run)
    }

    /// Asks `/v1` as `caller`: the answer's status and body.
    async fn ask(
        &self,
        ask: tools::Ask,
        caller: &Caller,
    ) -> Result<(StatusCode, Vec<u8>), ErrorData> {
        let body = match &ask.body {
            Some(v) => Body::from(v.to_string()),
            None => Body::empty(),
        };
        let mut request = Request::builder()
            .method(ask.method)
            .uri(ask.uri)
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .body(body)
            .map_err(|e| ErrorData::invalid_params(format!("not a request: {e}"), None))?;
        request.extensions_mut().insert(caller.principal.clone());
        request.extensions_mut().insert(Granted {
            holder: caller.principal.name.clone(),
            scope: caller.scope,
            run: caller.run.clone(),
        });
        let answer = match self.v1.clone().oneshot(request).await {
            Ok(answer) => answer,
            Err(never) => match never {},
        };
        let status = answer.status();
        let bytes = answer
            .into_body()
            .collect()
            .await
            .map_err(|e| ErrorData::internal_error(format!("the answer was cut off: {e}"), None))?
            .to_bytes();
        Ok((status, bytes.to_vec()))
    }
}

/// A refusal of the API's (`{error, hint}`) as a tool's error, which the model reads and can
/// act on; one of the protocol's errors where the caller may not ask at all.
fn refused(status: StatusCode, body: &[u8]) -> Result<CallToolResult, ErrorData> {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let error = v
        .get("error")
        .and_then(Value::as_str)
        .unwrap_or("refused")
        .to_owned();
    let hint = in_tools_words(v.get("hint").and_then(Value::as_str).unwrap_or_default());
    let data = Some(json!({"status": status.as_u16(), "error": error, "hint": hint}));
    match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => {
            Err(ErrorData::invalid_request(error, data))
        }
        s if s.is_server_error() => Err(ErrorData::internal_error(error, data)),
        _ => Ok(CallToolResult::error(vec![ContentBlock::text(format!(
            "{error}\nhint: {hint}"
        ))])),
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("runlog", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "runlog records agent pipelines as append-only event logs. Start with `runs`, \
                 then `status` for a run's board, `show` for one task's story (its output, \
                 tests, the judge's notes, its changes and model calls), `log` for the events \
                 page by page, `audit` and `judges` for evaluation decisions, `diff` to compare \
                 two runs. Tools that act (approve, reject, reopen, rollback, fork, budget, \
                 rerun, resume) are listed only for a token allowed to.",
            )
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.caller(&ctx)?;
        Ok(ListToolsResult::with_all_items(
            self.tools
                .iter()
                .filter(|l| Self::allows(&caller, l))
                .map(|l| l.shown.clone())
                .collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tools
            .iter()
            .find(|l| l.tool.name == name)
            .map(|l| l.shown.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.caller(&ctx)?;
        let name = request.name.as_ref();
        let Some(listed) = self.tools.iter().find(|l| l.tool.name == name) else {
            let names: Vec<&str> = self.tools.iter().map(|l| l.tool.name).collect();
            return Err(ErrorData::invalid_params(
                format!("runlog has no tool {name:?}"),
                Some(json!({ "tools": names })),
            ));
        };
        let tool = &listed.tool;
        if caller.scope < tool.scope {
            return Err(ErrorData::invalid_request(
                format!(
                    "{} may {} only; {name} needs a token with the {} scope",
                    caller.principal.name,
                    caller.scope.name(),
                    tool.scope.name()
                ),
                None,
            ));
        }
        let args = Value::Object(request.arguments.unwrap_or_default());
        let (ask, run) = (tool.read)(args, &caller.principal.name).map_err(|why| {
            ErrorData::invalid_params(
                format!("the arguments of {name} do not fit it: {why}"),
                None,
            )
        })?;
        if let Some(only) = &caller.run {
            if !Self::allows(&caller, listed) || run.as_deref() != Some(only.as_str()) {
                return Err(ErrorData::invalid_request(
                    format!("this token is valid for run {only} only"),
                    Some(
                        json!({"hint": format!("ask about run {only}: status, log, show, audit, cost")}),
                    ),
                ));
            }
        }
        let window = ask.window;
        let (status, body) = self.ask(ask, &caller).await?;
        if !status.is_success() {
            return refused(status, &body).map(CallToolResponse::Complete);
        }
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| ErrorData::internal_error(format!("the answer is not JSON: {e}"), None))?;
        let value = match tool.wrap {
            Some(key) => json!({ key: value }),
            None => value,
        };
        let value = if tool.name == "log" {
            paged(value, window)
        } else {
            value
        };
        let text = value.to_string();
        if text.len() > MAX_ANSWER {
            return Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(too_large(name, text.len())),
            ])));
        }
        let mut result = CallToolResult::success(vec![
            ContentBlock::text(summary(name, &value)),
            ContentBlock::text(text),
        ]);
        result.structured_content = Some(value);
        Ok(CallToolResponse::Complete(result))
    }
}

/// A page of events cut to fit [`MAX_ANSWER`], its `next` the first seq left out (or the one
/// after `window`, the page the tool chose, short of the head); at least one event, so every
/// page moves on.
fn paged(mut page: Value, window: Option<u64>) -> Value {
    let head = page.get("head").and_then(Value::as_u64).unwrap_or(0);
    if let (Some(to), Some(m)) = (window, page.as_object_mut()) {
        if to < head && m.get("next").is_none_or(Value::is_null) {
            m.insert("next".into(), json!(to + 1));
        }
    }
    let Some(Value::Array(events)) = page.get_mut("events") else {
        return page;
    };
    // Room for the page's own fields and the text's escaping.
    let mut room = MAX_ANSWER / 2;
    let mut kept = 0;
    for e in events.iter() {
        let size = e.to_string().len() + 1;
        if kept > 0 && size > room {
            break;
        }
        room = room.saturating_sub(size);
        kept += 1;
    }
    if kept < events.len() {
        let next = events.get(kept).and_then(|e| e.get("seq")).cloned();
        events.truncate(kept);
        if let (Some(next), Some(m)) = (next, page.as_object_mut()) {
            m.insert("next".into(), next);
        }
    }
    page
}

/// An API hint that names a route, said with the tool that asks it.
fn in_tools_words(hint: &str) -> String {
    if hint.starts_with("GET /v1/runs lists") {
        return "the `runs` tool lists them".to_owned();
    }
    match hint
        .strip_prefix("GET /v1/runs/")
        .and_then(|h| h.split_once(" lists its tasks"))
    {
        Some((run, _)) => format!("`status` with run {run} lists its tasks"),
        None => hint.to_owned(),
    }
}

/// Why an answer was not given, and how to ask for less.
fn too_large(tool: &str, bytes: usize) -> String {
    let how = match tool {
        "show" => "read the task's events a page at a time with `log` (run, task), and its calls with `cost`",
        "status" | "audit" | "cost" => "ask `log` for the events, a page at a time",
        "runs" => "filter them (status, outcome, workflow) or set `limit`",
        "judges" | "review" => "name fewer runs (`runs`) or filter (since, workflow, evaluator)",
        _ => "ask about less at once",
    };
    format!(
        "the answer of {tool} is {} KiB, more than the {} KiB a tool answers at once\nhint: {how}",
        bytes / 1024,
        MAX_ANSWER / 1024
    )
}

/// A line saying what the answer holds (its JSON follows it).
fn summary(tool: &str, v: &Value) -> String {
    let s = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    let u = |p: &str| v.pointer(p).and_then(Value::as_u64).unwrap_or(0);
    let n = |p: &str| v.pointer(p).and_then(Value::as_array).map_or(0, Vec::len);
    let count =
        |k: usize, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
    match tool {
        "runs" => count(n("/runs"), "run", "runs"),
        "status" => format!(
            "run {} at seq {}: {}, {}",
            s("/run"),
            u("/seq"),
            s("/status"),
            count(n("/board/rows"), "task", "tasks")
        ),
        "log" => format!(
            "{} of run {} (head {}){}",
            count(n("/events"), "event", "events"),
            s("/run"),
            u("/head"),
            match v.pointer("/next").and_then(Value::as_u64) {
                Some(next) => format!("; more from seq {next}"),
                None => String::new(),
            }
        ),
        "show" => format!(
            "task {} of run {}: {}, {}, {}",
            s("/spec/id"),
            s("/run"),
            s("/task/status"),
            count(n("/events"), "event", "events"),
            count(n("/calls/calls"), "model call", "model calls")
        ),
        "review" => format!(
            "{} waiting for a person",
            count(n("/waiting"), "verdict", "verdicts")
        ),
        "experiments" => count(n("/experiments"), "experiment", "experiments"),
        "approve" | "reject" | "reopen" | "rollback" | "budget" => {
            let kinds: Vec<String> = v
                .pointer("/events")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|e| e.pointer("/event/type").and_then(Value::as_str))
                .map(str::to_owned)
                .collect();
            format!(
                "recorded in run {}: {} (head {})",
                s("/run"),
                kinds.join(", "),
                u("/head")
            )
        }
        "fork" => format!(
            "forked {}@{} as {}",
            s("/from_run"),
            u("/at_seq"),
            s("/run")
        ),
        "rerun" | "resume" => format!("run {} is executing", s("/run")),
        _ => format!("the answer of {tool}, as JSON:"),
    }
}

/// `/mcp` over Streamable HTTP, without sessions: each request is answered on its own, in JSON.
/// Without tokens (the socket, a loopback address) only loopback `Host`s are served, so a web
/// page cannot reach it by rebinding a name; with tokens, the token decides.
pub fn http(
    server: Server,
    tokens: bool,
) -> rmcp::transport::StreamableHttpService<
    Server,
    rmcp::transport::streamable_http_server::session::never::NeverSessionManager,
> {
    let mut config = rmcp::transport::StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None);
    if tokens {
        config = config.disable_allowed_hosts();
    }
    rmcp::transport::StreamableHttpService::new(move || Ok(server.clone()), Arc::default(), config)
}

/// Serves the tools over standard input and output until the client closes them, acting as
/// `caller` (the user who started it); runs it executes (a rerun, a resume) are interrupted then,
/// their interrupt recorded, and can be resumed.
pub fn stdio(
    store: Arc<runlog_store::Store>,
    dir: std::path::PathBuf,
    host: runlog_runner::Host,
    caller: Caller,
) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let engines = crate::runtime::build("engines", 2, 16, || {})?;
    let hosted = Arc::new(super::hosted::Hosted::new(
        engines.handle().clone(),
        16,
        None,
        host,
    ));
    let api = super::api::Api {
        store,
        tokens: None,
        streams: Arc::default(),
        hosted: hosted.clone(),
        dir,
        pacing: Arc::new(super::pacing::Pacing::new(0)),
    };
    let server = Server::new(super::api::router(api, None), Some(caller));
    engines.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| std::io::Error::other(format!("the MCP session did not start: {e}")))?;
        let _ = running.waiting().await;
        hosted.stop_all().await;
        Ok(())
    })
}
