//! What git workspaces cost on a real-sized repository: a 200-task workflow in a git workspace
//! (`runlog run --jobs 8`) on a generated repository of 5,000 files, each task writing one file
//! (so each commits, and is merged), beside the floor of the same git work done by a shell
//! loop: per task `git worktree add`, the file written, `git add` and `git commit`, eight at a
//! time; then each task's merge into one branch in turn (`merge-tree`, `commit-tree`,
//! `update-ref`, as runlog merges). Rounds (`RUNLOG_BENCH_ROUNDS`, 3) alternate which goes
//! first. Also the disk a finished run leaves: its worktrees against one checkout.
//!
//! `cargo bench -p runlog-cli --bench workspaces` (about five minutes);
//! `RUNLOG_BENCH_TASKS` and `RUNLOG_BENCH_FILES` for other sizes. Prints its goals: at most
//! 1.5× the floor, and at most 2 checkouts left behind. Asserts nothing about time.

#[path = "../tests/common/mod.rs"]
mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const JOBS: u32 = 8;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A repository of `files` files of about 1 KB in 50 directories, committed on `main`, with
/// the workflow of `tasks` tasks beside them.
fn repository(dir: &Path, files: usize, tasks: usize) -> PathBuf {
    let repo = dir.join("repo");
    for i in 0..files {
        let sub = repo.join(format!("src/mod{:02}", i % 50));
        std::fs::create_dir_all(&sub).unwrap();
        let body: String = (0..16).fold(String::new(), |mut s, line| {
            let _ = writeln!(s, "def f{i}_{line}(x):  return x * {line} + {i}  # filler");
            s
        });
        std::fs::write(sub.join(format!("file{i:05}.py")), body).unwrap();
    }
    let mut wf = String::from("name = \"bench\"\n[settings]\njobs = 8\n");
    for t in 0..tasks {
        let _ = write!(
            wf,
            "[[task]]\nid = \"t{t}\"\nrun = \"mkdir -p out && echo {t} > out/t{t}.txt\"\nrequires_testing = false\n"
        );
    }
    std::fs::write(repo.join("wf.toml"), wf).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "start"]);
    repo
}

/// A copy of the pristine repository for one round (each round starts from the same one).
fn fresh(pristine: &Path, dir: &Path, name: &str) -> PathBuf {
    let copy = dir.join(name);
    let out = Command::new("cp")
        .arg("-a")
        .arg(pristine)
        .arg(&copy)
        .output()
        .unwrap();
    assert!(out.status.success());
    copy
}

/// `runlog run` of the workflow in a git workspace; its time and the store it used.
fn runner(repo: &Path) -> (Duration, PathBuf) {
    let store = repo.with_extension("store");
    let wf = repo.join("wf.toml");
    let started = Instant::now();
    let out = common::runlog(&store)
        .args(["run", wf.to_str().unwrap(), "--quiet", "--run-id", "bench"])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", common::text(&out));
    (took, store)
}

/// The floor: the same git work from a shell, `JOBS` tasks at a time, then the merges. Each
/// `git worktree add` takes its turn (`flock`) without checking out, since git reads the other
/// worktrees' entries as it adds one and fails on one half made by another add at the same
/// moment; the checkout itself (`reset --hard`, writing every file) runs eight at a time.
fn floor(repo: &Path, tasks: usize) -> Duration {
    let script = r#"
        set -e
        cd "$1"; t="$2"
        flock "$1.lock" git worktree add -q --no-checkout -b "task/$t" "$1.wt/$t" main
        cd "$1.wt/$t"; git reset -q --hard; mkdir -p out; echo "$t" > "out/$t.txt"
        git add -A; git commit -q -m "task $t"
    "#;
    let started = Instant::now();
    let mut xargs = Command::new("xargs")
        .args(["-P", &JOBS.to_string(), "-n", "1", "sh", "-c", script, "sh"])
        .arg(repo)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.invalid")
        .env("GIT_COMMITTER_NAME", "bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.invalid")
        .spawn()
        .unwrap();
    let input: String = (0..tasks).map(|i| format!("t{i}\n")).collect();
    std::io::Write::write_all(xargs.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
    drop(xargs.stdin.take());
    assert!(xargs.wait().unwrap().success());
    git(repo, &["branch", "-q", "integration", "main"]);
    for t in 0..tasks {
        let ours = git(repo, &["rev-parse", "integration"]);
        let theirs = format!("task/t{t}");
        let tree = git(repo, &["merge-tree", "--write-tree", &ours, &theirs]);
        let merge = git(
            repo,
            &[
                "commit-tree",
                &tree,
                "-p",
                &ours,
                "-p",
                &theirs,
                "-m",
                "merge",
            ],
        );
        git(
            repo,
            &["update-ref", "refs/heads/integration", &merge, &ours],
        );
    }
    started.elapsed()
}

/// Bytes under `dir` (apparent sizes) and the checkouts (directories with `.git`) in it.
fn left_behind(dir: &Path) -> (u64, usize) {
    let checkouts = std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| e.path().join(".git").exists())
            .count()
    });
    (common::apparent_bytes(dir), checkouts)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let tasks = setting("RUNLOG_BENCH_TASKS", 200);
    let files = setting("RUNLOG_BENCH_FILES", 5_000);
    let rounds = setting("RUNLOG_BENCH_ROUNDS", 3).max(1);
    let dir = tempfile::tempdir().unwrap();
    let pristine = repository(&dir.path().join("pristine"), files, tasks);
    let (checkout_bytes, _) = {
        let work = dir.path().join("checkout");
        git(
            &pristine,
            &["worktree", "add", "-q", "--detach", work.to_str().unwrap()],
        );
        let size = left_behind(&work);
        git(
            &pristine,
            &["worktree", "remove", "--force", work.to_str().unwrap()],
        );
        size
    };
    println!(
        "workspaces: {tasks} tasks, jobs {JOBS}, on a repository of {files} files ({:.1} MB a checkout), {rounds} round(s)",
        checkout_bytes as f64 / 1e6
    );
    let (mut ours, mut floors, mut ratios, mut left) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        let ours_repo = fresh(&pristine, dir.path(), &format!("ours-{round}"));
        let floor_repo = fresh(&pristine, dir.path(), &format!("floor-{round}"));
        let ((o, store), f) = if round % 2 == 0 {
            let f = floor(&floor_repo, tasks);
            (runner(&ours_repo), f)
        } else {
            let o = runner(&ours_repo);
            (o, floor(&floor_repo, tasks))
        };
        let (bytes, checkouts) = left_behind(&store.join("worktrees").join("bench"));
        println!(
            "  round {}: runlog {:.2} s, floor {:.2} s, {:.2}×; left behind {:.2} MB in {checkouts} checkout(s)",
            round + 1,
            o.as_secs_f64(),
            f.as_secs_f64(),
            o.as_secs_f64() / f.as_secs_f64(),
            bytes as f64 / 1e6
        );
        ours.push(o.as_secs_f64());
        floors.push(f.as_secs_f64());
        ratios.push(o.as_secs_f64() / f.as_secs_f64());
        left.push(bytes as f64 / checkout_bytes.max(1) as f64);
        let _ = std::fs::remove_dir_all(&ours_repo);
        let _ = std::fs::remove_dir_all(&floor_repo);
        let _ = std::fs::remove_dir_all(floor_repo.with_extension("wt"));
        let _ = std::fs::remove_dir_all(&store);
    }
    let (low, high) = ratios
        .iter()
        .fold((f64::MAX, 0.0_f64), |(l, h), r| (l.min(*r), h.max(*r)));
    println!(
        "runlog {:.2} s, floor {:.2} s (medians); {:.2} ms a task against {:.2}",
        median(ours.clone()),
        median(floors.clone()),
        median(ours) * 1e3 / tasks as f64,
        median(floors) * 1e3 / tasks as f64
    );
    println!(
        "goal ≤ 1.50× the floor: {:.2}× (median; {low:.2}–{high:.2}× over {rounds} rounds)",
        median(ratios)
    );
    println!(
        "goal ≤ 2 checkouts left behind: {:.2} checkouts' bytes (worst round)",
        left.iter().fold(0.0_f64, |m, x| m.max(*x))
    );
}
