//! A server whose certificate was made by hand as `openssl req -x509` makes it: a CA
//! certificate the server presents as its own. webpki refuses such a certificate even when it
//! is the very file given; runlog trusts exactly the certificate given (its names still
//! checked), through each of its TLS clients: `runlog run --server --ca` and the runner's HTTP
//! client (OTLP exports and the gateway's providers, `--otlp-ca` and `ca_file`).

mod common;

use common::tls::self_made;
use common::{finish_within, runlog, text, workflow};
use std::time::Duration;

#[test]
fn the_very_certificate_given_is_trusted_and_another_is_refused_with_how_to_fix_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("server-store");
    let here = dir.path().join("client-store");
    let (cert, key) = self_made(dir.path(), "server", &["127.0.0.1", "localhost"]);
    let (elsewhere, _) = self_made(dir.path(), "elsewhere", &["127.0.0.1"]);
    let wf = workflow(
        dir.path(),
        "one",
        "name = \"one\"\n[settings]\nworkspace = \"none\"\n[[task]]\nid = \"a\"\nrun = \"echo hi\"\n\
         requires_testing = false\n",
    );
    let args = [
        std::ffi::OsStr::new("--tls-cert"),
        cert.as_os_str(),
        std::ffi::OsStr::new("--tls-key"),
        key.as_os_str(),
    ];
    let (server, url) = common::serve_http(&store, &args);
    assert!(url.starts_with("https://"), "{url}");

    // The CLI's client: the certificate given is the server's own.
    let remote = |ca: &std::path::Path, run: &str| {
        runlog(&here)
            .args([
                "run",
                wf.to_str().unwrap(),
                "--run-id",
                run,
                "--server",
                &url,
            ])
            .args(["--ca", ca.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = remote(&cert, "remote-1");
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("run remote-1 succeeded"),
        "{}",
        text(&out)
    );
    // Another self-made certificate: refused, and the hint says what is wrong and the fix.
    let out = remote(&elsewhere, "remote-2");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("presents a CA certificate as its own"),
        "{}",
        text(&out)
    );

    // The runner's client (OTLP, the gateway's providers): the handshake passes, and the
    // answer is the server's own (runlog serve takes no traces: 404).
    let export = |ca: &std::path::Path| {
        runlog(&store)
            .args(["export", "remote-1", "--otlp", &format!("{url}/v1/traces")])
            .args(["--otlp-ca", ca.to_str().unwrap()])
            .output()
            .unwrap()
    };
    let out = export(&cert);
    assert!(!text(&out).contains("certificate"), "{}", text(&out));
    assert!(text(&out).contains("404"), "{}", text(&out));
    let out = export(&elsewhere);
    assert!(
        text(&out).contains("presents a CA certificate as its own")
            && text(&out).contains("--otlp-ca"),
        "{}",
        text(&out)
    );

    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    finish_within(server, Duration::from_secs(30), "runlog serve");
}
