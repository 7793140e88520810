//! Real agents through the gateway, as a user would wire them: the Claude Code and Codex CLIs
//! (pinned; `.ci/run` installs them with npm) and the official `openai` and `anthropic` Python
//! SDKs, each a task's agent. The model is scripted here (no network): it asks for one tool
//! call (Claude Code's `Write`, Codex's `exec_command`) and, once given its result, says it is
//! done. Everything else is real: the agents, their tools, the worktree, the runner, the store.

mod common;
use axum::body::Bytes;
use axum::http::Uri;
use axum::response::{IntoResponse, Response};
use common::git::{git, repository};
use common::provider::{logged, serve, sse};
use common::{agent_clis, runlog, text};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

const ANTHROPIC_KEY: &str = "sk-ant-api03-the-runners-own-key-0123456789";
const OPENAI_KEY: &str = "sk-proj-the-runners-own-openai-key-0123456789";

/// aider (`RUNLOG_AIDER`, else the venv `.ci/run` fills), said as `agent_clis` says it.
fn aider() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("RUNLOG_AIDER").map(PathBuf::from),
        std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/runlog-aider/bin/aider")),
    ];
    let found = candidates.into_iter().flatten().find(|p| p.exists());
    if found.is_none() {
        let why = "the aider test needs aider \
                   (python3 -m venv ~/.cache/runlog-aider && ~/.cache/runlog-aider/bin/pip install aider-chat==0.86.2; \
                   bash .ci/run installs it; or point RUNLOG_AIDER at its `aider` command)";
        assert!(std::env::var_os("RUNLOG_REQUIRE_AGENTS").is_none(), "{why}");
        eprintln!("SKIPPED: {why}");
    }
    found
}

/// What the scripted model was asked: each call's path and the key it came with.
type Asked = Arc<Mutex<Vec<(String, String)>>>;

/// The scripted model, speaking Messages, Responses and Chat Completions, streamed and not.
fn scripted_model() -> (String, Asked) {
    let asked: Asked = Arc::default();
    let seen = asked.clone();
    let app = axum::Router::new().fallback(
        move |uri: Uri, headers: axum::http::HeaderMap, body: Bytes| {
            let seen = seen.clone();
            async move {
                let key = ["x-api-key", "authorization"]
                    .iter()
                    .find_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
                    .unwrap_or_default()
                    .trim_start_matches("Bearer ")
                    .to_owned();
                seen.lock().unwrap().push((uri.path().to_owned(), key));
                let asked: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                answer(uri.path(), &asked)
            }
        },
    );
    (serve(app), asked)
}

fn answer(path: &str, asked: &Value) -> Response {
    let streamed = asked["stream"] == true;
    match path {
        "/v1/messages/count_tokens" => axum::Json(json!({"input_tokens": 10})).into_response(),
        "/v1/messages" => messages(asked, streamed),
        "/v1/responses" => responses(asked, streamed),
        "/v1/chat/completions" => chat(asked, streamed),
        _ => (axum::http::StatusCode::NOT_FOUND, "not scripted").into_response(),
    }
}

fn event_stream(body: String) -> Response {
    ([("content-type", "text/event-stream")], body).into_response()
}

/// The working directory an agent reports to its model, as real models read it: Claude Code's
/// "Primary working directory: …" in a system reminder, Codex's `<cwd>…</cwd>`.
fn working_directory(asked: &Value) -> String {
    let text = asked.to_string();
    let after = |marker: &str, end: char| {
        let at = text.find(marker)? + marker.len();
        let rest = text.get(at..)?;
        Some(rest.get(..rest.find([end, '\\'])?)?.trim().to_owned())
    };
    after("Primary working directory:", '\\')
        .or_else(|| after("<cwd>", '<'))
        .expect("the agent reports its working directory")
}

/// Where the model has its agent write `hello.txt`: where the task's prompt says ("write
/// hello.txt at PATH"), else in the working directory the agent reports.
fn target(asked: &Value) -> String {
    let text = asked.to_string();
    let marker = "write hello.txt at ";
    match text
        .find(marker)
        .and_then(|at| text.get(at + marker.len()..))
    {
        Some(rest) => rest
            .get(..rest.find(['"', '\'', ' ', '\\']).unwrap_or(rest.len()))
            .unwrap_or_default()
            .to_owned(),
        None => match task_asked(asked) {
            Some(task) => format!("{}/hello-{task}.txt", working_directory(asked)),
            None => format!("{}/hello.txt", working_directory(asked)),
        },
    }
}

/// The task a prompt names ("… for task b"), if it names one.
fn task_asked(asked: &Value) -> Option<String> {
    let text = asked.to_string();
    let rest = text.get(text.find("for task ")? + "for task ".len()..)?;
    Some(
        rest.chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect(),
    )
}

/// What the model writes: good work, but `claude-small` breaks task b's.
fn content(asked: &Value) -> &'static str {
    if asked["model"] == "claude-small" && task_asked(asked).as_deref() == Some("b") {
        "broken\n"
    } else {
        "hello from the model\n"
    }
}

/// `text` as a real stream sends it: in pieces of a few characters, cut anywhere.
fn pieces(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(7).map(|c| c.iter().collect()).collect()
}

/// Asks for Claude Code's `Write` while it offers it and has no result of it, by absolute path
/// in the working directory Claude Code reports (its `Write` takes no other); then says done.
/// Each answer counts 1,000 input and 20 output tokens.
fn messages(asked: &Value, streamed: bool) -> Response {
    let offers_write = asked["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "Write"));
    let has_result = asked["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_array())
        .is_some_and(|c| c.iter().any(|c| c["type"] == "tool_result"));
    let (block, deltas, stop) = if offers_write && !has_result {
        let input = json!({"file_path": target(asked), "content": content(asked)});
        (
            json!({"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}),
            pieces(&input.to_string())
                .into_iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                .collect(),
            "tool_use",
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            vec![json!({"type": "text_delta", "text": "done"})],
            "end_turn",
        )
    };
    let message = json!({"id": "msg_1", "type": "message", "role": "assistant",
        "model": "claude-scripted", "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": 1000, "output_tokens": 1}});
    if !streamed {
        let mut whole = message;
        whole["content"] = json!([{"type": "text", "text": "done"}]);
        whole["stop_reason"] = json!(stop);
        whole["usage"]["output_tokens"] = json!(20);
        return axum::Json(whole).into_response();
    }
    let mut events = vec![
        json!({"type": "message_start", "message": message}),
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
    ];
    events.extend(
        deltas
            .into_iter()
            .map(|delta| json!({"type": "content_block_delta", "index": 0, "delta": delta})),
    );
    events.extend([
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 20}}),
        json!({"type": "message_stop"}),
    ]);
    event_stream(sse(&events))
}

/// Asks for Codex's `exec_command` while it offers it and has no output of it, writing by
/// absolute path in the working directory Codex reports and naming it as the `workdir`; then
/// says done. Each answer counts 500 input and 10 output tokens.
fn responses(asked: &Value, streamed: bool) -> Response {
    let offers_exec = asked["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["name"] == "exec_command"));
    let has_output = asked["input"]
        .as_array()
        .is_some_and(|i| i.iter().any(|i| i["type"] == "function_call_output"));
    let call = offers_exec && !has_output;
    let item = if call {
        let dir = working_directory(asked);
        let arguments = json!({"cmd": format!("echo hello > {}", target(asked)), "workdir": dir});
        json!({"type": "function_call", "id": "fc_1", "call_id": "call_1", "status": "completed",
               "name": "exec_command", "arguments": arguments.to_string()})
    } else {
        json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
               "content": [{"type": "output_text", "text": "done", "annotations": []}]})
    };
    let response = json!({"id": "resp_1", "object": "response", "created_at": 1_700_000_000,
        "model": "gpt-scripted", "status": "in_progress", "output": []});
    let mut done = response.clone();
    done["status"] = json!("completed");
    done["output"] = json!([item]);
    done["usage"] = json!({"input_tokens": 500, "output_tokens": 10, "total_tokens": 510,
        "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}});
    if !streamed {
        return axum::Json(done).into_response();
    }
    let mut events = vec![json!({"type": "response.created", "response": response})];
    if call {
        let mut added = item.clone();
        added["arguments"] = json!("");
        added["status"] = json!("in_progress");
        events
            .push(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
        events.extend(
            pieces(item["arguments"].as_str().unwrap_or_default())
                .into_iter()
                .map(|p| {
                    json!({"type": "response.function_call_arguments.delta",
                               "item_id": "fc_1", "output_index": 0, "delta": p})
                }),
        );
    } else {
        events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": item}));
    }
    events.extend([
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": done}),
    ]);
    event_stream(sse(&events))
}

/// Says done; 50 prompt and 5 completion tokens.
/// Says done; asked to write hello.txt (aider), gives the file whole, as aider's `whole` edit
/// format reads it. Each answer counts 50 input and 5 output tokens.
fn chat(asked: &Value, streamed: bool) -> Response {
    let content = if asked["messages"].to_string().contains("write hello.txt") {
        "hello.txt\n```\nhello from aider\n```\n"
    } else {
        "done"
    };
    let usage = json!({"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55});
    let head = json!({"id": "chatcmpl-1", "created": 1_700_000_000, "model": "gpt-scripted"});
    let with = |extra: Value| {
        let mut v = head.clone();
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    if !streamed {
        return axum::Json(with(json!({"object": "chat.completion", "usage": usage,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}]})))
        .into_response();
    }
    let chunks = [
        with(
            json!({"object": "chat.completion.chunk", "choices": [{"index": 0,
            "delta": {"role": "assistant", "content": content}, "finish_reason": null}]}),
        ),
        with(
            json!({"object": "chat.completion.chunk", "choices": [{"index": 0,
            "delta": {}, "finish_reason": "stop"}]}),
        ),
        with(json!({"object": "chat.completion.chunk", "choices": [], "usage": usage})),
    ];
    let mut body: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
    body.push_str("data: [DONE]\n\n");
    event_stream(body)
}

/// `runlog run` of the repository's `wf.toml`, as run `run`, with the real keys in the
/// runner's environment and the agents' CLIs on its PATH.
fn run_in(dir: &Path, repo: &Path, run: &str, clis: Option<&Path>) -> std::process::Output {
    runlog_for_agents(dir, clis)
        .args(["run", repo.join("wf.toml").to_str().unwrap()])
        .args(["--run-id", run, "--quiet"])
        .output()
        .unwrap()
}

/// `runlog` on the store in `dir`, with the real keys in the runner's environment and the
/// agents' CLIs on its PATH.
fn runlog_for_agents(dir: &Path, clis: Option<&Path>) -> Command {
    let (home, codex_home) = (dir.join("home"), dir.join("codex-home"));
    for d in [&home, &codex_home] {
        std::fs::create_dir_all(d).unwrap();
    }
    let mut path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(clis) = clis {
        path = std::env::join_paths(
            std::iter::once(clis.to_path_buf()).chain(std::env::split_paths(&path)),
        )
        .unwrap();
    }
    let mut command = runlog(&dir.join("store"));
    command
        .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        .env("OPENAI_API_KEY", OPENAI_KEY)
        .env("HOME", &home)
        .env("CODEX_HOME", codex_home)
        .env("PATH", path)
        // Offline here: Claude Code's updates and reports have nowhere to go.
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    command
}

/// `run_in`, which must succeed (else what the run's commands printed is said): the store.
fn ran(dir: &Path, repo: &Path, run: &str, clis: Option<&Path>) -> PathBuf {
    let out = run_in(dir, repo, run, clis);
    let store = dir.join("store");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out),
        printed(&store, run)
    );
    store
}

/// The workflow of one task running `command`, its model at `provider`.
fn one_task(name: &str, command: &str, provider: &str) -> String {
    format!(
        "name = \"{name}\"\n[[task]]\nid = \"{name}\"\nrun = {command:?}\nrequires_testing = false\n\
         [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n\
         [providers.openai]\nkind = \"openai\"\nbase_url = \"{provider}\"\n\
         [prices.\"claude-scripted\"]\ninput = 3.0\noutput = 15.0\n\
         [prices.\"gpt-scripted\"]\ninput = 2.0\noutput = 8.0\n"
    )
}

/// The run's total cost as `runlog --json cost` gives it.
fn total_cost(store: &Path, run: &str) -> f64 {
    let cost = runlog(store)
        .args(["--json", "cost", run])
        .output()
        .unwrap();
    assert!(cost.status.success(), "{}", text(&cost));
    let last: Value = serde_json::from_str(
        String::from_utf8_lossy(&cost.stdout)
            .lines()
            .last()
            .unwrap(),
    )
    .unwrap();
    last["total"]["cost_usd"].as_f64().unwrap()
}

/// What the run's commands printed, to show beside a failure.
fn printed(store: &Path, run: &str) -> String {
    logged(store, run, &["--kind", "output-recorded"])
        .iter()
        .filter_map(|e| e["text"].as_str().map(str::to_owned))
        .collect()
}

fn blob(store: &Path, body: &Value) -> String {
    let log = common::open(store);
    let hash = runlog_core::Hash::from_hex(body["blob"].as_str().unwrap()).unwrap();
    let bytes = runlog_store::EventLog::get_blob(&log, &hash.0)
        .unwrap()
        .unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[test]
fn claude_code_writes_a_file_through_the_gateway_and_every_call_is_recorded() {
    let Some(clis) = agent_clis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let env_seen = dir.path().join("env-seen.txt");
    let command = format!(
        "env > {}; claude -p 'write hello.txt' --output-format json --allowedTools Write",
        env_seen.display()
    );
    let repo = repository(
        dir.path(),
        &[("wf.toml", &one_task("claude", &command, &provider))],
    );
    let store = ran(dir.path(), &repo, "claude", Some(&clis));

    // Its tool call wrote the file in the task's worktree, and the run merged it.
    assert_eq!(
        git(&repo, &["show", "runlog/claude:hello.txt"]),
        "hello from the model"
    );

    // Both calls are recorded, streamed, with the request sent and the events received.
    let calls = logged(&store, "claude", &["--kind", "model-called"]);
    let messages: Vec<&Value> = calls.iter().filter(|c| c["api"] == "messages").collect();
    assert_eq!(messages.len(), 2, "{calls:?}");
    for call in &messages {
        assert_eq!(
            (&call["status"], &call["streamed"], &call["model"]),
            (&json!(200), &json!(true), &json!("claude-scripted")),
            "{call}"
        );
    }
    assert!(blob(&store, &messages[0]["request"]).contains("write hello.txt"));
    assert!(blob(&store, &messages[0]["response"]).contains("\"name\":\"Write\""));
    assert!(blob(&store, &messages[1]["request"]).contains("tool_result"));

    // Measured: 2,000 input tokens at $3 and 40 output at $15 a million. Claude Code's own
    // closing line is kept as its claim, beside the measure, never added to it.
    assert!((total_cost(&store, "claude") - 0.0066).abs() < 1e-9);
    let claims = logged(&store, "claude", &["--kind", "usage-claimed"]);
    assert_eq!(claims.len(), 1, "Claude Code's closing line: {claims:?}");

    // The agent held a key of its own; the scripted model saw only the runner's.
    let env = std::fs::read_to_string(&env_seen).unwrap();
    assert!(
        !env.contains(ANTHROPIC_KEY) && !env.contains(OPENAI_KEY),
        "{env}"
    );
    let keys: Vec<String> = asked
        .lock()
        .unwrap()
        .iter()
        .map(|(_, k)| k.clone())
        .collect();
    assert!(
        !keys.is_empty() && keys.iter().all(|k| k == ANTHROPIC_KEY),
        "{keys:?}"
    );

    // The web view's tests read this run's conversation: `RUNLOG_WRITE_FIXTURE=1` records it
    // again as `fixtures/runs/claude.jsonl` (the export carries the calls' bodies).
    if std::env::var_os("RUNLOG_WRITE_FIXTURE").is_some() {
        let fixture = common::repo().join("fixtures/runs/claude.jsonl");
        let out = runlog(&store)
            .args(["export", "claude", "-o", fixture.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
}

#[test]
fn a_strict_rerun_of_claude_code_reaches_no_provider_and_makes_the_same_tree_twice() {
    let Some(clis) = agent_clis() else { return };
    let command = "claude -p 'write hello.txt' --output-format json --allowedTools Write";
    rerun_strictly_twice(&clis, "claude", command);
}

#[test]
fn a_strict_rerun_of_codex_reaches_no_provider_and_makes_the_same_tree_twice() {
    let Some(clis) = agent_clis() else { return };
    rerun_strictly_twice(&clis, "codex", CODEX);
}

/// Every file under `dir`, relative to it.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                todo.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found
}

/// Runs the one-task workflow of `command` (whose model writes `hello.txt` by the absolute
/// path its agent reports), then reruns it twice with recorded answers: no call reaches the
/// provider, each rerun makes the same tree and the same events, nothing is written under the
/// recorded run's worktrees, and each answer naming the recorded run's places is recorded as
/// given in the rerun's.
fn rerun_strictly_twice(clis: &Path, run: &str, command: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let repo = repository(
        dir.path(),
        &[("wf.toml", &one_task(run, command, &provider))],
    );
    let store = ran(dir.path(), &repo, run, Some(clis));
    let called = asked.lock().unwrap().len();
    assert!(!git(&repo, &["show", &format!("runlog/{run}:hello.txt")]).is_empty());
    let tree = |branch: &str| git(&repo, &["rev-parse", &format!("{branch}^{{tree}}")]);
    let recorded_worktrees = store.join("worktrees").join(run);
    let left_by_the_run = files_under(&recorded_worktrees);
    let kinds = |run: &str, from: u64| -> Vec<String> {
        logged(&store, run, &["--from", &(from + 1).to_string()])
            .iter()
            // Whether the agent's CLI leaves a helper process behind as it exits is a race of
            // its own (Codex's sometimes are gone in time): runlog's note of it is no answer.
            .filter(|e| {
                !(e["from"] == "runlog"
                    && e["text"]
                        .as_str()
                        .is_some_and(|t| t.contains("leaving processes of its group running")))
            })
            .map(|e| format!("{} {}", e["type"], e["task"]))
            // What a rerun records of itself: its fork, its record, its resume, the
            // integration branch of its own that it opens, and its answers' places mapped.
            .filter(|k| {
                [
                    "forked",
                    "rerun-started",
                    "run-resumed",
                    "workspace-opened",
                    "answer-mapped",
                ]
                .iter()
                .all(|own| !k.starts_with(&format!("\"{own}\"")))
            })
            .collect()
    };

    for again in [format!("{run}-again-1"), format!("{run}-again-2")] {
        let out = runlog_for_agents(dir.path(), Some(clis))
            .args(["rerun", run, "--as", &again, "--quiet"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}\n{}",
            text(&out),
            printed(&store, &again)
        );
        assert_eq!(
            asked.lock().unwrap().len(),
            called,
            "no call reached the provider"
        );
        assert_eq!(
            tree(&format!("runlog/{again}")),
            tree(&format!("runlog/{run}")),
            "the same tree"
        );
        assert_eq!(
            files_under(&recorded_worktrees),
            left_by_the_run,
            "nothing written under the recorded run's worktrees"
        );
        let calls = logged(&store, &again, &["--kind", "model-called"]);
        assert!(
            !calls.is_empty() && calls.iter().all(|c| c["end"]["end"] == "replayed"),
            "{calls:?}"
        );
        let from = logged(&store, &again, &["--kind", "rerun-started"])[0]["from_seq"]
            .as_u64()
            .unwrap();
        assert_eq!(kinds(&again, 0), kinds(run, from), "the same events");

        // The answer that named the recorded run's worktree was given the rerun's, and says so.
        let mapped = logged(&store, &again, &["--kind", "answer-mapped"]);
        let was = format!("{}/worktrees/{run}", store.display());
        let now = format!("{}/worktrees/{again}", store.display());
        assert!(
            mapped.iter().any(|m| m["mapped"][0]["was"] == json!(was) && m["mapped"][0]["now"] == json!(now)),
            "{mapped:?}"
        );
        let shown = runlog(&store)
            .args(["show", &again, run, "--calls"])
            .output()
            .unwrap();
        assert!(
            text(&shown).contains(&format!(
                "mapped: the recorded answer, in this run's places: {was} → {now}"
            )),
            "{}",
            text(&shown)
        );
        assert!(logged(&store, &again, &["--kind", "wrote-outside"]).is_empty());
    }
}

/// Codex reads its model's address from its provider configuration, not the environment: the
/// wiring docs/agents.md gives, `RUNLOG_GATEWAY` in a `-c model_providers...` override.
const CODEX: &str = r#"codex exec --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -m gpt-scripted -c model_provider=runlog -c "model_providers.runlog={name=\"runlog\", base_url=\"$RUNLOG_GATEWAY/v1\", env_key=\"OPENAI_API_KEY\", wire_api=\"responses\"}" 'write hello.txt'"#;

#[test]
fn codex_runs_its_tool_call_through_the_gateway_and_every_call_is_recorded() {
    let Some(clis) = agent_clis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let repo = repository(
        dir.path(),
        &[("wf.toml", &one_task("codex", CODEX, &provider))],
    );
    let store = ran(dir.path(), &repo, "codex", Some(&clis));

    // The command it was asked to run ran in the task's worktree, and the run merged its file.
    assert_eq!(git(&repo, &["show", "runlog/codex:hello.txt"]), "hello");

    let calls = logged(&store, "codex", &["--kind", "model-called"]);
    let turns: Vec<&Value> = calls.iter().filter(|c| c["api"] == "responses").collect();
    assert_eq!(turns.len(), 2, "{calls:?}");
    for call in &turns {
        assert_eq!(
            (&call["tokens"]["input"], &call["tokens"]["output"]),
            (&json!(500), &json!(10)),
            "{call}"
        );
    }
    assert!(blob(&store, &turns[1]["request"]).contains("function_call_output"));
    // 1,000 input tokens at $2 and 20 output at $8 a million.
    assert!((total_cost(&store, "codex") - 0.00216).abs() < 1e-9);
    assert!(asked.lock().unwrap().iter().all(|(_, k)| k == OPENAI_KEY));
}

/// aider off the network: litellm's price list from its own copy, no update check, no
/// analytics, no questions, its histories out of the worktree, and no commits of its own
/// (runlog records the attempt's changes).
const AIDER: &str = "LITELLM_LOCAL_MODEL_COST_MAP=True aider --model openai/gpt-scripted --edit-format whole \
    --no-check-update --analytics-disable --no-show-release-notes --no-show-model-warnings --yes-always \
    --no-auto-commits --no-gitignore --map-tokens 0 \
    --chat-history-file \"$HOME/aider.chat.md\" --input-history-file \"$HOME/aider.input\" \
    --message 'write hello.txt' hello.txt";

#[test]
fn aider_edits_a_file_through_the_gateway_and_its_call_is_recorded() {
    let Some(aider) = aider() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let repo = repository(
        dir.path(),
        &[("wf.toml", &one_task("aider", AIDER, &provider))],
    );
    let store = ran(dir.path(), &repo, "aider", aider.parent());

    // Its edit landed in the task's worktree, and the run merged it.
    assert_eq!(
        git(&repo, &["show", "runlog/aider:hello.txt"]),
        "hello from aider"
    );
    let calls = logged(&store, "aider", &["--kind", "model-called"]);
    assert_eq!(calls.len(), 1, "{calls:?}");
    let call = &calls[0];
    assert_eq!(
        (&call["api"], &call["streamed"], &call["status"]),
        (&json!("chat-completions"), &json!(true), &json!(200)),
        "{call}"
    );
    assert_eq!(
        (&call["tokens"]["input"], &call["tokens"]["output"]),
        (&json!(50), &json!(5)),
        "{call}"
    );
    assert!(blob(&store, &call["request"]).contains("write hello.txt"));
    // 50 input tokens at $2 and 5 output at $8 a million.
    assert!((total_cost(&store, "aider") - 0.00014).abs() < 1e-9);
    assert!(asked.lock().unwrap().iter().all(|(_, k)| k == OPENAI_KEY));
}

/// An agent written with the official SDKs, given nothing but the environment they read.
const SDK_AGENT: &str = r#"
import anthropic, openai
ask = [{"role": "user", "content": "plan it"}]
a = anthropic.Anthropic()
print("anthropic:", a.messages.create(model="claude-x", max_tokens=64, messages=ask).content[0].text)
with a.messages.stream(model="claude-x", max_tokens=64, messages=ask) as s:
    print("anthropic streamed:", s.get_final_text())
o = openai.OpenAI()
print("openai:", o.chat.completions.create(model="gpt-x", messages=ask).choices[0].message.content)
chunks = o.chat.completions.create(model="gpt-x", messages=ask, stream=True,
                                   stream_options={"include_usage": True})
print("openai streamed:", "".join(c.choices[0].delta.content or "" for c in chunks if c.choices))
print("openai responses:", o.responses.create(model="gpt-x", input="plan it").output_text)
"#;

#[test]
fn the_official_sdks_reach_the_model_through_the_gateway_streamed_and_not() {
    if !common::sdks_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (provider, _) = scripted_model();
    let repo = repository(
        dir.path(),
        &[
            ("agent.py", SDK_AGENT),
            ("wf.toml", &one_task("sdks", "python3 agent.py", &provider)),
        ],
    );
    let store = ran(dir.path(), &repo, "sdks", None);

    let said = printed(&store, "sdks");
    for line in [
        "anthropic: done",
        "anthropic streamed: done",
        "openai: done",
        "openai streamed: done",
        "openai responses: done",
    ] {
        assert!(said.contains(line), "{line:?} not in {said}");
    }
    let calls = logged(&store, "sdks", &["--kind", "model-called"]);
    let shape: Vec<(String, bool, u64, u64)> = calls
        .iter()
        .map(|c| {
            (
                c["api"].as_str().unwrap().to_owned(),
                c["streamed"] == true,
                c["tokens"]["input"].as_u64().unwrap_or(0),
                c["tokens"]["output"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("messages".into(), false, 1000, 20),
            ("messages".into(), true, 1000, 20),
            ("chat-completions".into(), false, 50, 5),
            ("chat-completions".into(), true, 50, 5),
            ("responses".into(), false, 500, 10),
        ],
        "{calls:?}"
    );
}

/// An agent looping on the Anthropic SDK until it raises.
const LOOPING_SDK_AGENT: &str = r#"
import anthropic, sys
client = anthropic.Anthropic()
for n in range(1, 11):
    try:
        client.messages.create(model="claude-x", max_tokens=64,
                               messages=[{"role": "user", "content": f"try {n}"}])
        print(f"call {n} answered")
    except anthropic.APIStatusError as e:
        print(f"call {n} raised {type(e).__name__} {e.status_code}: {e.message}")
        sys.exit(1)
"#;

#[test]
fn a_budget_that_cannot_cover_the_next_call_makes_the_sdk_raise_before_it_is_sent() {
    if !common::sdks_found() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    // Each answer: 1,000 input tokens at $3 and 20 output at $15 a million, $0.0033. A call's
    // worst case (its 100-odd bytes and the provider's allowance of 1,024 as input, 64 output)
    // is $0.0043: the first fits the $0.005, the second does not beside the $0.0033 spent.
    let wf = format!(
        "{}[settings]\nmax_cost_usd = 0.005\n",
        one_task("looping", "python3 agent.py", &provider)
    );
    let repo = repository(
        dir.path(),
        &[("agent.py", LOOPING_SDK_AGENT), ("wf.toml", &wf)],
    );
    let out = run_in(dir.path(), &repo, "looping", None);
    let store = dir.path().join("store");
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    let said = printed(&store, "looping");
    assert!(said.contains("call 1 answered"), "{said}");
    assert!(said.contains("call 2 raised"), "{said}");
    assert!(
        said.contains(" 402: ") && said.contains("runlog budget looping --max-cost-usd USD"),
        "{said}"
    );
    let messages = asked
        .lock()
        .unwrap()
        .iter()
        .filter(|(path, _)| path == "/v1/messages")
        .count();
    assert_eq!(messages, 1, "the provider saw one call, never the second");
    let calls = logged(&store, "looping", &["--kind", "model-called"]);
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1]["end"]["end"], "over-budget", "{:?}", calls[1]);
    let failed = logged(&store, "looping", &["--kind", "task-failed"]);
    assert!(
        failed[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("budget-spent"),
        "{failed:?}"
    );
}

/// The agent `run` told to write into the person's checkout (`write hello.txt at PATH`): its
/// directory (the store and the checkout are in it), and the run's `wrote-outside` records.
fn told_to_write_outside(
    clis: &Path,
    name: &str,
    command: &str,
) -> (tempfile::TempDir, PathBuf, PathBuf, Vec<Value>) {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path().to_path_buf();
    let (provider, _) = scripted_model();
    let checkout = dir.join("repo");
    let command = command.replace(
        "'write hello.txt'",
        &format!("'write hello.txt at {}/hello.txt'", checkout.display()),
    );
    let repo = repository(&dir, &[("wf.toml", &one_task(name, &command, &provider))]);
    let store = ran(&dir, &repo, name, Some(clis));
    let said = logged(&store, name, &["--kind", "wrote-outside"]);
    (temp, store, checkout, said)
}

/// The unconfined agent wrote `hello.txt` into the checkout, and runlog named it there.
fn wrote_into_the_checkout(checkout: &Path, said: &[Value]) {
    assert!(checkout.join("hello.txt").exists());
    assert_eq!(
        said[0]["written"],
        json!([{"place": {"place": "checkout"}, "paths": ["hello.txt"], "more": 0}]),
        "{said:?}"
    );
}

/// The `run` of the task docs/agents.md shows after `<!-- tested: LABEL -->`.
fn documented(label: &str) -> String {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/agents.md")).unwrap();
    let marker = format!("<!-- tested: {label} -->");
    let after = page
        .split_once(&marker)
        .expect("the example is on the page")
        .1;
    let block = after
        .split_once("```toml\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("a toml block follows")
        .0;
    let workflow: toml::Table = toml::from_str(block).unwrap();
    workflow["task"][0]["run"].as_str().unwrap().to_owned()
}

/// The last request of `run`'s agent: what its model was told last, tool results and all.
fn last_request(store: &Path, run: &str) -> String {
    let calls = logged(store, run, &["--kind", "model-called"]);
    blob(store, &calls.last().unwrap()["request"])
}

#[test]
fn claude_code_unconfined_writes_into_the_checkout_and_runlog_names_it_confined_it_is_refused() {
    let Some(clis) = agent_clis() else { return };
    let open = "claude -p 'write hello.txt' --output-format json --allowedTools Write";
    let (_dir, _, checkout, said) = told_to_write_outside(&clis, "open", open);
    wrote_into_the_checkout(&checkout, &said);

    let confined = documented("confined claude");
    let (_dir, store, checkout, said) = told_to_write_outside(&clis, "confined", &confined);
    assert!(!checkout.join("hello.txt").exists());
    assert!(said.is_empty(), "{said:?}");
    let refused = format!(
        "Claude requested permissions to write to {}/hello.txt, but you haven't granted it yet",
        checkout.display()
    );
    assert!(last_request(&store, "confined").contains(&refused));
}

#[test]
fn codex_unconfined_writes_into_the_checkout_and_runlog_names_it_confined_it_is_refused() {
    let Some(clis) = agent_clis() else { return };
    let (_dir, _, checkout, said) = told_to_write_outside(&clis, "open", CODEX);
    wrote_into_the_checkout(&checkout, &said);

    // The page's command with the scripted model named: for its own default model Codex
    // offers other tools than the scripted model asks for.
    let confined =
        documented("confined codex").replacen("codex exec", "codex exec -m gpt-scripted", 1);
    let (_dir, store, checkout, said) = told_to_write_outside(&clis, "confined", &confined);
    assert!(!checkout.join("hello.txt").exists());
    assert!(said.is_empty(), "{said:?}");
    let refused = format!("{}/hello.txt: Read-only file system", checkout.display());
    assert!(
        last_request(&store, "confined").contains(&refused),
        "{}",
        printed(&store, "confined")
    );
}

/// The experiment of issue 76 with the real Claude Code: three recorded runs of three tasks,
/// each asking `claude-big`; a variant maps it to `claude-small`, which breaks task b.
#[test]
fn an_experiment_of_claude_code_on_another_model_names_the_task_it_breaks() {
    let Some(clis) = agent_clis() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (provider, asked) = scripted_model();
    let mut wf = format!(
        "name = \"hello\"\n[settings]\nmax_test_retries = 0\n\
         [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n\
         [prices.\"claude-scripted\"]\ninput = 3.0\noutput = 15.0\n"
    );
    for task in ["a", "b", "c"] {
        wf.push_str(&format!(
            "[[task]]\nid = \"{task}\"\nrun = \"claude -p 'write hello.txt for task {task}' --model claude-big --output-format json --allowedTools Write\"\n\
             test = \"grep -q hello hello-{task}.txt\"\n"
        ));
    }
    let repo = repository(dir.path(), &[("wf.toml", &wf)]);
    for run in ["day-1", "day-2", "day-3"] {
        ran(dir.path(), &repo, run, Some(&clis));
    }
    let store = dir.path().join("store");
    let before = asked.lock().unwrap().len();
    std::fs::write(
        dir.path().join("small.toml"),
        "[gateway.models]\n\"claude-big\" = \"claude-small\"\n",
    )
    .unwrap();
    let out = runlog_for_agents(dir.path(), Some(&clis))
        .args([
            "--json",
            "experiment",
            "run",
            "smaller",
            "--runs",
            "day-1,day-2,day-3",
            "--variant",
        ])
        .arg(format!("small={}", dir.path().join("small.toml").display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        asked.lock().unwrap().len() > before,
        "the mapped calls went to the provider"
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let small = &report["figures"]["variants"][1];
    assert_eq!(small["name"], "small");
    let broken: Vec<String> = small["broken"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}/{}",
                f["run"].as_str().unwrap(),
                f["task"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(broken, ["day-1/b", "day-2/b", "day-3/b"]);
    assert_eq!(
        (
            small["pass_rate"]["k"].as_u64(),
            small["pass_rate"]["n"].as_u64()
        ),
        (Some(6), Some(9))
    );
    // The broken task's rerun asked the provider for claude-small, and recorded the request
    // as Claude Code sent it (asking claude-big).
    let calls = logged(
        &store,
        "smaller.small.day-1.1",
        &["--kind", "model-called", "--task", "b"],
    );
    let messages: Vec<&Value> = calls.iter().filter(|c| c["api"] == "messages").collect();
    assert!(!messages.is_empty(), "{calls:?}");
    assert!(
        messages.iter().all(|c| c["end"] != "replayed"),
        "{messages:?}"
    );
    assert!(blob(&store, &messages[0]["request"]).contains("claude-big"));
    // Against statsmodels and scipy, computed here.
    if !common::scipy_found() {
        return;
    }
    let check = std::process::Command::new("python3")
        .args(["-c", "from statsmodels.stats.proportion import proportion_confint\nfrom scipy.stats import binomtest\nlo, hi = proportion_confint(6, 9, alpha=0.05, method='wilson')\nprint(lo, hi, binomtest(0, 3, 0.5).pvalue)"])
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "statsmodels and scipy (.ci/run installs them in the pytest venv): {}",
        text(&check)
    );
    let want: Vec<f64> = String::from_utf8_lossy(&check.stdout)
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    let got = [
        &small["pass_rate"]["low"],
        &small["pass_rate"]["high"],
        &small["sign_test_p"],
    ];
    for (g, w) in got.iter().zip(&want) {
        assert!(
            (g.as_f64().unwrap() - w).abs() < 1e-9,
            "{got:?} vs {want:?}"
        );
    }
}
