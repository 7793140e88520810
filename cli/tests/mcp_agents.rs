//! The real Claude Code CLI (pinned, as in `real_agents.rs`) as a client of runlog's MCP server:
//! a person's Claude Code asking `runlog mcp` or `runlog serve`'s `/mcp` why a task failed, and
//! a run's own rescue attempt asking through `RUNLOG_MCP_URL` what its earlier attempt was told.
//! The model is scripted (no network): it asks for the runlog tools a plan names, one after the
//! other, then says it is done; every request it gets is kept, to read the tool results in them.

mod common;
use axum::body::Bytes;
use axum::response::{IntoResponse, Response};
use common::provider::{serve, sse};
use common::{agent_clis, runlog, text};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

const ANTHROPIC_KEY: &str = "sk-ant-api03-the-runners-own-key-0123456789";

/// Every request body the scripted model got.
type Asked = Arc<Mutex<Vec<Value>>>;

/// A scripted Messages API asking, in turn, for each `(tool, input)` of `plan` while it is
/// offered (Claude Code names an MCP server's tools `mcp__SERVER__TOOL`), then saying done.
fn scripted_model(plan: Vec<(&'static str, Value)>) -> (String, Asked) {
    let asked: Asked = Arc::default();
    let seen = asked.clone();
    let plan = Arc::new(plan);
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri, body: Bytes| {
        let (seen, plan) = (seen.clone(), plan.clone());
        async move {
            let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            // RUNLOG_TEST_DUMP=1: each request, to see what an agent sends.
            if std::env::var_os("RUNLOG_TEST_DUMP").is_some() {
                eprintln!("ASKED {}", asked);
            }
            seen.lock().unwrap().push(asked.clone());
            if uri.path() == "/v1/responses" {
                return responses(&asked, &plan);
            }
            answer(&asked, &plan)
        }
    });
    (serve(app), asked)
}

/// The blocks of `kind` in the conversation `asked` carries.
fn blocks<'a>(asked: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    asked["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(move |c| c["type"] == kind)
}

/// The next tool of the plan while it is offered; when Claude Code defers it (named in its
/// prompt, its schema not loaded), first `ToolSearch` for it, as a real model does.
fn answer(asked: &Value, plan: &[(&'static str, Value)]) -> Response {
    if asked["messages"].is_null() {
        return axum::Json(json!({"input_tokens": 10})).into_response();
    }
    let done = blocks(asked, "tool_use")
        .filter(|c| c["name"].as_str().is_some_and(|n| n.starts_with("mcp__")))
        .count();
    let offered = |name: &str| {
        asked["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == name))
    };
    let call = match plan.get(done) {
        Some((name, input)) if offered(name) => {
            Some((format!("toolu_mcp_{done}"), *name, input.clone()))
        }
        Some((name, _)) if offered("ToolSearch") && asked.to_string().contains(name) => Some((
            format!("toolu_search_{done}"),
            "ToolSearch",
            json!({"query": format!("select:{name}"), "max_results": 1}),
        )),
        _ => None,
    };
    let (block, delta, stop) = match call {
        Some((id, name, input)) => (
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
        None => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": "done"}),
            "end_turn",
        ),
    };
    let message = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-scripted", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 1}});
    if asked["stream"] != true {
        let mut whole = message;
        whole["content"] = json!([{"type": "text", "text": "done"}]);
        whole["stop_reason"] = json!("end_turn");
        return axum::Json(whole).into_response();
    }
    let events = [
        json!({"type": "message_start", "message": message}),
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 5}}),
        json!({"type": "message_stop"}),
    ];
    ([("content-type", "text/event-stream")], sse(&events)).into_response()
}

/// Codex's side (the Responses API, streamed): the next tool of the plan while it is offered
/// (Codex names an MCP server's tools `mcp__SERVER__TOOL`), then done.
fn responses(asked: &Value, plan: &[(&'static str, Value)]) -> Response {
    let items = asked["input"].as_array().cloned().unwrap_or_default();
    let done = items
        .iter()
        .filter(|i| i["type"] == "function_call")
        .count();
    // Codex offers an MCP server's tools in a namespace of their own (`mcp__SERVER`), and a
    // call names both.
    let offered = |namespace: &str, tool: &str| {
        asked["tools"].as_array().is_some_and(|t| {
            t.iter().any(|t| {
                t["name"] == namespace
                    && t["tools"]
                        .as_array()
                        .is_some_and(|tools| tools.iter().any(|x| x["name"] == tool))
            })
        })
    };
    let item = match plan.get(done).and_then(|(name, input)| {
        let (namespace, tool) = name.rsplit_once("__")?;
        offered(namespace, tool).then_some((namespace, tool, input))
    }) {
        Some((namespace, tool, input)) => json!({"type": "function_call",
            "id": format!("fc_{done}"), "call_id": format!("call_mcp_{done}"), "status": "completed",
            "namespace": namespace, "name": tool, "arguments": input.to_string()}),
        None => {
            json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "done", "annotations": []}]})
        }
    };
    let response = json!({"id": "resp_1", "object": "response", "created_at": 1_700_000_000,
        "model": "gpt-scripted", "status": "in_progress", "output": []});
    let mut whole = response.clone();
    whole["status"] = json!("completed");
    whole["output"] = json!([item]);
    whole["usage"] = json!({"input_tokens": 100, "output_tokens": 5, "total_tokens": 105,
        "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}});
    let events = [
        json!({"type": "response.created", "response": response}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": whole}),
    ];
    ([("content-type", "text/event-stream")], sse(&events)).into_response()
}

/// The results of the runlog tools Claude Code sent the model, each as its text and whether
/// it is an error.
fn tool_results(asked: &Asked) -> Vec<(String, bool)> {
    let asked = asked.lock().unwrap();
    let last = asked
        .iter()
        .rev()
        .find(|a| a["messages"].is_array() || a["input"].is_array())
        .cloned()
        .unwrap_or_default();
    // Codex's: each call's output among its input items.
    let codex = last["input"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "function_call_output")
        .filter(|i| {
            i["call_id"]
                .as_str()
                .is_some_and(|id| id.starts_with("call_mcp_"))
        })
        .map(|i| (i["output"].to_string(), false));
    blocks(&last, "tool_result")
        .filter(|c| {
            c["tool_use_id"]
                .as_str()
                .is_some_and(|id| id.starts_with("toolu_mcp_"))
        })
        .map(|c| (c["content"].to_string(), c["is_error"] == true))
        .chain(codex)
        .collect()
}

/// A run `night` whose task `parser` failed: its first attempt's tests failed (printing
/// `FAIL test_last_line`), its second passed them and the judge failed it with its notes.
fn failed_run(dir: &Path) -> PathBuf {
    let store = dir.join("store");
    std::fs::write(
        dir.join("check.sh"),
        "#!/bin/sh\nif [ \"$RUNLOG_ATTEMPT\" = 1 ]; then echo 'FAIL test_last_line: expected 3 lines, got 2'; exit 1; fi\necho ok\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("judge.sh"),
        "#!/bin/sh\necho '{\"score\": 0.3, \"notes\": \"the parser still drops a trailing line without a newline\"}'\n",
    )
    .unwrap();
    let wf = common::workflow(
        dir,
        "night",
        "name = \"night\"\n[settings]\nworkspace = \"none\"\neval_threshold = 0.7\nmax_eval_rescues = 0\nmax_test_retries = 1\n\
         [[task]]\nid = \"parser\"\nrun = \"echo parsing\"\ntest = \"sh check.sh\"\neval = \"sh judge.sh\"\n",
    );
    let out = common::run(&store, &wf, "night", &[]);
    assert_eq!(out.status.code(), Some(1), "the run fails: {}", text(&out));
    store
}

/// Claude Code, asked `prompt`, with `config` as its MCP configuration and the runlog tools
/// allowed, its model the scripted one at `model`.
fn claude(
    clis: &Path,
    dir: &Path,
    model: &str,
    config: &Value,
    prompt: &str,
) -> std::process::Output {
    let file = dir.join("mcp.json");
    std::fs::write(&file, config.to_string()).unwrap();
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    Command::new(clis.join("claude"))
        .args([
            "-p",
            prompt,
            "--output-format",
            "json",
            "--strict-mcp-config",
        ])
        .arg("--mcp-config")
        .arg(&file)
        .args([
            "--allowedTools",
            "mcp__runlog__show,mcp__runlog__status,ToolSearch",
        ])
        .env("ANTHROPIC_BASE_URL", model)
        .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        .env("HOME", home)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .current_dir(dir)
        .output()
        .unwrap()
}

/// The failed task's story reached the model: its test output and the judge's notes.
fn read_the_failure(asked: &Asked, out: &std::process::Output) {
    let results = tool_results(asked);
    assert_eq!(results.len(), 1, "{}\n{results:?}", text(out));
    let (story, error) = &results[0];
    assert!(!error, "{story}");
    assert!(story.contains("FAIL test_last_line"), "{story}");
    assert!(
        story.contains("the parser still drops a trailing line without a newline"),
        "{story}"
    );
}

/// `runlog` on `store` with the agents' CLIs on its PATH, the runner's keys, and a home of
/// their own in `dir`.
fn with_agents(store: &Path, clis: &Path, dir: &Path) -> Command {
    let (home, codex_home) = (dir.join("home"), dir.join("codex-home"));
    for d in [&home, &codex_home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let path = std::env::join_paths(std::iter::once(clis.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut command = runlog(store);
    command
        .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        .env(
            "OPENAI_API_KEY",
            "sk-proj-the-runners-own-openai-key-0123456789",
        )
        .env("HOME", home)
        .env("CODEX_HOME", codex_home)
        .env("PATH", path)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    command
}

#[test]
fn claude_code_asks_runlog_mcp_over_stdio_why_a_task_failed() {
    let Some(clis) = agent_clis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = failed_run(dir.path());
    let (model, asked) = scripted_model(vec![(
        "mcp__runlog__show",
        json!({"run": "night", "task": "parser"}),
    )]);
    let config = json!({"mcpServers": {"runlog": {
        "command": env!("CARGO_BIN_EXE_runlog"),
        "args": ["--store", store, "mcp", "--read-only"]}}});
    let out = claude(
        &clis,
        dir.path(),
        &model,
        &config,
        "Why did task parser of run night fail?",
    );
    assert!(out.status.success(), "{}", text(&out));
    read_the_failure(&asked, &out);
}

#[test]
fn claude_code_asks_serves_mcp_endpoint_with_a_read_token_why_a_task_failed() {
    let Some(clis) = agent_clis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = failed_run(dir.path());
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "claude read claude-reads-0123456789\n").unwrap();
    let (mut server, url) =
        common::serve_http(&store, &["--token-file".as_ref(), tokens.as_os_str()]);
    let (model, asked) = scripted_model(vec![(
        "mcp__runlog__show",
        json!({"run": "night", "task": "parser"}),
    )]);
    let config = json!({"mcpServers": {"runlog": {"type": "http", "url": format!("{url}/mcp"),
        "headers": {"Authorization": "Bearer claude-reads-0123456789"}}}});
    let out = claude(
        &clis,
        dir.path(),
        &model,
        &config,
        "Why did task parser of run night fail?",
    );
    let _ = server.kill();
    let _ = server.wait();
    assert!(out.status.success(), "{}", text(&out));
    read_the_failure(&asked, &out);
}

/// Run `rescue` of task `parser`, whose command is `agent.sh` in `dir`, its judge failing the
/// first attempt with its notes and passing the rescue; its model at `model` for `provider`.
fn rescued(
    store: &Path,
    clis: &Path,
    dir: &Path,
    provider: &str,
    model: &str,
) -> std::process::Output {
    std::fs::write(
        dir.join("judge.sh"),
        "#!/bin/sh\nif [ \"$RUNLOG_RESCUE\" = 0 ]; then\n  echo '{\"score\": 0.4, \"notes\": \"the parser drops the last line\"}'\nelse\n  echo '{\"score\": 0.9, \"notes\": \"fine\"}'\nfi\n",
    )
    .unwrap();
    let wf = common::workflow(
        dir,
        "wf",
        &format!(
            "name = \"rescue\"\n[settings]\nworkspace = \"none\"\neval_threshold = 0.7\nmax_eval_rescues = 1\n\
             [[task]]\nid = \"parser\"\nrun = \"sh agent.sh\"\neval = \"sh judge.sh\"\nrequires_testing = false\n\
             [providers.{provider}]\nkind = \"{provider}\"\nbase_url = \"{model}\"\n"
        ),
    );
    with_agents(store, clis, dir)
        .args(["run", wf.to_str().unwrap(), "--run-id", "rescue", "--quiet"])
        .output()
        .unwrap()
}

#[test]
fn a_rescue_by_claude_code_reads_its_earlier_verdict_through_the_runs_endpoint() {
    let Some(clis) = agent_clis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = common::quickstart_in(dir.path());
    // On its rescue, Claude Code is wired to the run's endpoint as docs/agents.md shows.
    std::fs::write(
        dir.path().join("agent.sh"),
        r#"#!/bin/sh
[ "$RUNLOG_RESCUE" = 0 ] && { echo 'first try'; exit 0; }
cat > "$RUNLOG_WORKTREE/runlog-mcp.json" <<JSON
{"mcpServers": {"runlog": {"type": "http", "url": "$RUNLOG_MCP_URL",
  "headers": {"Authorization": "Bearer $RUNLOG_MCP_TOKEN"}}}}
JSON
exec claude -p "You are rescuing task $RUNLOG_TASK of run $RUNLOG_RUN" --output-format json \
  --strict-mcp-config --mcp-config "$RUNLOG_WORKTREE/runlog-mcp.json" \
  --allowedTools mcp__runlog__show,mcp__runlog__status,ToolSearch
"#,
    )
    .unwrap();
    let (model, asked) = scripted_model(vec![
        (
            "mcp__runlog__show",
            json!({"run": "rescue", "task": "parser"}),
        ),
        ("mcp__runlog__status", json!({"run": "quickstart"})),
    ]);
    let out = rescued(&store, &clis, dir.path(), "anthropic", &model);
    let results = tool_results(&asked);
    assert!(out.status.success(), "{}\n{results:?}", text(&out));
    assert_eq!(results.len(), 2, "{results:?}");
    let (story, error) = &results[0];
    assert!(
        !error && story.contains("the parser drops the last line"),
        "{story}"
    );
    let (other, error) = &results[1];
    assert!(*error, "another run is refused: {other}");
    assert!(other.contains("valid for run rescue only"), "{other}");
}

#[test]
fn a_rescue_by_codex_reads_its_earlier_verdict_through_the_runs_endpoint() {
    let Some(clis) = agent_clis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = common::quickstart_in(dir.path());
    // Codex is wired to the run's endpoint as docs/agents.md shows: `mcp_servers` in its
    // configuration, the token read from the variable runlog sets.
    std::fs::write(
        dir.path().join("agent.sh"),
        r#"#!/bin/sh
[ "$RUNLOG_RESCUE" = 0 ] && { echo 'first try'; exit 0; }
exec codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -m gpt-scripted \
  -c model_provider=runlog \
  -c "model_providers.runlog={name=\"runlog\", base_url=\"$RUNLOG_GATEWAY/v1\", env_key=\"OPENAI_API_KEY\", wire_api=\"responses\"}" \
  -c "mcp_servers.runlog.url=\"$RUNLOG_MCP_URL\"" \
  -c 'mcp_servers.runlog.bearer_token_env_var="RUNLOG_MCP_TOKEN"' \
  "You are rescuing task $RUNLOG_TASK of run $RUNLOG_RUN"
"#,
    )
    .unwrap();
    let (model, asked) = scripted_model(vec![(
        "mcp__runlog__show",
        json!({"run": "rescue", "task": "parser"}),
    )]);
    let out = rescued(&store, &clis, dir.path(), "openai", &model);
    let results = tool_results(&asked);
    assert!(out.status.success(), "{}\n{results:?}", text(&out));
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].0.contains("the parser drops the last line"),
        "{results:?}"
    );
}
