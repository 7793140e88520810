//! What the model gateway adds on the path a real run takes: a task's command (a Python client
//! on one kept-alive connection, TCP_NODELAY, as SDKs hold theirs) makes sequential
//! non-streamed calls with a 10 KB answer through `runlog run`'s gateway to a scripted provider
//! here, each call recorded durably (the engine's step, its blobs, the budgets' refresh) before
//! its answer ends; against the same client calling the provider directly. Measured twice: a
//! run without a budget, and one under a budget, where each call's worst case is reserved by
//! the engine before it leaves.
//!
//! Then 1 MB requests to a model that takes 50 ms (what storing the request delays its answer),
//! 16 clients at once (calls recorded durably a second), and, when `RUNLOG_LITELLM` names the
//! LiteLLM proxy's `litellm` command, the same sequential client through it.
//!
//! `cargo bench -p runlog-cli --bench gateway_run` (a few minutes); `RUNLOG_BENCH_CALLS` (500).
//! Prints its goals: added p50 ≤ 0.5 ms and p99 ≤ 2 ms, a 1 MB request's answer delayed
//! ≤ 1 ms, 3,000 calls/s. Asserts nothing about time.
#![allow(clippy::print_stdout)]

#[path = "../tests/common/mod.rs"]
mod common;

use serde_json::Value;
use std::path::Path;

/// The client: `CALLS` calls from `CLIENTS` threads, each on one connection, each call timed;
/// `REQUEST_BYTES` of padding in each request and `THINK_MS` for the provider to take. Writes
/// the latencies in ms and the seconds all took, as JSON.
const CLIENT: &str = r#"
import http.client, json, os, socket, threading, time, urllib.parse
base = urllib.parse.urlparse(os.environ["ANTHROPIC_BASE_URL"])
headers = {"x-api-key": os.environ["ANTHROPIC_API_KEY"], "anthropic-version": "2023-06-01",
           "content-type": "application/json", "x-think-ms": os.environ.get("THINK_MS", "0")}
clients = int(os.environ.get("CLIENTS", "1"))
calls = int(os.environ["CALLS"])
padding = "p" * int(os.environ.get("REQUEST_BYTES", "0"))
took = []
ends = []
def client(k):
    conn = http.client.HTTPConnection(base.hostname, base.port)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    mine = []
    for n in range(k, calls, clients):
        body = json.dumps({"model": "claude-x", "max_tokens": 256, "system": padding,
                           "messages": [{"role": "user", "content": f"call {n}"}]})
        start = time.perf_counter()
        conn.request("POST", base.path.rstrip("/") + "/v1/messages", body, headers)
        answer = conn.getresponse().read()
        mine.append((time.perf_counter() - start) * 1000)
        ends.append(time.time_ns())
        assert len(answer) > 10_000, answer[:200]
    took.extend(mine)
began = time.perf_counter()
threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
for t in threads: t.start()
for t in threads: t.join()
seconds = time.perf_counter() - began
assert len(took) == calls, len(took)
with open(os.environ["OUT"], "w") as f:
    json.dump({"took": took, "seconds": seconds, "ends": ends}, f)
"#;

/// When the scripted provider gave each answer (ns since the epoch, in the order of the calls).
type Answered = std::sync::Arc<std::sync::Mutex<Vec<u128>>>;

fn now_ns() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// The scripted provider: every call answered with a 10 KB message, after the `x-think-ms` the
/// client asks for (a model's time to answer); when it answered each is kept in `answered`.
fn provider(answered: Answered) -> String {
    let filler = "x".repeat(10_000);
    let answer = serde_json::json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-scripted",
        "content": [{"type": "text", "text": filler}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 20, "output_tokens": 200}
    })
    .to_string();
    let app = axum::Router::new().route(
        "/v1/messages",
        // The body is read, so that the connection is kept for the next call.
        axum::routing::post(
            move |headers: axum::http::HeaderMap, _asked: axum::body::Bytes| {
                let answer = answer.clone();
                let answered = answered.clone();
                let think = headers
                    .get("x-think-ms")
                    .and_then(|v| v.to_str().ok()?.parse().ok())
                    .unwrap_or(0);
                async move {
                    if think > 0 {
                        tokio::time::sleep(std::time::Duration::from_millis(think)).await;
                    }
                    answered.lock().unwrap().push(now_ns());
                    axum::response::IntoResponse::into_response((
                        [("content-type", "application/json")],
                        answer,
                    ))
                }
            },
        ),
    );
    common::provider::serve(app)
}

/// What the client does: how many calls, from how many threads, how large a request, and how
/// long the provider takes.
#[derive(Clone, Copy)]
struct Load {
    calls: usize,
    clients: usize,
    request_bytes: usize,
    think_ms: u64,
}

impl Load {
    fn env(self, command: &mut std::process::Command, out: &Path) {
        command
            .env("CALLS", self.calls.to_string())
            .env("CLIENTS", self.clients.to_string())
            .env("REQUEST_BYTES", self.request_bytes.to_string())
            .env("THINK_MS", self.think_ms.to_string())
            .env("OUT", out);
    }
}

/// What the client measured: each call's latency (ms, sorted) and the seconds all took.
struct Took {
    sorted: Vec<f64>,
    seconds: f64,
    /// When each call's answer was read whole (ns since the epoch, in order).
    ends: Vec<u128>,
}

impl Took {
    fn quantile(&self, q: f64) -> f64 {
        let i = ((self.sorted.len() as f64 - 1.0) * q).round() as usize;
        self.sorted.get(i).copied().unwrap_or(f64::NAN)
    }

    fn rate(&self) -> f64 {
        self.sorted.len() as f64 / self.seconds
    }
}

/// The client run directly against `base`.
fn direct(dir: &Path, base: &str, load: Load) -> Took {
    client_of(dir, base, "sk-direct", load)
}

/// The client run against `base` with `key`.
fn client_of(dir: &Path, base: &str, key: &str, load: Load) -> Took {
    let out = dir.join("direct.json");
    let mut client = std::process::Command::new("python3");
    client
        .arg(dir.join("client.py"))
        .env("ANTHROPIC_BASE_URL", base)
        .env("ANTHROPIC_API_KEY", key);
    load.env(&mut client, &out);
    assert!(client.status().unwrap().success());
    read(&out)
}

/// The client as a task of `runlog run`, under `settings`.
fn through_runlog(dir: &Path, provider: &str, load: Load, name: &str, settings: &str) -> Took {
    let out = dir.join(format!("{name}.json"));
    let wf = common::workflow(
        dir,
        name,
        &format!(
            "name = \"{name}\"\n[settings]\nworkspace = \"none\"\n{settings}\
             [[task]]\nid = \"calls\"\nrun = \"python3 {}\"\nrequires_testing = false\n\
             [providers.anthropic]\nkind = \"anthropic\"\nbase_url = \"{provider}\"\n\
             [prices.\"claude-scripted\"]\ninput = 3.0\noutput = 15.0\n",
            dir.join("client.py").display()
        ),
    );
    let store = dir.join(format!("{name}-store"));
    let mut run = common::runlog(&store);
    run.args(["run", wf.to_str().unwrap(), "--run-id", name, "--quiet"])
        .env("ANTHROPIC_API_KEY", "sk-ant-the-runners-own");
    load.env(&mut run, &out);
    let ran = run.output().unwrap();
    assert!(ran.status.success(), "{}", common::text(&ran));
    read(&out)
}

fn read(path: &Path) -> Took {
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut sorted: Vec<f64> = v["took"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    sorted.sort_by(f64::total_cmp);
    let ends = v["ends"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_u64)
        .map(u128::from)
        .collect();
    Took {
        sorted,
        seconds: v["seconds"].as_f64().unwrap(),
        ends,
    }
}

/// The LiteLLM proxy named by `RUNLOG_LITELLM` (its `litellm` command), one worker, no
/// database, a master key, offline, in front of `provider`: its address once it answers.
fn litellm(dir: &Path, provider: &str) -> Option<(std::process::Child, String)> {
    let command = std::env::var("RUNLOG_LITELLM").ok()?;
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port();
    let config = dir.join("litellm.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:\n  - model_name: claude-x\n    litellm_params:\n      \
             model: anthropic/claude-x\n      api_base: {provider}\n      api_key: sk-ant-x\n\
             general_settings:\n  master_key: sk-litellm\n"
        ),
    )
    .ok()?;
    let child = std::process::Command::new(command)
        .args(["--config", config.to_str()?, "--port", &port.to_string()])
        .args(["--host", "127.0.0.1", "--num_workers", "1"])
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(dir.join("litellm.log")).ok()?)
        .spawn()
        .ok()?;
    let url = format!("http://127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Some((child, url));
        }
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    None
}

fn goal(met: bool, words: &str) -> String {
    format!("{}: {words}", if met { "met" } else { "NOT MET" })
}

fn main() {
    let calls: usize = std::env::var("RUNLOG_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let parts =
        std::env::var("RUNLOG_BENCH_PARTS").unwrap_or_else(|_| "sequential,large,crowd".to_owned());
    let part = |name: &str| parts.split(',').any(|p| p.trim() == name);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("client.py"), CLIENT).unwrap();
    let answered = Answered::default();
    let base = &provider(answered.clone());
    let sequential = Load {
        calls,
        clients: 1,
        request_bytes: 0,
        think_ms: 0,
    };
    // Warm the provider and Python's imports, then measure.
    direct(
        dir.path(),
        base,
        Load {
            calls: 20,
            ..sequential
        },
    );
    if part("sequential") {
        one_by_one(dir.path(), base, sequential);
    }
    if part("large") {
        large_requests(dir.path(), base, &answered, sequential);
    }
    if part("crowd") {
        crowded(dir.path(), base, sequential);
    }
}

/// Sequential calls: direct, through `runlog run`, under a budget, and through LiteLLM.
fn one_by_one(dir: &Path, base: &str, sequential: Load) {
    let calls = sequential.calls;
    let alone = direct(dir, base, sequential);
    let free = through_runlog(dir, base, sequential, "unbudgeted", "");
    let held = through_runlog(dir, base, sequential, "budgeted", "max_cost_usd = 1000.0\n");
    let beside = litellm(dir, base).map(|(mut proxy, url)| {
        client_of(
            dir,
            &url,
            "sk-litellm",
            Load {
                calls: 20,
                ..sequential
            },
        );
        let took = client_of(dir, &url, "sk-litellm", sequential);
        let _ = proxy.kill();
        let _ = proxy.wait();
        took
    });
    let (p50, p99) = (alone.quantile(0.5), alone.quantile(0.99));
    println!("{calls} sequential calls, 10 KB answers, one kept-alive connection");
    println!("direct:                 p50 {p50:.3} ms, p99 {p99:.3} ms");
    let mut compared = vec![("through runlog run", &free), ("… under a budget", &held)];
    if let Some(proxy) = &beside {
        compared.push(("through LiteLLM proxy", proxy));
    }
    for (what, took) in compared {
        let (q50, q99) = (took.quantile(0.5), took.quantile(0.99));
        let (a50, a99) = (q50 - p50, q99 - p99);
        println!(
            "{what:<23} p50 {q50:.3} ms, p99 {q99:.3} ms: added p50 {a50:+.3} ms ({}), p99 {a99:+.3} ms ({})",
            goal(a50 <= 0.5, "≤ 0.5"),
            goal(a99 <= 2.0, "≤ 2"),
        );
    }
    match &beside {
        Some(proxy) => println!(
            "LiteLLM proxy adds {:.1}× what runlog run adds at p50, {:.1}× at p99",
            (proxy.quantile(0.5) - p50) / (free.quantile(0.5) - p50),
            (proxy.quantile(0.99) - p99) / (free.quantile(0.99) - p99),
        ),
        None => println!(
            "LiteLLM proxy: not measured; set RUNLOG_LITELLM to its litellm command \
             (pip install 'litellm[proxy]' into a venv)"
        ),
    }
}

/// 1 MB requests to a model that takes 50 ms, beside small ones: what the gateway adds to the
/// whole call, and what it adds after the provider has answered (the answer's path, where the
/// request's storing would show; the whole call also holds relaying the request's megabyte).
fn large_requests(dir: &Path, base: &str, answered: &Answered, sequential: Load) {
    let calls = sequential.calls;
    let thinking = Load {
        calls: calls.min(100),
        think_ms: 50,
        ..sequential
    };
    let large = Load {
        request_bytes: 1 << 20,
        ..thinking
    };
    let measure = |load: Load, name: &str| {
        let alone = direct(dir, base, load);
        answered.lock().unwrap().clear();
        let through = through_runlog(dir, base, load, name, "");
        let gave = std::mem::take(&mut *answered.lock().unwrap());
        assert_eq!(gave.len(), through.ends.len(), "one answer a call");
        let mut after: Vec<f64> = gave
            .iter()
            .zip(&through.ends)
            .map(|(gave, read)| (read.saturating_sub(*gave)) as f64 / 1e6)
            .collect();
        after.sort_by(f64::total_cmp);
        let after = Took {
            sorted: after,
            seconds: through.seconds,
            ends: Vec::new(),
        };
        (
            through.quantile(0.5) - alone.quantile(0.5),
            after.quantile(0.5),
        )
    };
    let (small_added, small_after) = measure(thinking, "thinking");
    let (large_added, large_after) = measure(large, "large");
    let delay = large_after - small_after;
    println!(
        "{} calls, 50 ms model: added p50 {small_added:+.3} ms with a small request, \
         {large_added:+.3} ms with 1 MB (relaying it included)",
        thinking.calls,
    );
    println!(
        "  from the provider's answer to the client's last byte, p50: {small_after:.3} ms with a \
         small request, {large_after:.3} ms with 1 MB: storing it delays the answer \
         {delay:+.3} ms ({})",
        goal(delay <= 1.0, "≤ 1")
    );
}

/// 16 clients at once.
fn crowded(dir: &Path, base: &str, sequential: Load) {
    let calls = sequential.calls;
    // 16 clients at once, each call recorded durably before its answer ends.
    let crowd = Load {
        calls: (calls * 8).max(2_000),
        clients: 16,
        ..sequential
    };
    let alone = direct(dir, base, crowd);
    let through = through_runlog(dir, base, crowd, "crowd", "");
    println!(
        "{} calls from 16 clients: direct {:.0} calls/s, through runlog run {:.0} calls/s ({}), \
         p50 {:.3} ms, p99 {:.3} ms",
        crowd.calls,
        alone.rate(),
        through.rate(),
        goal(through.rate() >= 3_000.0, "≥ 3,000"),
        through.quantile(0.5),
        through.quantile(0.99),
    );
}
