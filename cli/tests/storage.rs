//! Where a store's space goes (`runlog du`, `runs`' SIZE), through the real binary: a run
//! whose agent printed more than an event holds, its blob counted; the parts add up to the
//! totals; the events' bytes are what the store holds.

mod common;

use common::{runlog, text, workflow};
use runlog_store::EventLog;

fn json_lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    assert!(out.status.success(), "{}", text(out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn du_counts_each_runs_events_blobs_and_worktrees_and_the_stores_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let wf = workflow(
        dir.path(),
        "loud",
        "name = \"loud\"\n[settings]\nworkspace = \"none\"\n[[task]]\nid = \"a\"\n\
         run = \"head -c 200000 /dev/zero | tr '\\\\0' y\"\n[[task]]\nid = \"b\"\nrun = \"echo quiet\"\n",
    );
    for run in ["loud-1", "loud-2"] {
        let out = runlog(&store)
            .args(["run", wf.to_str().unwrap(), "--run-id", run])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    let lines = json_lines(&runlog(&store).args(["--json", "du"]).output().unwrap());
    assert_eq!(lines.len(), 3, "{lines:?}");
    let log = common::open(&store);
    for run in &lines[..2] {
        let name = run["run"].as_str().unwrap();
        let mut bytes = 0u64;
        let mut events = 0u64;
        log.scan(name, 1, u64::MAX, &mut |r| {
            bytes += r.body.len() as u64;
            events += 1;
            Ok(true)
        })
        .unwrap();
        assert_eq!(run["events"], events, "{run}");
        assert_eq!(run["event_bytes"], bytes, "{run}");
        // The 200,000 bytes of output are a blob of the run's (both runs print the same
        // bytes: one file, counted in each).
        assert_eq!(run["blobs"], 1, "{run}");
        assert!(run["blob_bytes"].as_u64().unwrap() >= 200_000, "{run}");
        let parts: u64 = [
            "event_bytes",
            "blob_bytes",
            "snapshot_bytes",
            "worktree_bytes",
        ]
        .iter()
        .map(|k| run[k].as_u64().unwrap())
        .sum();
        assert_eq!(run["total_bytes"], parts, "{run}");
    }
    let s = &lines[2]["store"];
    let parts: u64 = [
        "sled_bytes",
        "wal_bytes",
        "archive_bytes",
        "blob_bytes",
        "snapshot_bytes",
        "worktree_bytes",
        "other_bytes",
    ]
    .iter()
    .map(|k| s[k].as_u64().unwrap())
    .sum();
    assert_eq!(s["total_bytes"], parts, "{s}");
    assert!(s["archive_segments"].as_u64().unwrap() >= 1, "{s}");
    assert!(s["blob_bytes"].as_u64().unwrap() >= 200_000, "{s}");
    drop(log);

    // The words: a row per run, the runs together, the store's line; `runs` has the size.
    let out = runlog(&store).arg("du").output().unwrap();
    let said = text(&out);
    assert!(
        said.contains("loud-1") && said.contains("2 run(s)"),
        "{said}"
    );
    assert!(said.contains("bytes on disk per event"), "{said}");
    let out = runlog(&store).arg("runs").output().unwrap();
    assert!(
        text(&out).contains("SIZE") && text(&out).contains("KiB"),
        "{}",
        text(&out)
    );
    // One run, and an unknown one refused with the runs that exist.
    let one = json_lines(
        &runlog(&store)
            .args(["--json", "du", "loud-2"])
            .output()
            .unwrap(),
    );
    assert_eq!(one.len(), 2);
    assert_eq!(one[0]["run"], "loud-2");
    let out = runlog(&store).args(["du", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("loud-1"), "{}", text(&out));
}

/// `runlog emit RUN` with `lines`, which must all be recorded.
fn emit(store: &std::path::Path, run: &str, lines: &str) {
    let out = common::emit(store, run, lines);
    assert!(out.status.success(), "{}", text(&out));
}

/// `du`'s count of `run`, and what the log holds: its events and their bytes.
fn counted_and_held(store: &std::path::Path, run: &str) -> ((u64, u64), (u64, u64)) {
    let lines = json_lines(&runlog(store).args(["--json", "du", run]).output().unwrap());
    let counted = (
        lines[0]["events"].as_u64().unwrap(),
        lines[0]["event_bytes"].as_u64().unwrap(),
    );
    let log = common::open(store);
    let mut held = (0, 0);
    log.scan(run, 1, u64::MAX, &mut |r| {
        held.0 += 1;
        held.1 += r.body.len() as u64;
        Ok(true)
    })
    .unwrap();
    (counted, held)
}

/// A run's size is counted once, then only past what was counted (`runlog runs` decoded every
/// event of every run each time): after the run grows, after a count that is not this
/// history's is found in the cache, and after the run is forgotten and recorded again under
/// its id, `du` says what the log holds.
#[test]
fn a_runs_size_follows_its_history_past_what_was_counted() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let start = r#"{"command": "start-run", "run": "r", "tasks": [{"id": "a"}, {"id": "b", "after": ["a"]}]}
{"command":"start-task","task":"a","agent":"me","worktree":null}
"#;
    emit(&store, "r", start);
    let (counted, held) = counted_and_held(&store, "r");
    assert_eq!(counted, held);
    emit(
        &store,
        "r",
        "{\"command\":\"submit-task\",\"task\":\"a\",\"summary\":\"did a\",\"result\":null,\"duration_ms\":5}\n",
    );
    let (counted, held) = counted_and_held(&store, "r");
    assert_eq!(counted, held, "after the run grew");

    // A count of another history (its hash is not the log's at its seq) is not used.
    {
        let log = common::open(&store);
        let bogus = serde_json::json!({"seq": 2, "hash": "00".repeat(32), "events": 900,
            "event_bytes": 900_000, "blobs": []});
        log.cache_put(b"snap/r\0counted", bogus.to_string().as_bytes())
            .unwrap();
    }
    let (counted, held) = counted_and_held(&store, "r");
    assert_eq!(counted, held, "after a count of another history");

    // Forgotten (the count with it) and recorded again, shorter, under the same id.
    let out = runlog(&store)
        .args(["forget", "r", "--reason", "test"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        common::open(&store).cache_keys(b"snap/r\0").unwrap(),
        Vec::<Vec<u8>>::new(),
        "the count went with the run"
    );
    emit(
        &store,
        "r",
        "{\"command\": \"start-run\", \"run\": \"r\", \"tasks\": [{\"id\": \"only\"}]}\n",
    );
    let (counted, held) = counted_and_held(&store, "r");
    assert_eq!(counted, held, "after the id was used again");
}
