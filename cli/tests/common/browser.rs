//! Driving the web view in a real browser, for the browser tests: Debian's chromium, headless,
//! through chromedriver (WebDriver) against `runlog serve --http`; each page waited for, clicked,
//! read with a script, and saved as a screenshot under `target/web-view/`.
//!
//! Needs `chromium` and `chromium-driver` (Debian: `apt-get install -y chromium
//! chromium-driver`; `bash .ci/run` installs them). Without them each test says it was skipped;
//! with `RUNLOG_REQUIRE_BROWSER=1` (as in CI) it fails instead.

use super::{finish_within, repo, runlog, text, wait_for};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// How long a page may take to show what a test waits for.
pub const PAGE_TIME: Duration = Duration::from_secs(30);

pub fn find(env: &str, paths: &[&str]) -> Option<PathBuf> {
    std::env::var_os(env)
        .map(PathBuf::from)
        .into_iter()
        .chain(paths.iter().map(PathBuf::from))
        .find(|p| p.exists())
}

/// Chromium and chromedriver, or `None` after saying why the test is skipped.
pub fn browser_parts() -> Option<(PathBuf, PathBuf)> {
    let chromium = find("RUNLOG_CHROMIUM", &["/usr/bin/chromium"]);
    let driver = find("RUNLOG_CHROMEDRIVER", &["/usr/bin/chromedriver"]);
    match (chromium, driver) {
        (Some(c), Some(d)) => Some((c, d)),
        _ => {
            let why = "the web view's browser tests need chromium and chromedriver \
                       (Debian: apt-get install -y chromium chromium-driver; bash .ci/run installs them; \
                       or point RUNLOG_CHROMIUM and RUNLOG_CHROMEDRIVER at them)";
            assert!(
                std::env::var_os("RUNLOG_REQUIRE_BROWSER").is_none(),
                "{why}"
            );
            eprintln!("SKIPPED: {why}");
            None
        }
    }
}

/// chromedriver on a free loopback port, stopped when dropped.
pub struct Driver {
    child: Child,
    url: String,
    _profile: tempfile::TempDir,
    chromium: PathBuf,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn driver((chromium, chromedriver): (PathBuf, PathBuf)) -> Driver {
    let port = free_port();
    let child = Command::new(chromedriver)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(|| std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    Driver {
        child,
        url: format!("http://127.0.0.1:{port}"),
        _profile: tempfile::tempdir().unwrap(),
        chromium,
    }
}

/// A headless chromium at 1280×800 with a fresh profile. Without the background-networking
/// flags this machine's closed network floods it with refused connections.
pub async fn browse(d: &Driver) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": d.chromium,
            "args": [
                "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1280,800",
                format!("--user-data-dir={}", d._profile.path().display()),
            ],
        }),
    );
    let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&d.url)
        .await
        .unwrap();
    c.set_window_size(1280, 800).await.unwrap();
    c
}

pub fn serve(store: &Path) -> (Child, String) {
    super::serve_http(store, &[])
}

/// `runlog --json log RUN`: every event, one JSON object a line.
pub fn json_log(store: &Path, run: &str) -> String {
    text(&runlog(store).args(["--json", "log", run]).output().unwrap())
}

pub fn stop(server: Child) {
    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = finish_within(server, Duration::from_secs(30), "runlog serve");
    assert!(out.status.success(), "serve: {}", text(&out));
}

/// Saves the page as `target/web-view/NAME.png`.
pub async fn screenshot(c: &Client, name: &str) {
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo().join("target"), PathBuf::from)
        .join("web-view");
    std::fs::create_dir_all(&dir).unwrap();
    let png = c.screenshot().await.unwrap();
    assert!(png.starts_with(b"\x89PNG"), "a screenshot is a PNG");
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

pub async fn wait_css(c: &Client, css: &str) -> fantoccini::elements::Element {
    match c
        .wait()
        .at_most(PAGE_TIME)
        .for_element(Locator::Css(css))
        .await
    {
        Ok(found) => found,
        Err(e) => {
            screenshot(c, "failed").await;
            let said = js(
                c,
                "return document.querySelector('#error')?.textContent ?? '(no page)';",
            )
            .await;
            panic!("waiting for {css}: {e}; the page's error line: {said}; see target/web-view/failed.png")
        }
    }
}

/// Clicks what `css` finds, finding it again when the live page replaced it between the finding
/// and the click (a stale element): the page re-renders as events arrive.
pub async fn click_css(c: &Client, css: &str) {
    for _ in 0..50 {
        match wait_css(c, css).await.click().await {
            Ok(()) => return,
            Err(fantoccini::error::CmdError::Standard(e))
                if e.error == fantoccini::error::ErrorStatus::StaleElementReference =>
            {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("clicking {css}: {e}"),
        }
    }
    panic!("{css} kept being replaced before it could be clicked");
}

/// Runs `script` (a function body returning a value) in the page.
pub async fn js(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

pub fn import(store: &Path, fixture: &str) {
    let out = runlog(store)
        .arg("import")
        .arg(
            repo()
                .join("fixtures/runs")
                .join(format!("{fixture}.jsonl")),
        )
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

pub fn run_url(base: &str, run: &str, at: Option<u64>) -> String {
    match at {
        Some(at) => format!("{base}/runs/{run}?at={at}"),
        None => format!("{base}/runs/{run}"),
    }
}
