//! Across machines safely, through the real binary: the API over HTTPS with a CA made here
//! (rcgen), curl and headless chromium trusting it, mutual TLS accepted and refused, the
//! certificate reloaded on SIGHUP, plain HTTP with tokens refused off loopback; the shared
//! store on a PostgreSQL that takes TLS only; and an agent that leaks its key every way it can,
//! with the key found nowhere runlog keeps or hands out.

mod common;

use common::tls::{ca, signed};
use common::{finish_within, runlog, text, wait_for, workflow};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// The server and its address with the final `/`.
fn serve(store: &Path, args: &[&str]) -> (Child, String) {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    let (child, url) = common::serve_http(store, &args);
    (child, format!("{url}/"))
}

fn stop(server: Child) -> String {
    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = finish_within(server, Duration::from_secs(30), "runlog serve");
    assert!(out.status.success(), "serve: {}", text(&out));
    text(&out)
}

/// curl's exit code and body for `url`, with `args` (`--cacert`, `--cert`...).
fn curl(url: &str, args: &[&str]) -> (i32, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20"])
        .args(args)
        .arg(url)
        .output()
        .expect("curl (apt-get install -y curl)");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn the_api_and_the_web_view_answer_over_https_and_mutual_tls_names_who_acted() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let team = ca(dir.path(), "team-ca");
    let (cert, key) = signed(&team, dir.path(), "server", &["127.0.0.1", "localhost"]);
    let (alice, alice_key) = signed(&team, dir.path(), "alice", &["alice"]);
    let stranger_ca = ca(dir.path(), "stranger-ca");
    let (mallory, mallory_key) = signed(&stranger_ca, dir.path(), "mallory", &["mallory"]);
    let wf = workflow(
        dir.path(),
        "one",
        "name = \"one\"\n[settings]\nworkspace = \"none\"\n[[task]]\nid = \"a\"\nrun = \"true\"\n",
    );
    let out = runlog(&store)
        .args(["run", s(&wf), "--run-id", "r1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));

    let (server, url) = serve(
        &store,
        &[
            "--tls-cert",
            s(&cert),
            "--tls-key",
            s(&key),
            "--client-ca",
            s(&team.cert),
        ],
    );
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let runs = format!("{url}v1/runs");
    let ca_arg = ["--cacert", s(&team.cert)];
    let as_alice = [&ca_arg[..], &["--cert", s(&alice), "--key", s(&alice_key)]].concat();

    let (code, body) = curl(&runs, &as_alice);
    assert_eq!(code, 0, "{body}");
    assert!(body.contains("\"run\":\"r1\""), "{body}");
    // The web view too, over the same listener.
    let (code, page) = curl(&url, &as_alice);
    assert_eq!(code, 0, "{page}");
    assert!(page.contains("<html"), "{page}");

    // Without a certificate, or with one from another CA: no answer at all.
    let (code, body) = curl(&runs, &ca_arg);
    assert_ne!(code, 0, "no client certificate, yet: {body}");
    let as_mallory = [
        &ca_arg[..],
        &["--cert", s(&mallory), "--key", s(&mallory_key)],
    ]
    .concat();
    let (code, body) = curl(&runs, &as_mallory);
    assert_ne!(code, 0, "a stranger's certificate, yet: {body}");
    // Plain HTTP to the same port is not served.
    let (code, body) = curl(&runs.replace("https://", "http://"), &[]);
    assert!(code != 0 || !body.contains("\"run\""), "{body}");
    // A client that does not trust the CA refuses the server.
    let (code, body) = curl(&runs, &[]);
    assert_ne!(
        code, 0,
        "curl trusted a certificate it has no CA for: {body}"
    );

    // A decision over mutual TLS is recorded as the certificate's subject.
    let budget = format!("{url}v1/runs/r1/budget");
    let (code, body) = curl(
        &budget,
        &[
            &as_alice[..],
            &[
                "-X",
                "POST",
                "-H",
                "content-type: application/json",
                "-d",
                "{\"max_cost_usd\": 2.0}",
            ],
        ]
        .concat(),
    );
    assert_eq!(code, 0, "{body}");
    assert!(body.contains("budget-set"), "{body}");
    stop(server);
    let log = runlog(&store)
        .args(["--json", "log", "r1"])
        .output()
        .unwrap();
    let log = text(&log);
    assert!(
        log.contains("\"principal\":\"CN=alice\"")
            && log.contains("\"via\":\"client-certificate\""),
        "{log}"
    );
}

#[test]
fn the_python_example_drives_a_run_over_https_with_a_token() {
    if Command::new("python3").arg("--version").output().is_err() {
        panic!("this test runs examples/approve_over_socket.py and needs python3 (apt-get install -y python3)");
    }
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let team = ca(dir.path(), "team-ca");
    let (cert, key) = signed(&team, dir.path(), "server", &["127.0.0.1"]);
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "py run 0123456789abcdef0123456789abcdef\n").unwrap();
    let (server, url) = serve(
        &store,
        &[
            "--tls-cert",
            s(&cert),
            "--tls-key",
            s(&key),
            "--token-file",
            s(&tokens),
        ],
    );
    let out = Command::new("python3")
        .arg(common::repo().join("examples/approve_over_socket.py"))
        .args([url.trim_end_matches('/'), "py-run", "--ca", s(&team.cert)])
        .env("RUNLOG_TOKEN", "0123456789abcdef0123456789abcdef")
        .output()
        .unwrap();
    stop(server);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("approved draft"), "{}", text(&out));
}

#[test]
fn runlog_run_submits_to_a_server_on_another_host_and_follows_it_over_https() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("server-store");
    let here = dir.path().join("client-store");
    let team = ca(dir.path(), "team-ca");
    let other = ca(dir.path(), "other-ca");
    let (cert, key) = signed(&team, dir.path(), "server", &["127.0.0.1"]);
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "launcher run 0123456789abcdef0123456789abcdef\n").unwrap();
    let wf = workflow(
        dir.path(),
        "two",
        "name = \"two\"\n[settings]\nworkspace = \"none\"\n[[task]]\nid = \"a\"\nrun = \"echo hi\"\n\
         [[task]]\nid = \"b\"\nafter = [\"a\"]\nrun = \"true\"\n",
    );
    let (server, url) = serve(
        &store,
        &[
            "--tls-cert",
            s(&cert),
            "--tls-key",
            s(&key),
            "--token-file",
            s(&tokens),
        ],
    );
    let remote = |ca: &Path, token: &str| {
        runlog(&here)
            .args([
                "run",
                s(&wf),
                "--run-id",
                "remote-1",
                "--server",
                url.trim_end_matches('/'),
            ])
            .args(["--ca", s(ca)])
            .env("RUNLOG_TOKEN", token)
            .output()
            .unwrap()
    };
    // A CA that did not sign the server's certificate: refused before anything is sent.
    let out = remote(&other.cert, "0123456789abcdef0123456789abcdef");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("--ca"), "{}", text(&out));
    // No token: the server's refusal, and where the token goes.
    let out = remote(&team.cert, "");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("RUNLOG_TOKEN"), "{}", text(&out));
    // Submitted, followed to its end, summarised from what the stream sent.
    let out = remote(&team.cert, "0123456789abcdef0123456789abcdef");
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("run remote-1 succeeded"), "{said}");
    assert!(said.contains("tasks: 2 done"), "{said}");
    stop(server);
    // The run is in the server's store, not here.
    assert!(
        !here.exists() || !text(&runlog(&here).arg("runs").output().unwrap()).contains("remote-1")
    );
    let board = runlog(&store)
        .args(["status", "remote-1"])
        .output()
        .unwrap();
    assert!(board.status.success(), "{}", text(&board));
    // A plain http:// server is refused on this side.
    let out = runlog(&here)
        .args(["run", s(&wf), "--server", "http://127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn a_sighup_reloads_the_certificate_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let first = ca(dir.path(), "first-ca");
    let second = ca(dir.path(), "second-ca");
    let (cert, key) = signed(&first, dir.path(), "server", &["127.0.0.1"]);
    let (server, url) = serve(&store, &["--tls-cert", s(&cert), "--tls-key", s(&key)]);
    let runs = format!("{url}v1/runs");
    assert_eq!(curl(&runs, &["--cacert", s(&first.cert)]).0, 0);

    // New files in place, then SIGHUP: new connections get the new certificate.
    let (new_cert, new_key) = signed(&second, dir.path(), "server-2", &["127.0.0.1"]);
    std::fs::copy(&new_cert, &cert).unwrap();
    std::fs::copy(&new_key, &key).unwrap();
    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    wait_for(|| curl(&runs, &["--cacert", s(&second.cert)]).0 == 0);
    assert_ne!(curl(&runs, &["--cacert", s(&first.cert)]).0, 0);

    // A broken file on the next SIGHUP keeps the certificate in use.
    std::fs::write(&key, "not a key").unwrap();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(curl(&runs, &["--cacert", s(&second.cert)]).0, 0);
    let said = stop(server);
    assert!(said.contains("TLS certificate reloaded"), "{said}");
    assert!(said.contains("the TLS certificate in use stays"), "{said}");
}

#[test]
fn tokens_in_clear_off_loopback_are_refused_unless_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let tokens = dir.path().join("tokens");
    std::fs::write(&tokens, "ci run 0123456789abcdef0123456789abcdef\n").unwrap();
    let out = runlog(&store)
        .args(["serve", "--http", "0.0.0.0:0", "--token-file", s(&tokens)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--tls-cert"), "{}", text(&out));
    assert!(!store.join("api.sock").exists());
    // Bad TLS files are named, nothing served.
    let out = runlog(&store)
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            s(&tokens),
            "--tls-key",
            s(&tokens),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("no certificate"), "{}", text(&out));
}

#[test]
fn headless_chromium_trusting_the_certificate_shows_the_web_view() {
    let Some(chromium) = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok())
    else {
        assert!(
            std::env::var_os("RUNLOG_REQUIRE_BROWSER").is_none(),
            "no chromium (apt-get install -y chromium)"
        );
        eprintln!("SKIPPED: no chromium for this test (apt-get install -y chromium; bash .ci/run does it)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let team = ca(dir.path(), "team-ca");
    let (cert, key) = signed(&team, dir.path(), "server", &["127.0.0.1"]);
    let (server, url) = serve(&store, &["--tls-cert", s(&cert), "--tls-key", s(&key)]);
    // Chromium trusts the server's key (its SPKI hash), as a team would add its CA.
    let spki = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "openssl x509 -in {} -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64",
            s(&cert)
        ))
        .output()
        .unwrap();
    let spki = String::from_utf8_lossy(&spki.stdout).trim().to_owned();
    let profile = dir.path().join("profile");
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", s(&profile)))
        .arg(format!("--ignore-certificate-errors-spki-list={spki}"))
        .args(["--dump-dom", &url])
        .output()
        .unwrap();
    stop(server);
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains("runlog"),
        "chromium showed: {dom}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_shared_store_connects_over_tls_only_as_asked() {
    let Some(db) = runlog_store::postgres::scratch::scratch_tls() else {
        return;
    };
    let certs = PathBuf::from(std::env::var("RUNLOG_TEST_POSTGRES_TLS_DIR").unwrap());
    let base = db
        .url
        .split_once('?')
        .map_or(db.url.as_str(), |(b, _)| b)
        .to_owned();
    let runs = |query: &str| {
        let url = format!("{base}?{query}");
        let out = runlog(Path::new(&url)).arg("runs").output().unwrap();
        (out.status.success(), text(&out))
    };
    let ca = certs.join("ca.pem");
    for ok in [
        "sslmode=require".to_owned(),
        format!("sslmode=verify-full&sslrootcert={}", s(&ca)),
        format!("sslmode=verify-ca&sslrootcert={}", s(&ca)),
    ] {
        let (success, said) = runs(&ok);
        assert!(success, "{ok}: {said}");
    }
    let (success, said) = runs("sslmode=disable");
    assert!(!success);
    assert!(
        said.contains("sslmode=disable") && said.contains("sslmode=require"),
        "{said}"
    );
    let wrong = certs.join("other-ca.pem");
    let (success, said) = runs(&format!("sslmode=verify-full&sslrootcert={}", s(&wrong)));
    assert!(!success);
    assert!(
        said.contains("sslrootcert") && said.contains("sslmode=verify-full"),
        "{said}"
    );
    assert!(
        !said.contains("runlog-ci"),
        "a password in a message: {said}"
    );
    // The PG* variables count when the URL is silent.
    let out = runlog(Path::new(&base))
        .arg("runs")
        .env("PGSSLMODE", "verify-full")
        .env("PGSSLROOTCERT", &wrong)
        .output()
        .unwrap();
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("sslmode=verify-full"), "{}", text(&out));
    // A client certificate authenticates the user the server knows only by it.
    let host = base.split('@').nth(1).unwrap().split('/').next().unwrap();
    let by_cert = format!(
        "postgres://runlog_cert@{host}/runlog_cert?sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
        s(&ca),
        s(&certs.join("client.pem")),
        s(&certs.join("client.key"))
    );
    let out = runlog(Path::new(&by_cert)).arg("runs").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

/// A value no key shape matches: only its variable's name says it is a secret.
const KEY: &str = "zq-live-7a41c0ffee93b8d2e5f6";
const AWS: &str = "AKIAZQ7LEAKLEAKLEAK7";

#[test]
fn a_leaked_key_is_in_no_file_no_export_no_span_and_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    std::fs::write(
        dir.path().join("leak.sh"),
        format!(
            "echo \"calling the model with $AGENT_API_KEY\"\nenv\necho \"aws {AWS}\" >&2\n\
             printf '{{\"summary\":\"used %s\",\"result\":{{\"key\":\"%s\"}}}}\\n' \"$AGENT_API_KEY\" \"$AGENT_API_KEY\"\n\
             head -c 300000 /dev/zero | tr '\\0' x\necho \" $AGENT_API_KEY\"\ncat more-secrets\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("judge.sh"),
        "echo \"{\\\"score\\\": 0.9, \\\"feedback\\\": \\\"key $AGENT_API_KEY seen\\\"}\"\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("more-secrets"), "LISTED=listed-value-42\n").unwrap();
    let wf = workflow(
        dir.path(),
        "leaky",
        "name = \"leaky\"\n[settings]\nworkspace = \"none\"\nredact_file = \"more-secrets\"\n\
         [[task]]\nid = \"leak\"\nrun = \"sh leak.sh\"\neval = \"sh judge.sh\"\n",
    );
    let out = runlog(&store)
        .args(["run", s(&wf), "--run-id", "leaky"])
        .env("AGENT_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains(KEY), "the terminal showed the key");

    // Every file under the store: sled, the WAL, the archive, blobs, histories, feedback.
    let mut files = Vec::new();
    let mut stack = vec![store.clone()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    assert!(files
        .iter()
        .any(|f| f.to_string_lossy().contains("archive") || f.to_string_lossy().contains("wal")));
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        for secret in [KEY, AWS, "listed-value-42"] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} in {}",
                f.display()
            );
        }
    }
    // What runlog hands out: the export, the trace, the log's words, the API's answers.
    let mut given = Vec::new();
    for args in [
        vec!["export", "leaky"],
        vec!["export", "leaky", "--format", "otlp-json"],
        vec!["--json", "log", "leaky"],
        vec!["show", "leaky", "leak"],
    ] {
        let out = runlog(&store).args(&args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out));
        given.push(text(&out));
    }
    let (server, url) = serve(&store, &[]);
    for path in [
        "v1/runs/leaky/events",
        "v1/runs/leaky",
        "v1/runs/leaky/audit",
    ] {
        let (code, body) = curl(&format!("{url}{path}"), &[]);
        assert_eq!(code, 0, "{body}");
        given.push(body);
    }
    stop(server);
    for text in &given {
        assert!(!text.contains(KEY) && !text.contains(AWS) && !text.contains("listed-value-42"));
    }
    // The redaction is on record: by name and count, in the log and the audit.
    let audit = text(&runlog(&store).args(["audit", "leaky"]).output().unwrap());
    assert!(
        audit.contains("secrets redacted: AGENT_API_KEY ×"),
        "{audit}"
    );
    assert!(
        audit.contains("LISTED ×1") && audit.contains("aws-access-key ×1"),
        "{audit}"
    );
    let show = &given[3];
    assert!(show.contains("[redacted:AGENT_API_KEY]"), "{show}");

    // `verify --secrets` finds nothing in this store, and finds a key recorded before redaction
    // knew it (a message with a value no variable names).
    let secrets = dir.path().join("secrets");
    std::fs::write(
        &secrets,
        format!("AGENT_API_KEY={KEY}\nOLD=hunter2-hunter2\n"),
    )
    .unwrap();
    let out = runlog(&store)
        .args(["verify", "--secrets", s(&secrets)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let line = "{\"command\":\"post-message\",\"task\":\"leak\",\"from\":\"ops\",\"text\":\"the password is hunter2-hunter2\"}\n";
    let out = common::emit(&store, "leaky", line);
    assert!(out.status.success(), "{}", text(&out));
    let out = runlog(&store)
        .args(["verify", "--secrets", s(&secrets)])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("secret OLD at seq"), "{}", text(&out));
    assert!(
        !text(&out).contains("hunter2-hunter2"),
        "verify printed the value"
    );
}
