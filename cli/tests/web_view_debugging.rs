//! The web view's views for debugging an agent, in a real browser (`common::browser`): a task's
//! model calls as a conversation (on a recorded run of the real Claude Code CLI), the Timeline
//! tab of a run over wall-clock time, and two conversations side by side (a run and its rerun).

mod common;

use common::browser::{
    browse, browser_parts, click_css, driver, import, js, run_url, screenshot, serve, stop,
    wait_css,
};
use common::{repo, runlog, text, workflow};
use serde_json::{json, Value};
use std::path::Path;

/// `runlog --json ARGS` on the store, one JSON value.
fn cli_json(store: &Path, args: &[&str]) -> Value {
    let out = runlog(store).arg("--json").args(args).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `runlog --json log RUN`: each event, in seq order.
fn events_of(store: &Path, run: &str) -> Vec<Value> {
    let out = runlog(store).args(["--json", "log", run]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_claude_code_runs_conversation_shows_the_prompt_the_write_call_its_result_and_each_calls_cost()
{
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // Recorded through the gateway from the real Claude Code CLI (cli/tests/real_agents.rs).
    import(&store, "claude");
    let cli = cli_json(&store, &["show", "claude", "claude", "--calls"]);
    let costs: Vec<Value> = cli["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cost_usd"].clone())
        .collect();
    assert_eq!(costs.len(), 2, "{cli}");
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&format!("{base}/runs/claude?task=claude"))
            .await
            .unwrap();
        wait_css(&c, "#conversation section.call").await;
        let shown = js(
            &c,
            "return [...document.querySelectorAll('#conversation section.call')].map(s => ({ \
               seq: Number(s.dataset.seq), cost: Number(s.dataset.cost), \
               figures: Object.fromEntries([...s.querySelectorAll('dd')].map(d => [d.dataset.figure, d.textContent])), \
               user: [...s.querySelectorAll('.turn.role-user.added')].map(t => \
                 [...t.children].filter(p => p.tagName === 'PRE').map(p => p.textContent)), \
               reminders: [...s.querySelectorAll('details.reminder')].map(r => r.open), \
               system: [...s.querySelectorAll('details.system')].map(r => r.open), \
               calls: [...s.querySelectorAll('.tool-call')].map(t => [t.dataset.tool, t.querySelector('pre').textContent]), \
               results: [...s.querySelectorAll('.tool-result')].map(t => t.textContent), \
               kept: s.querySelector('.kept')?.textContent ?? null }));",
        )
        .await;
        let calls = shown.as_array().unwrap();
        assert_eq!(calls.len(), 2, "{shown}");
        // Each call's cost is the one `runlog show --calls --json` gives.
        for (call, cost) in calls.iter().zip(&costs) {
            assert_eq!(call["cost"].as_f64(), cost.as_f64(), "{call}");
            assert_eq!(
                call["figures"]["cost"],
                json!(format!("${:.4}", cost.as_f64().unwrap()))
            );
            assert_eq!(call["figures"]["model"], "claude-scripted", "{call}");
        }
        // The person's prompt is the user's turn; Claude Code's reminders and its system
        // prompt are there, folded.
        let first = &calls[0];
        assert_eq!(first["user"], json!([["write hello.txt"]]), "{first}");
        assert!(
            !first["reminders"].as_array().unwrap().is_empty()
                && first["reminders"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|open| open == false),
            "{first}"
        );
        assert!(!first["system"].as_array().unwrap().is_empty(), "{first}");
        // The model's answer is a call of Write with its file_path.
        let (tool, arguments) = (&first["calls"][0][0], &first["calls"][0][1]);
        assert_eq!(tool, "Write", "{first}");
        let arguments: Value = serde_json::from_str(arguments.as_str().unwrap()).unwrap();
        assert!(
            arguments["file_path"]
                .as_str()
                .unwrap()
                .ends_with("/hello.txt"),
            "{arguments}"
        );
        // The second call sends the conversation again: only its new turn (the result of
        // Write) is shown, the rest named as the first call's.
        let second = &calls[1];
        let result = second["results"][0].as_str().unwrap();
        assert!(
            result.starts_with("tool result of Write") && result.contains("File created"),
            "{second}"
        );
        assert_eq!(
            second["kept"],
            json!(format!(
                "4 earlier turns sent again, as call {} had them",
                first["seq"]
            ))
        );
        js(&c, "document.querySelector('#conversation').scrollIntoView();").await;
        screenshot(&c, "conversation").await;
        // The search keeps the turns that hold its words.
        let search = wait_css(&c, "#calls .conv-search").await;
        search.send_keys("hello from the model").await.unwrap();
        let visible = js(
            &c,
            "return [...document.querySelectorAll('#conversation .turn')].filter(t => !t.hidden).map(t => t.dataset.role);",
        )
        .await;
        assert_eq!(visible, json!(["assistant"]), "only the answer that wrote it");
        c.close().await.unwrap();
    });
    stop(server);
}

#[test]
fn the_timeline_has_a_row_per_task_its_attempts_in_order_and_a_click_opens_the_task_at_the_bar() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "quickstart");
    let log = events_of(&store, "quickstart");
    let mut tasks: Vec<String> = Vec::new();
    let mut started: Vec<(String, u64)> = Vec::new();
    for line in &log {
        let e = &line["event"];
        let task = e["task"].as_str().unwrap_or_default().to_owned();
        match e["type"].as_str().unwrap() {
            "task-added" => tasks.push(e["spec"]["id"].as_str().unwrap().to_owned()),
            "task-started" => started.push((task, line["seq"].as_u64().unwrap())),
            _ => {}
        }
    }
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "quickstart", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        click_css(&c, "#tab-timeline").await;
        wait_css(&c, "#timeline[data-state=ready] .tl-row").await;
        let rows = js(
            &c,
            "return [...document.querySelectorAll('#timeline .tl-row')] \
               .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top)) \
               .map(r => [r.dataset.task, [...r.querySelectorAll('.bar.k-attempt')].map(b => Number(b.dataset.seq)), \
                          [...r.querySelectorAll('.bar')].map(b => b.dataset.kind)]);",
        )
        .await;
        let rows = rows.as_array().unwrap();
        // One row per task, in the order they joined the plan.
        let shown: Vec<&str> = rows.iter().map(|r| r[0].as_str().unwrap()).collect();
        assert_eq!(shown, tasks, "{rows:?}");
        // Each attempt's bar begins at its task-started, in the order of the events.
        for row in rows {
            let task = row[0].as_str().unwrap();
            let want: Vec<u64> = started
                .iter()
                .filter(|(t, _)| t == task)
                .map(|(_, s)| *s)
                .collect();
            let bars: Vec<u64> = serde_json::from_value(row[1].clone()).unwrap();
            assert_eq!(bars, want, "{task}: {row}");
        }
        let implement = rows.iter().find(|r| r[0] == "implement").unwrap();
        let kinds: Vec<&str> = implement[2]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap())
            .collect();
        assert!(
            kinds.contains(&"tests") && kinds.contains(&"eval"),
            "{kinds:?}"
        );
        // Hovering names the bar and how long it took.
        let second = started.iter().filter(|(t, _)| t == "implement").nth(1).unwrap().1;
        let bar = format!("#timeline .tl-row[data-task='implement'] .bar.k-attempt[data-seq='{second}']");
        wait_css(&c, &bar).await;
        js(&c, &format!("document.querySelector(\"{bar}\").dispatchEvent(new MouseEvent('mouseenter'));")).await;
        let said = wait_css(&c, "#timeline .tl-hover").await.text().await.unwrap();
        assert!(
            said.starts_with("implement: attempt 2: 7 s;") && said.contains(&format!("seq {second}–")),
            "{said}"
        );
        screenshot(&c, "timeline").await;
        // A click opens the task at the bar's seq.
        let plan = started[0].1;
        click_css(&c, &format!("#timeline .tl-row[data-task='plan'] .bar.k-attempt[data-seq='{plan}']")).await;
        wait_css(&c, &format!("main[data-seq='{plan}']")).await;
        wait_css(&c, "#task-panel[aria-label='task plan']").await;
        // Zooming in narrows what is shown: the bar grows.
        let before = js(&c, &format!("return document.querySelector(\"{bar}\").getBoundingClientRect().width;")).await;
        click_css(&c, "#tl-in").await;
        let after = js(&c, &format!("return document.querySelector(\"{bar}\")?.getBoundingClientRect().width ?? 0;")).await;
        assert!(after.as_f64().unwrap() > before.as_f64().unwrap() * 1.5, "{before} → {after}");
        c.close().await.unwrap();
    });
    stop(server);
}

#[test]
fn side_by_side_a_run_and_its_rerun_part_at_the_call_runlog_diff_names() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "release-notes");
    // The rerun's agent asks its second question in other words.
    common::copy_tree(&repo().join("fixtures"), &dir.path().join("fixtures"));
    let bin = dir.path().join("fixtures/workflows/bin");
    let agent = std::fs::read_to_string(bin.join("release-notes.py")).unwrap();
    std::fs::write(
        bin.join("release-notes-2.py"),
        agent.replace("Write one line for", "Write two lines for"),
    )
    .unwrap();
    let wf = dir.path().join("fixtures/workflows/release-notes.toml");
    let changed = dir.path().join("fixtures/workflows/release-notes-2.toml");
    std::fs::write(
        &changed,
        std::fs::read_to_string(&wf)
            .unwrap()
            .replace("bin/release-notes.py", "bin/release-notes-2.py"),
    )
    .unwrap();
    let out = runlog(&store)
        .current_dir(dir.path())
        .args([
            "rerun",
            "release-notes",
            "--answers",
            "recorded",
            "--workflow",
        ])
        .arg(&changed)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "it diverges: {}", text(&out));
    let diff = cli_json(&store, &["diff", "release-notes", "release-notes-rerun-1"]);
    let first = diff["rerun"]["calls"]["divergences"][0]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(first.starts_with("notes attempt 1, call 2:"), "{first}");
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        // From the rerun's task, to its first attempt beside the recording's.
        c.goto(&format!("{base}/runs/release-notes-rerun-1?task=notes"))
            .await
            .unwrap();
        click_css(&c, "#compare-runs").await;
        wait_css(&c, "main[data-state=ready] #compare").await;
        let parting = wait_css(&c, "#parting").await;
        assert_eq!(parting.attr("data-call").await.unwrap().as_deref(), Some("2"));
        let named = wait_css(&c, "#divergences li").await.text().await.unwrap();
        assert_eq!(named, first);
        // Call 2 is marked on both sides; call 1 is the same on both.
        let marked = js(
            &c,
            "return [...document.querySelectorAll('#compare .side')].map(s => [s.dataset.side, Number(s.dataset.call), !!s.querySelector('.call.parted')]);",
        )
        .await;
        assert_eq!(
            marked,
            json!([["left", 1, false], ["right", 1, false], ["left", 2, true], ["right", 2, true]])
        );
        let asked = js(
            &c,
            "return [...document.querySelectorAll('#compare .side[data-call=\"2\"] .turn.role-user pre')].map(p => p.textContent);",
        )
        .await;
        assert_eq!(
            asked,
            json!([
                "Write one line for CHANGELOG.md about the model gateway",
                "Write two lines for CHANGELOG.md about the model gateway"
            ])
        );
        screenshot(&c, "side-by-side").await;
        c.close().await.unwrap();
    });
    stop(server);
}

/// A run of 1,000 tasks (each started and submitted), its Timeline tab opened: only the rows in
/// view are in the page, the last task's row is there once scrolled to, and how long the tab took
/// to open is printed (`cargo test -p runlog-cli --test web_view_debugging -- --nocapture`).
#[test]
fn a_1000_task_runs_timeline_draws_the_rows_in_view_and_says_how_long_it_took() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let tasks: Vec<Value> = (0..1000)
        .map(|t| json!({"id": format!("t{t:04}"), "requires_testing": false}))
        .collect();
    let mut input = format!(
        "{}\n",
        json!({"command": "start-run", "run": "wide", "tasks": tasks})
    );
    for t in 0..1000 {
        let id = format!("t{t:04}");
        input.push_str(&format!(
            "{}\n{}\n",
            json!({"command": "start-task", "task": id, "agent": null, "worktree": null}),
            json!({"command": "submit-task", "task": id, "summary": "done", "result": null, "duration_ms": 10})
        ));
    }
    let out = common::emit(&store, "wide", &input);
    assert!(out.status.success(), "{}", text(&out));
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "wide", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        for round in ["first", "again"] {
            click_css(&c, "#tab-board").await;
            click_css(&c, "#tab-timeline").await;
            wait_css(&c, "#timeline[data-state=ready] .tl-row[data-task='t0000']").await;
            let took = js(&c, "return [window.runlogTimings.tab_opened_ms, window.runlogTimings.timeline_fetch_ms];").await;
            println!("{round}: the Timeline tab of 1,000 tasks opened in {} ms (its timeline read in {} ms)", took[0], took[1]);
        }
        let drawn = js(&c, "return document.querySelectorAll('#timeline .tl-row').length;").await;
        let drawn = drawn.as_u64().unwrap();
        assert!((1..100).contains(&drawn), "{drawn} rows in the page, not 1,000");
        js(&c, "const s = document.querySelector('#timeline .tl-scroll'); s.scrollTop = s.scrollHeight;").await;
        wait_css(&c, "#timeline .tl-row[data-task='t0999'] .bar.k-attempt").await;
        screenshot(&c, "timeline-1000").await;
        c.close().await.unwrap();
    });
    stop(server);
}

/// A verdict held for a person (`review = "all"`), then the task waiting on it.
const HELD: &str = "name = \"held\"\n[settings]\nreview = \"all\"\n\
    [[task]]\nid = \"review\"\nrun = \"true\"\neval = \"echo '{\\\"score\\\": 0.9}'\"\n\
    requires_testing = false\n\
    [[task]]\nid = \"publish\"\nafter = [\"review\"]\nrun = \"true\"\nrequires_testing = false\n";

#[test]
fn a_live_runs_timeline_shows_a_wait_for_a_person_and_ends_it_when_someone_approves() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(dir.path(), "held", HELD);
    let store = dir.path().join("store");
    let (server, base) = serve(&store);
    let d = driver(parts);
    let started = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "held", "--detach"])
        .output()
        .unwrap();
    assert!(started.status.success(), "{}", text(&started));
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "held", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        click_css(&c, "#tab-timeline").await;
        // The page follows the run: the verdict held, the wait for a person is drawn, going on.
        wait_css(&c, "#timeline .tl-row[data-task='review'] .bar.k-wait.open").await;
        let publish = js(&c, "return document.querySelectorAll(\"#timeline .tl-row[data-task='publish'] .bar\").length;").await;
        assert_eq!(publish, json!(0), "publish waits for review");
        screenshot(&c, "timeline-waiting").await;
        let approved = runlog(&store)
            .args(["approve", "held", "review", "--by", "a person"])
            .output()
            .unwrap();
        assert!(approved.status.success(), "{}", text(&approved));
        // The run paused there, its end a line across the rows.
        wait_css(&c, "#timeline .tl-run.k-run-finished").await;
        // Without a reload: the wait ends where the approval is, a tick.
        wait_css(&c, "#timeline .tl-row[data-task='review'] .bar.k-wait:not(.open)").await;
        let tick = wait_css(&c, "#timeline .tl-row[data-task='review'] .tick[data-kind='task-approved']").await;
        let said = tick.attr("aria-label").await.unwrap().unwrap_or_default();
        assert!(said.contains("by a person"), "{said}");
        let wait = wait_css(&c, "#timeline .tl-row[data-task='review'] .bar.k-wait").await;
        let (seq, approved_at) = (wait.attr("data-seq").await.unwrap(), tick.attr("data-seq").await.unwrap());
        let held = events_of(&store, "held");
        assert_eq!(seq, held.iter().find(|e| e["event"]["type"] == "review-held").map(|e| e["seq"].to_string()));
        assert_eq!(approved_at, held.iter().find(|e| e["event"]["type"] == "task-approved").map(|e| e["seq"].to_string()));
        c.close().await.unwrap();
    });
    stop(server);
}
