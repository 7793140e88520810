//! The web view in a real browser (`common::browser`) against `runlog serve --http` on recorded
//! fixture runs and on a live run: runs, a run's graph, board and scrubber, decisions, the
//! judges and experiments pages. A task's conversation, the Timeline tab and two attempts side
//! by side are in `web_view_time.rs`.

mod common;

use common::browser::{
    browse, browser_parts, click_css, driver, import, js, json_log, run_url, screenshot, serve,
    stop, wait_css, PAGE_TIME,
};
use common::{repo, runlog, text, wait_for, workflow};
use fantoccini::{Client, Locator};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

/// The board the page shows now, row by row: task, status, readiness.
async fn shown_board(c: &Client) -> Vec<(String, String, String)> {
    let rows = js(
        c,
        "return [...document.querySelectorAll('#board tbody tr')].map(r => \
         [r.dataset.task, r.dataset.status, r.dataset.readiness]);",
    )
    .await;
    serde_json::from_value(rows).unwrap()
}

/// What `runlog ARGS` prints on the store.
fn cli_stdout(store: &Path, args: &[&str]) -> String {
    let out = runlog(store).args(args).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

/// The board `runlog status --at SEQ --json` prints, in the same shape.
fn cli_board(store: &Path, run: &str, at: u64) -> Vec<(String, String, String)> {
    let out = runlog(store)
        .args(["--json", "status", run, "--at", &at.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["board"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_owned(),
                r["status"].as_str().unwrap().to_owned(),
                r["readiness"]["readiness"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

/// A run whose one eval passes 0.02 above its threshold: the audit flags it.
fn near_threshold_run(store: &Path) {
    let lines = [
        json!({"command": "start-run", "run": "near", "tasks": [{"id": "draft", "eval": "a judge"}]}),
        json!({"command": "start-task", "task": "draft", "agent": "writer", "worktree": null}),
        json!({"command": "submit-task", "task": "draft", "summary": "drafted", "result": null, "duration_ms": 1000}),
        json!({"command": "score-eval", "task": "draft", "evaluator": "a judge", "score": 0.72,
               "dimensions": {"clarity": 0.72}, "notes": "just enough"}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = common::emit(store, "near", &input);
    assert!(out.status.success(), "{}", text(&out));
}

async fn seq_shown(c: &Client) -> u64 {
    js(
        c,
        "return Number(document.querySelector('main').dataset.seq);",
    )
    .await
    .as_u64()
    .unwrap()
}

#[test]
fn a_recorded_run_in_the_browser_matches_the_cli_at_every_seq_it_is_scrubbed_to() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for f in [
        "seed-004-phases",
        "seed-001-eval-gate",
        "seed-002-supervisor",
        "seed-000-reevaluation",
    ] {
        import(&store, f);
    }
    near_threshold_run(&store);
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;

        // The runs page lists every run with its status; the filter narrows it.
        c.goto(&format!("{base}/")).await.unwrap();
        wait_css(&c, "main[data-state=ready] #runs").await;
        let listed = js(&c, "return [...document.querySelectorAll('#runs tbody tr')].map(r => r.dataset.run).sort();").await;
        assert_eq!(listed, json!(["near", "seed-000-reevaluation", "seed-001-eval-gate", "seed-002-supervisor", "seed-004-phases"]));
        screenshot(&c, "runs").await;
        c.find(Locator::Css("#status-filter")).await.unwrap()
            .select_by_value("running").await.unwrap();
        let running = js(&c, "return [...document.querySelectorAll('#runs tbody tr')].map(r => r.dataset.run);").await;
        assert_eq!(running, json!(["near"]), "the emitted run has not finished");

        // A run at its head: the graph draws every task, the board is the CLI's.
        c.goto(&run_url(&base, "seed-004-phases", None)).await.unwrap();
        wait_css(&c, "main[data-seq='46'] #board").await;
        assert_eq!(shown_board(&c).await, cli_board(&store, "seed-004-phases", 46));
        let nodes = js(&c, "return document.querySelectorAll('#graph [data-task]').length + document.querySelectorAll('#graph [data-group]').length;").await;
        assert_eq!(nodes, json!(6), "4 tasks and 2 groups are drawn");
        // The events pane words each event as `runlog log` does.
        let shown = js(&c, "return [...document.querySelectorAll('#events .ev')].map(r => [r.dataset.seq, r.querySelector('.words').textContent]);").await;
        let shown: Vec<(String, String)> = serde_json::from_value(shown).unwrap();
        assert!(!shown.is_empty(), "the events pane shows events");
        let log = cli_stdout(&store, &["log", "seed-004-phases"]);
        for (seq, words) in &shown {
            let line = log.lines().find(|l| l.split_whitespace().next() == Some(seq.as_str()));
            let line = line.unwrap_or_else(|| panic!("seq {seq} is not in `runlog log`: {log}"));
            assert!(line.ends_with(words.as_str()), "seq {seq}: the page says {words:?}, `runlog log` {line:?}");
        }
        screenshot(&c, "run").await;
        // On a narrow window the page stacks its panes: nothing wider than the window but the
        // graph, which scrolls inside its own pane.
        c.set_window_size(480, 900).await.unwrap();
        let overflow = js(&c, "return document.documentElement.scrollWidth - window.innerWidth;").await;
        assert!(overflow.as_i64().unwrap() <= 0, "the page is {overflow} px wider than a narrow window");
        screenshot(&c, "run-narrow").await;
        c.set_window_size(1280, 800).await.unwrap();

        // The arrow keys scrub back: each seq shows the board `status --at SEQ` prints, and the
        // address keeps the seq.
        let body = c.find(Locator::Css("body")).await.unwrap();
        for _ in 0..20 {
            body.send_keys("\u{e012}").await.unwrap(); // ←
        }
        wait_css(&c, "main[data-seq='26']").await;
        assert_eq!(shown_board(&c).await, cli_board(&store, "seed-004-phases", 26));
        assert!(c.current_url().await.unwrap().as_str().ends_with("?at=26"));
        body.send_keys("\u{e014}").await.unwrap(); // →
        wait_css(&c, "main[data-seq='27']").await;
        assert_eq!(shown_board(&c).await, cli_board(&store, "seed-004-phases", 27));
        // A link to a moment opens at that moment.
        for at in [3, 12, 33] {
            c.goto(&run_url(&base, "seed-004-phases", Some(at))).await.unwrap();
            wait_css(&c, &format!("main[data-seq='{at}'] #board")).await;
            assert_eq!(shown_board(&c).await, cli_board(&store, "seed-004-phases", at), "at {at}");
            let current = js(&c, "return document.querySelector('#events .ev.current').dataset.seq;").await;
            assert_eq!(current, json!(at.to_string()));
        }
        screenshot(&c, "run-scrubbed").await;

        // A task's story: every event of the task, outputs included.
        c.find(Locator::Css("#graph [data-task='buffer-impl']")).await.unwrap().click().await.unwrap();
        wait_css(&c, "#task-panel #story li[data-seq]").await;
        let kinds = js(&c, "return [...document.querySelectorAll('#story li[data-seq]')].map(l => l.querySelector('div').textContent);").await;
        let kinds = kinds.to_string();
        assert!(kinds.contains("task-started") && kinds.contains("output-recorded"), "{kinds}");
        screenshot(&c, "task").await;

        // The audit: the near-threshold pass is flagged.
        c.goto(&run_url(&base, "near", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        c.find(Locator::Css("#tab-audit")).await.unwrap().click().await.unwrap();
        let flagged = wait_css(&c, "#audit tr.flagged").await;
        assert_eq!(flagged.attr("data-flags").await.unwrap().as_deref(), Some("near-threshold"));
        // In the words `runlog audit` prints: its flag line and its decision.
        let row = flagged.text().await.unwrap();
        let audit = cli_stdout(&store, &["audit", "near"]);
        let flag = audit.lines().find_map(|l| l.trim().strip_prefix("⚑ ")).unwrap_or_else(|| panic!("{audit}"));
        assert!(flag.starts_with("near the threshold"), "{audit}");
        assert!(row.contains(flag), "the page's row {row:?} lacks `runlog audit`'s flag {flag:?}");
        assert!(row.contains("pass at threshold"), "{row}");
        screenshot(&c, "audit").await;

        // A replan's replacement: the re-evaluation fixture's cancelled `volume` links to what replaced it.
        c.goto(&run_url(&base, "seed-000-reevaluation", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #graph [data-task='volume'][data-status='cancelled']").await;
        let replaced = js(&c, "return document.querySelectorAll('#graph path.edge.replaced').length;").await;
        assert_eq!(replaced, json!(1), "one dashed link from volume to volume2");

        // The supervisor: the supervised pipeline's deploy stage has its circuit open.
        c.goto(&run_url(&base, "seed-002-supervisor", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        c.find(Locator::Css("#tab-supervisor")).await.unwrap().click().await.unwrap();
        let deploy = wait_css(&c, "#stages tr[data-stage='deploy']").await;
        assert!(deploy.text().await.unwrap().contains("open"));
        screenshot(&c, "supervisor").await;

        // Diff of two seqs, by task.
        c.goto(&run_url(&base, "seed-004-phases", Some(20))).await.unwrap();
        wait_css(&c, "main[data-seq='20'] #board").await;
        c.find(Locator::Css("#tab-diff")).await.unwrap().click().await.unwrap();
        wait_css(&c, "#diff-go").await.click().await.unwrap();
        wait_css(&c, "#diff tr[data-task='buffer-impl']").await;
        screenshot(&c, "diff").await;

        // Roll back from the page: a rollback event is appended and shown; nothing is lost.
        c.find(Locator::Css("#rollback")).await.unwrap().click().await.unwrap();
        wait_css(&c, "#confirm[open]").await;
        c.find(Locator::Css("#confirm-ok")).await.unwrap().click().await.unwrap();
        wait_css(&c, "#events .ev[data-kind='rolled-back']").await;
        wait_css(&c, "main[data-seq='48']").await;
        c.find(Locator::Css("#tab-board")).await.unwrap().click().await.unwrap();
        wait_css(&c, "#board").await;
        assert_eq!(
            shown_board(&c).await,
            cli_board(&store, "seed-004-phases", 20),
            "after the rollback the board is the board of seq 20"
        );
        assert_eq!(seq_shown(&c).await, 48);
        screenshot(&c, "rolled-back").await;
        c.close().await.unwrap();
    });
    let log = json_log(&store, "seed-004-phases");
    assert!(
        log.contains("\"rolled-back\"") && log.contains("\"to_seq\":20"),
        "{log}"
    );
    stop(server);
}

/// `review`'s evaluator waits for a file, so the task waits in pending-eval while the run is live;
/// `publish` needs `review` and prints 10,000 bytes (kept as a blob, the event holds 4,096).
const LIVE: &str = "name = \"live\"\n[settings]\nauto_rescue = false\n\
    [[task]]\nid = \"review\"\nrun = \"true\"\n\
    eval = \"while [ ! -e release-eval ]; do sleep 0.05; done; echo '{\\\"score\\\": 0.9}'\"\n\
    requires_testing = false\n\
    [[task]]\nid = \"publish\"\nafter = [\"review\"]\nrun = \"head -c 10000 /dev/zero | tr '\\\\0' x\"\n\
    requires_testing = false\n";

#[test]
fn approving_a_pending_eval_task_in_a_live_run_starts_its_dependents_on_the_page() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let wf = workflow(dir.path(), "live", LIVE);
    let store = dir.path().join("store");
    let (server, base) = serve(&store);
    let d = driver(parts);
    // Started through the API: the server executes the run.
    let started = runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--run-id", "live", "--detach"])
        .output()
        .unwrap();
    assert!(started.status.success(), "{}", text(&started));
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "live", None)).await.unwrap();
        // The page follows the run: review reaches pending-eval without a reload.
        let review = wait_css(
            &c,
            "#graph [data-task='review'][data-status='pending-eval']",
        )
        .await;
        assert_eq!(
            js(
                &c,
                "return document.querySelector('#graph [data-task=publish]').dataset.status;"
            )
            .await,
            json!("open")
        );
        screenshot(&c, "live-pending").await;
        drop(review);
        click_css(&c, "#graph [data-task='review'][data-status='pending-eval']").await;
        click_css(&c, "#task-panel #approve").await;
        wait_css(&c, "#confirm[open]").await;
        c.find(Locator::Css("#confirm-by"))
            .await
            .unwrap()
            .clear()
            .await
            .unwrap();
        c.find(Locator::Css("#confirm-by"))
            .await
            .unwrap()
            .send_keys("browser")
            .await
            .unwrap();
        click_css(&c, "#confirm-ok").await;
        // The approval shows in the events pane, and publish starts and finishes, live.
        wait_css(&c, "#events .ev[data-kind='task-approved']").await;
        wait_css(&c, "#graph [data-task='publish'][data-status='done']").await;
        wait_css(&c, "#events .ev[data-kind='run-finished']").await;
        screenshot(&c, "live-approved").await;
        // publish's output: its beginning in the story, the whole of it on demand.
        click_css(&c, "#graph [data-task='publish']").await;
        let load = "#story li[data-kind='output-recorded'] button";
        wait_css(&c, load).await;
        let output = "return document.querySelector(\"#story li[data-kind='output-recorded'] pre\").textContent.length;";
        let shown = js(&c, output).await;
        assert!(shown.as_u64().unwrap() < 10_000, "{shown}");
        click_css(&c, load).await;
        let mut whole = 0;
        for _ in 0..300 {
            whole = js(&c, output).await.as_u64().unwrap();
            if whole == 10_000 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(whole, 10_000, "the whole output, loaded from its blob");
        c.close().await.unwrap();
    });
    let log = json_log(&store, "live");
    assert!(
        log.contains("\"task-approved\"") && log.contains("\"by\":\"browser\""),
        "{log}"
    );
    stop(server);
}

/// The render-time figures of docs/web-view.md: a run of 10,000 tasks in 100 groups and about 50,000
/// events, opened at its head, then scrubbed one seq back. Prints the figures; asserts only that
/// every part of the page appeared. `cargo test --release -p runlog-cli --test web_view --
/// --ignored --nocapture`.
#[test]
#[ignore = "a measurement (about a minute): run it by hand, see docs/web-view.md"]
fn measure_the_first_render_of_a_10000_task_run() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let (groups, per_group) = (100, 100);
    let mut tasks = Vec::new();
    for g in 0..groups {
        let after: Vec<String> = if g % 10 == 0 {
            vec![]
        } else {
            vec![format!("g{}", g - 1)]
        };
        tasks.push(json!({"id": format!("g{g}"), "after": after}));
        for t in 0..per_group {
            let after: Vec<String> = if t % 10 == 0 {
                vec![]
            } else {
                vec![format!("t{g}-{}", t - 1)]
            };
            tasks.push(json!({"id": format!("t{g}-{t}"), "parent": format!("g{g}"), "after": after, "requires_testing": false}));
        }
    }
    let mut input = format!(
        "{}\n",
        json!({"command": "start-run", "run": "big", "tasks": tasks})
    );
    // Dependencies first: a group after the previous one waits for all its tasks.
    let order = (0..groups).flat_map(|g| (0..per_group).map(move |t| format!("t{g}-{t}")));
    for id in order {
        input.push_str(&format!(
            "{}\n",
            json!({"command": "start-task", "task": id, "agent": null, "worktree": null})
        ));
        input.push_str(&format!("{}\n", json!({"command": "submit-task", "task": id, "summary": "done", "result": null, "duration_ms": 10})));
    }
    let began = std::time::Instant::now();
    let out = common::emit(&store, "big", &input);
    assert!(
        out.status.success(),
        "{}",
        text(&out).chars().take(2000).collect::<String>()
    );
    let head = runlog(&store)
        .args(["--json", "status", "big"])
        .output()
        .unwrap();
    let head: Value = serde_json::from_slice(&head.stdout).unwrap();
    let events = head["seq"].as_u64().unwrap();
    println!(
        "recorded {events} events of {} tasks in {:.1} s",
        groups * (per_group + 1),
        began.elapsed().as_secs_f64()
    );
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        for round in ["first", "again"] {
            c.goto(&run_url(&base, "big", None)).await.unwrap();
            wait_css(&c, &format!("main[data-seq='{events}'] #board")).await;
            let t = js(&c, "return window.runlogTimings;").await;
            println!("{round} open: {t}");
        }
        let started = std::time::Instant::now();
        let body = c.find(Locator::Css("body")).await.unwrap();
        body.send_keys("\u{e012}").await.unwrap();
        wait_css(&c, &format!("main[data-seq='{}']", events - 1)).await;
        let t = js(&c, "return window.runlogTimings;").await;
        println!("one seq back: {} ms, board and graph redrawn: {t}", started.elapsed().as_millis());
        let drawn = js(&c, "return [document.querySelectorAll('#graph [data-task]').length, document.querySelectorAll('#events .ev').length];").await;
        println!("elements in the page: [graph nodes, event rows] = {drawn}");
        screenshot(&c, "big").await;
        c.close().await.unwrap();
    });
    stop(server);
}

/// `GET path` on the view's address: status, head, body.
fn get(base: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String, String) {
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    common::exchange(&mut s, "GET", path, headers, "")
}

#[test]
fn runlog_ui_starts_a_server_once_and_finds_it_after() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "quickstart");
    let first = runlog(&store)
        .args(["--json", "ui", "--port", "0"])
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", text(&first));
    let first: Value = serde_json::from_slice(&first.stdout).unwrap();
    let url = first["url"]
        .as_str()
        .unwrap()
        .trim_end_matches('/')
        .to_owned();
    let pid = first["started_pid"]
        .as_u64()
        .expect("the first call starts a server");
    // The page and its assets come from the binary, with a policy that runs no other script.
    let (status, head, page) = get(&url, "/runs/quickstart?at=3", &[]);
    assert_eq!(status, 200);
    assert!(page.contains("/ui/js/main.js"), "{page}");
    assert!(
        head.contains("content-security-policy: default-src 'none'; script-src 'self'"),
        "{head}"
    );
    let (status, head, css) = get(&url, "/ui/app.css", &[]);
    assert_eq!(status, 200);
    assert!(head.contains("text/css"));
    assert!(
        css.contains("--st-pending-eval: #7fff00;"),
        "the CLI's chartreuse: {css}"
    );
    // The page's script is modules, each served as JavaScript; a path outside them is not found.
    let (status, head, js) = get(&url, "/ui/js/run/page.js", &[]);
    assert_eq!(status, 200);
    assert!(head.contains("text/javascript"), "{head}");
    assert!(js.contains("/v1/runs"));
    assert_eq!(get(&url, "/ui/js/../mod.rs", &[]).0, 404);
    // A second call finds the running server instead of starting another.
    let again = runlog(&store).args(["ui", "--port", "0"]).output().unwrap();
    assert!(again.status.success(), "{}", text(&again));
    assert!(
        text(&again).contains("already serves this store"),
        "{}",
        text(&again)
    );
    assert!(text(&again).contains(&url), "{}", text(&again));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    wait_for(|| !store.join("view.url").exists());
}

#[test]
fn with_tokens_the_pages_load_but_the_data_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "quickstart");
    let token = "web-view-token-0123456789abcdef";
    std::fs::write(dir.path().join("tokens"), format!("viewer read {token}\n")).unwrap();
    let tokens = dir.path().join("tokens");
    let (server, url) = common::serve_http(&store, &["--token-file".as_ref(), tokens.as_os_str()]);
    let url = url.as_str();
    assert_eq!(get(url, "/", &[]).0, 200, "a page holds no data");
    assert_eq!(get(url, "/v1/runs", &[]).0, 401);
    let bearer = format!("Bearer {token}");
    let (status, _, runs) = get(url, "/v1/runs", &[("Authorization", &bearer)]);
    assert_eq!(status, 200);
    assert!(runs.contains("quickstart"));
    stop(server);
}

#[test]
fn a_sub_projects_child_run_shows_under_its_task_and_links_both_ways() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "sub-project");
    import(&store, "sub-project.buffer");
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "sub-project", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        // The child's tasks under the task whose work they are, each row naming its run.
        let rows = js(
            &c,
            "return [...document.querySelectorAll('#board tbody tr')].map(r => \
             [r.dataset.task, r.dataset.status, r.dataset.run || '']);",
        )
        .await;
        assert_eq!(
            rows,
            json!([
                ["design", "done", ""],
                ["buffer", "done", ""],
                ["gap-buffer", "done", "sub-project.buffer"],
                ["cursor", "done", "sub-project.buffer"],
                ["commands", "done", ""],
            ])
        );
        screenshot(&c, "sub-project").await;
        // A child's row opens the child run's page, which links back to its parent.
        c.find(Locator::Css("#board tr[data-task=cursor] a"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let back = wait_css(&c, "main[data-state=ready] #parent-link a").await;
        assert_eq!(back.text().await.unwrap(), "sub-project/buffer");
        c.close().await.unwrap();
    });
    stop(server);
}

#[test]
fn each_attempts_diff_shows_in_the_tasks_story() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "fix-the-test");
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "fix-the-test", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        click_css(&c, "#graph [data-task='fix-total']").await;
        let show = "#story li[data-kind='changes-recorded'] button";
        wait_css(&c, show).await;
        let attempts = js(&c, "return document.querySelectorAll(\"#story li[data-kind='changes-recorded']\").length;").await;
        assert_eq!(attempts, json!(2), "one diff per attempt");
        // The second attempt's diff: the fix, line by line, marked added and removed.
        c.find_all(Locator::Css(show)).await.unwrap()[1].click().await.unwrap();
        wait_css(&c, "pre.diff[data-attempt='2'] span.add").await;
        let lines = js(
            &c,
            "return [...document.querySelectorAll(\"pre.diff[data-attempt='2'] span.add, pre.diff[data-attempt='2'] span.del\")].map(s => s.textContent.trim());",
        )
        .await;
        assert_eq!(
            lines,
            json!(["-    return sum(prices)", "+    return sum(prices) * (1 + tax)"])
        );
        screenshot(&c, "attempt-diff").await;
        c.close().await.unwrap();
    });
    stop(server);
}

#[test]
fn the_board_shows_each_tasks_cost_and_the_budget_left_as_the_cli_does() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "agent-costs");
    // The CLI's cells, by task: the cost column of `runlog status`.
    let status = runlog(&store)
        .args(["status", "agent-costs"])
        .output()
        .unwrap();
    let status = text(&status);
    let cli_cost = |task: &str| -> String {
        let line = status
            .lines()
            .find(|l| l.split_whitespace().next() == Some(task))
            .unwrap_or_else(|| panic!("{task} in {status}"));
        line.split_whitespace()
            .find(|w| w.starts_with('$') || *w == "unpriced")
            .unwrap()
            .to_owned()
    };
    let header = status.lines().nth(1).unwrap().to_owned();
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "agent-costs", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        let cells = js(
            &c,
            "return Object.fromEntries([...document.querySelectorAll('#board tbody tr')].map(r => [r.dataset.task, r.querySelector('td[data-cost]').textContent]));",
        )
        .await;
        for task in ["plan", "build", "docs", "review", "refactor", "converge"] {
            assert_eq!(cells[task], json!(cli_cost(task)), "{task}: {cells}");
        }
        let shown = wait_css(&c, "#cost").await.text().await.unwrap();
        // `cost $0.1522 + 1 unpriced, 65385 tokens; budget $5.0000, $4.8479 left` in the CLI.
        for figure in ["$0.1522", "1 unpriced", "65385 tokens", "$4.8479"] {
            assert!(shown.contains(figure), "{shown} lacks {figure}");
            assert!(header.contains(figure), "{header} lacks {figure}");
        }
        screenshot(&c, "board-costs").await;
        c.close().await.unwrap();
    });
    stop(server);
}

#[test]
fn a_tasks_panel_shows_its_model_calls_as_the_cli_does() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "release-notes");
    let cli = runlog(&store)
        .args(["show", "release-notes", "notes", "--calls"])
        .output()
        .unwrap();
    let cli = text(&cli);
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "release-notes", None))
            .await
            .unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        click_css(&c, "#graph [data-task='notes']").await;
        wait_css(&c, "#conversation section.call").await;
        let shown = js(
            &c,
            "return [...document.querySelectorAll('#conversation section.call')].map(s => \
             [s.querySelector('.callhead').textContent, \
              [...s.querySelectorAll('.turn.added')].map(t => t.textContent).join(' | ')]);",
        )
        .await;
        let calls = shown.as_array().unwrap();
        assert_eq!(calls.len(), 2, "{shown}");
        for (call, asked) in calls.iter().zip([
            "Which file holds the release notes?",
            "Write one line for CHANGELOG.md about the model gateway",
        ]) {
            // Each call's line is the headline `runlog show --calls` prints, and the turn it
            // added holds what the CLI says it asked.
            let head = call[0].as_str().unwrap();
            let headline = head.split(": ").skip(1).collect::<Vec<_>>().join(": ");
            assert!(cli.contains(&headline), "{headline:?} is not in:\n{cli}");
            assert!(cli.contains(&format!("asked: {asked}")), "{cli}");
            assert!(call[1].as_str().unwrap().contains(asked), "{call}");
        }
        let title = wait_css(&c, "#calls h2").await.text().await.unwrap();
        assert_eq!(title, "Model calls (2, $0.0005)");
        screenshot(&c, "model-calls").await;
        c.close().await.unwrap();
    });
    stop(server);
}

#[test]
fn rerun_from_here_executes_the_run_again_with_its_recorded_answers() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    import(&store, "release-notes");
    // The server runs where the recorded workflow's path leads: a copy of the fixtures.
    common::copy_tree(&repo().join("fixtures"), &dir.path().join("fixtures"));
    let _ = std::fs::remove_file(store.join("view.url"));
    let server = runlog(&store)
        .args(["serve", "--http", "127.0.0.1:0"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(|| store.join("view.url").exists());
    let base = std::fs::read_to_string(store.join("view.url")).unwrap();
    let base = base.trim().trim_end_matches('/').to_owned();
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "release-notes", Some(3)))
            .await
            .unwrap();
        wait_css(&c, "main[data-seq='3'] #board").await;
        click_css(&c, "#rerun").await;
        wait_css(&c, "#confirm[open] #confirm-answers").await;
        screenshot(&c, "rerun-dialog").await;
        click_css(&c, "#confirm-ok").await;
        // The page of the new run, which the server executes to its end (the old page stays
        // until the server has the new run).
        let deadline = std::time::Instant::now() + PAGE_TIME;
        let url = loop {
            let url = c.current_url().await.unwrap();
            if url.path().ends_with("/runs/release-notes-rerun-1")
                || std::time::Instant::now() > deadline
            {
                break url;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(url.path().ends_with("/runs/release-notes-rerun-1"), "{url}");
        wait_css(&c, "main[data-state=ready] #board").await;
        wait_for(|| json_log(&store, "release-notes-rerun-1").contains("\"run-finished\""));
        // The diff tab of the rerun against the run says how its calls were answered.
        click_css(&c, "#tab-diff").await;
        let left = wait_css(&c, "#diff-left").await;
        left.clear().await.unwrap();
        left.send_keys("release-notes").await.unwrap();
        click_css(&c, "#diff-go").await;
        let said = wait_css(&c, "#diff-rerun").await.text().await.unwrap();
        assert!(
            said.contains(
                "release-notes-rerun-1's model calls: 2 calls from the recording ($0.00), 0 live"
            ),
            "{said}"
        );
        screenshot(&c, "rerun-diff").await;
        c.close().await.unwrap();
    });
    let log = json_log(&store, "release-notes-rerun-1");
    assert_eq!(log.matches("\"end\":\"replayed\"").count(), 2, "{log}");
    assert!(log.contains("\"outcome\":\"succeeded\""), "{log}");
    stop(server);
}

#[test]
fn the_judges_page_shows_an_evaluators_agreement_and_a_what_if_threshold() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    // The review fixture of docs/commands.md: a person approves two verdicts, rejects one
    // (reopened, then approved) and approves a rescue.
    common::copy_tree(&repo().join("fixtures"), &dir.path().join("fixtures"));
    let steps: [&[&str]; 7] = [
        &[
            "run",
            "fixtures/workflows/review.toml",
            "--run-id",
            "review-1",
            "--quiet",
        ],
        &["approve", "review-1", "parser", "--by", "ana"],
        &[
            "reject",
            "review-1",
            "docs",
            "--by",
            "ana",
            "--reopen",
            "--reason",
            "the examples do not run",
        ],
        &["approve", "review-1", "cli", "--by", "ana"],
        &["resume", "review-1", "--quiet"],
        &["approve", "review-1", "docs", "--by", "ana"],
        &["resume", "review-1", "--quiet"],
    ];
    let d = driver(parts);
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (i, args) in steps.iter().enumerate() {
        runlog(&store)
            .args(*args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        if i == 0 {
            // Paused with three verdicts held: the judges page lists the review queue.
            let (server, base) = serve(&store);
            rt.block_on(async {
                let c = browse(&d).await;
                c.goto(&format!("{base}/judges")).await.unwrap();
                wait_css(&c, "main[data-state=ready] #review-queue").await;
                let waiting = js(&c, "return [...document.querySelectorAll('#review-queue li')].map(l => l.dataset.waiting);").await;
                assert_eq!(waiting, json!(["review-1/parser", "review-1/docs", "review-1/cli"]));
                let cli = js(&c, "return document.querySelector(\"#review-queue li[data-waiting='review-1/cli']\").textContent;").await;
                assert!(cli.as_str().unwrap().contains("score 0.55, the gate would rescue"), "{cli}");
                c.close().await.unwrap();
            });
            stop(server);
        }
    }
    assert!(json_log(&store, "review-1").contains("\"run-finished\""));
    let (server, base) = serve(&store);
    rt.block_on(async {
        let c = browse(&d).await;
        c.goto(&base).await.unwrap();
        click_css(&c, "#judges-link").await;
        wait_css(&c, "main[data-state=ready] #judges").await;
        click_css(&c, "#judges tr[data-evaluator] a").await;
        wait_css(&c, "main[data-state=ready] #confusion").await;
        let cells = js(
            &c,
            "return [...document.querySelectorAll('#confusion td')].map(t => [t.dataset.cell, t.textContent]);",
        )
        .await;
        assert_eq!(
            cells,
            json!([["both-pass", "2"], ["gate-pass-person-fail", "1"], ["gate-fail-person-pass", "1"], ["both-fail", "0"]])
        );
        let bars = js(&c, "return document.querySelectorAll('#histogram .bar').length;").await;
        assert_eq!(bars, json!(10));
        let false_passes = js(&c, "return [...document.querySelectorAll('#false-passes li a')].map(a => a.dataset.verdict);").await;
        assert_eq!(false_passes, json!(["review-1/docs/1"]));
        // The what-if slider: at 0.85 both of docs' passes flip, as `runlog judges --threshold 0.85` says.
        js(&c, "const s = document.querySelector('#what-if'); s.value = '0.85'; s.dispatchEvent(new Event('input')); return null;").await;
        let summary = wait_css(&c, "main[data-what-if='0.85'] #what-if-summary").await.text().await.unwrap();
        assert_eq!(summary, "3 passes → 1; 2 decisions flip (1 borne out by what happened, 1 against it)");
        screenshot(&c, "judges").await;
        // A contradicted verdict opens its task at the verdict, where its diff and story are.
        click_css(&c, "#false-passes li a").await;
        wait_css(&c, "#task-panel").await;
        assert_eq!(seq_shown(&c).await, 23);
        c.close().await.unwrap();
    });
    stop(server);
}

#[test]
fn an_attempt_that_wrote_outside_its_worktree_is_flagged_on_the_board_and_in_its_story() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let checkout = dir.path().join("repo");
    let agent = format!(
        "echo mine > mine.txt && echo stray > {}/hello.txt",
        checkout.display()
    );
    let workflow = format!(
        "name = \"stray\"\n[[task]]\nid = \"t\"\nrun = {agent:?}\nrequires_testing = false\n"
    );
    let repo = common::git::repository(dir.path(), &[("wf.toml", &workflow)]);
    let out = runlog(&store)
        .args(["run", repo.join("wf.toml").to_str().unwrap()])
        .args(["--run-id", "stray", "--quiet"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::text(&out));
    let words = "attempt 1 wrote outside its worktree: hello.txt in the repository's checkout";
    let (server, base) = serve(&store);
    let d = driver(parts);
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = browse(&d).await;
        c.goto(&run_url(&base, "stray", None)).await.unwrap();
        wait_css(&c, "main[data-state=ready] #board").await;
        let row = js(
            &c,
            "return document.querySelector(\"#board tr[data-task='t']\").textContent;",
        )
        .await;
        assert!(
            row.as_str().unwrap().contains(&format!("⚠ {words}")),
            "{row}"
        );
        click_css(&c, "#graph [data-task='t']").await;
        let said = wait_css(&c, "#story li[data-kind='wrote-outside']").await;
        assert!(said.text().await.unwrap().contains(words));
        screenshot(&c, "wrote-outside").await;
        c.close().await.unwrap();
    });
    stop(server);
}

#[test]
fn an_experiments_page_shows_variants_as_columns_and_a_broken_task_opens_its_rerun() {
    let Some(parts) = browser_parts() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = common::notes_experiment(dir.path());
    let d = driver(parts);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (server, base) = serve(&store);
    rt.block_on(async {
        let c = browse(&d).await;
        c.goto(&base).await.unwrap();
        click_css(&c, "#experiments-link").await;
        wait_css(&c, "main[data-state=ready] #experiments").await;
        click_css(&c, "#experiments tr[data-experiment] a").await;
        wait_css(&c, "main[data-state=ready] #experiment-table").await;
        let heads = js(&c, "return [...document.querySelectorAll('#experiment-table thead th[data-variant]')].map(t => t.dataset.variant);").await;
        assert_eq!(heads, json!(["base", "tested", "strict"]));
        let cells = js(
            &c,
            "return [...document.querySelectorAll(\"#experiment-table tr[data-task='release-notes/notes'] td\")].map(t => [t.dataset.cell, t.dataset.flip, t.textContent]);",
        )
        .await;
        assert_eq!(cells[0][0], "base");
        assert_eq!(cells[1][1], "");
        assert_eq!(cells[2][1], "broken");
        assert!(cells[2][2].as_str().unwrap().starts_with("▼ broken not done"), "{cells}");
        let points = js(&c, "return [...document.querySelectorAll('#cost-pass g.point')].map(g => g.dataset.variant);").await;
        assert_eq!(points, json!(["base", "tested", "strict"]));
        screenshot(&c, "experiment").await;
        // The broken cell opens the strict rerun's task, where its story says why.
        click_css(&c, "#experiment-table td[data-flip=broken] a").await;
        wait_css(&c, "#task-panel").await;
        let url = c.current_url().await.unwrap();
        assert!(url.path().ends_with("/runs/notes-check.strict.release-notes.1"), "{url}");
        c.close().await.unwrap();
    });
    stop(server);
}
