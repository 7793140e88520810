//! One question, one answer: every query the command line and the API both answer gives the
//! same bytes from `runlog … --json` as from `runlog serve`'s `GET`, on runs that hold what
//! each query reads (evals, stages, costs, model calls, a fork to compare).

mod common;

use common::{repo, request, runlog, text};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

fn ok(store: &Path, args: &[&str]) -> String {
    let out = runlog(store).args(args).output().unwrap();
    assert!(out.status.success(), "runlog {args:?}: {}", text(&out));
    String::from_utf8(out.stdout).unwrap()
}

fn get(store: &Path, path: &str) -> (u16, String) {
    let mut s = UnixStream::connect(store.join("api.sock")).unwrap();
    request(&mut s, "GET", path, &[], "")
}

#[test]
fn every_query_the_cli_and_the_api_share_gives_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    for run in [
        "quickstart",
        "seed-001-eval-gate",
        "seed-002-supervisor",
        "agent-costs",
        "release-notes",
    ] {
        let file = repo().join(format!("fixtures/runs/{run}.jsonl"));
        ok(&store, &["import", file.to_str().unwrap()]);
    }
    ok(
        &store,
        &["fork", "quickstart", "--at", "12", "--as", "qfork"],
    );
    let server = common::serve_socket(&store);

    let shared: &[(&[&str], &str)] = &[
        (&["runs"], "/v1/runs"),
        (&["status", "quickstart"], "/v1/runs/quickstart"),
        (
            &["audit", "seed-001-eval-gate"],
            "/v1/runs/seed-001-eval-gate/audit",
        ),
        (&["cost", "agent-costs"], "/v1/runs/agent-costs/cost"),
        (
            &["cost", "agent-costs", "--by", "model"],
            "/v1/runs/agent-costs/cost?by=model",
        ),
        (
            &["stack", "seed-002-supervisor"],
            "/v1/runs/seed-002-supervisor/stack",
        ),
        (
            &["stack", "seed-002-supervisor", "--at", "9"],
            "/v1/runs/seed-002-supervisor/stack?at=9",
        ),
        (
            &["stages", "seed-002-supervisor"],
            "/v1/runs/seed-002-supervisor/stages",
        ),
        (&["verify", "quickstart"], "/v1/runs/quickstart/verify"),
        (&["digest", "quickstart"], "/v1/runs/quickstart/digest"),
        (
            &["diff", "quickstart", "qfork"],
            "/v1/diff?left=quickstart&right=qfork",
        ),
        (
            &["show", "release-notes", "notes", "--calls"],
            "/v1/runs/release-notes/tasks/notes/calls",
        ),
        (&["judges"], "/v1/judges"),
        (&["review"], "/v1/review"),
    ];
    let mut differ = Vec::new();
    for (args, path) in shared {
        let mut with_json = args.to_vec();
        with_json.push("--json");
        let cli = ok(&store, &with_json);
        let (status, api) = get(&store, path);
        assert_eq!(status, 200, "GET {path}: {api}");
        // The CLI ends its one line with a newline; the body is that line.
        if cli.strip_suffix('\n') != Some(api.as_str()) {
            differ.push(format!(
                "runlog {}\n  cli: {cli}\n  api: {api}",
                with_json.join(" ")
            ));
        }
    }
    // The export is JSON lines both ways, with no --json.
    let export = ok(&store, &["export", "quickstart"]);
    let (status, api) = get(&store, "/v1/runs/quickstart/export");
    assert_eq!(status, 200);
    if export != api {
        differ.push("runlog export quickstart".into());
    }

    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let out = common::finish_within(server, Duration::from_secs(30), "runlog serve");
    assert!(out.status.success(), "serve: {}", text(&out));
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}
