//! A private store (issue 15, item 2), through the real binary started under umask 000: the
//! store directory is 0700 and everything runlog writes in it (log, WAL, blobs, worktrees,
//! feedback files, sockets) is closed to other users, while an agent's own files keep the
//! user's umask; a store other users can write is refused with a hint.

mod common;

use common::{runlog, text, wait_for};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `cmd`, started by a shell that first sets umask 000: the most open a user could be.
fn under_umask_000(cmd: &Command) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg("umask 000; exec \"$@\"")
        .arg("sh")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_remove("RUNLOG_STORE")
        .env("NO_COLOR", "1");
    if let Some(dir) = cmd.get_current_dir() {
        sh.current_dir(dir);
    }
    sh
}

/// Every path below `dir` with its permission bits.
fn modes(dir: &Path) -> Vec<(PathBuf, u32)> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                todo.push(path.clone());
            }
            found.push((path, meta.mode() & 0o7777));
        }
    }
    found
}

#[test]
fn a_store_made_under_umask_000_is_private_and_agents_keep_the_users_umask() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = common::workflow(
        dir.path(),
        "mine",
        "name = \"mine\"\n[[task]]\nid = \"a\"\nrun = \"echo made > \\\"$RUNLOG_WORKTREE/agent-file\\\"\"\nrequires_testing = false\n",
    );
    let mut run = runlog(&store);
    run.args(["run", wf.to_str().unwrap(), "--run-id", "r1", "--quiet"]);
    let out = under_umask_000(&run).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // The server's sockets too.
    let mut serve = runlog(&store);
    serve.arg("serve");
    let mut server = under_umask_000(&serve)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(|| store.join("api.sock").exists());
    let agent_file = store.join("worktrees/r1/a/agent-file");
    let found = modes(&store);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(server.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    server.wait().unwrap();

    let store_mode = std::fs::metadata(&store).unwrap().permissions().mode() & 0o7777;
    assert_eq!(store_mode, 0o700, "the store directory");
    assert!(found.iter().any(|(p, _)| p.ends_with("api.sock")));
    let named = |end: &str| {
        found
            .iter()
            .any(|(p, _)| p.to_string_lossy().ends_with(end))
    };
    assert!(named(".0.feedback") && named(".0.history.jsonl"));
    assert!(found.iter().any(|(p, _)| p.starts_with(store.join("db"))));
    for (path, mode) in &found {
        if *path == agent_file {
            // The agent's own file: the user's umask (000), not runlog's.
            assert_eq!(*mode, 0o666, "{}", path.display());
        } else {
            assert_eq!(mode & 0o077, 0, "{} is mode {mode:o}", path.display());
        }
    }
    assert!(found.iter().any(|(p, _)| *p == agent_file), "the agent ran");
}

#[test]
fn a_store_other_users_can_write_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let out = runlog(&store)
        .arg("import")
        .arg(common::repo().join("fixtures/runs/quickstart.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = runlog(&store).arg("runs").output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("can be written by other users"), "{said}");
    assert!(said.contains("chmod 700"), "{said}");
    // Made private again, it opens as before.
    std::fs::set_permissions(&store, std::fs::Permissions::from_mode(0o700)).unwrap();
    let out = runlog(&store).arg("runs").output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
}
