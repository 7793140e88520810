//! What a power cut can take from the sled store, built by hand or traced: nothing acknowledged
//! may depend on a file or a directory entry that was never synced, and concurrent writers of
//! the blob area never trample each other.

use runlog_store::*;
use std::path::{Path, PathBuf};

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push(e.path());
            }
        }
    }
    out
}

#[test]
fn a_large_snapshot_never_becomes_a_sled_file_a_power_cut_can_empty() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let big = vec![7u8; 300 * 1024];
    {
        let log = Log::open(&store, Options::default()).unwrap();
        for i in 0..10u8 {
            log.append("r", Some(u64::from(i)), vec![vec![i; 100]])
                .unwrap();
        }
        log.cache_put(b"snap/r\0big", &big).unwrap();
        log.append("r", Some(10), vec![b"after the snapshot".to_vec()])
            .unwrap();
        log.append("other", Some(0), vec![b"another run".to_vec()])
            .unwrap();
        // A clean close checkpoints sled and empties the WAL.
    }
    // sled never fsyncs the files it keeps under db/blobs: after a power cut ext4 can leave
    // them empty. None may exist.
    let sled_blobs = files_under(&store.join("db/blobs"));
    assert!(
        sled_blobs.is_empty(),
        "values sled keeps outside its synced log: {sled_blobs:?}"
    );
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.head("r").unwrap().unwrap().seq, 11);
    assert!(log.verify("r").unwrap().is_ok());
    assert_eq!(log.head("other").unwrap().unwrap().seq, 1);
    assert_eq!(log.cache_get(b"snap/r\0big").unwrap(), Some(big));
}

/// A closed store under a new temporary directory holding `entries` in its snapshot cache.
fn store_with_cache(entries: &[(&[u8], &[u8])]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let log = Log::open(&store, Options::default()).unwrap();
    for (key, value) in entries {
        log.cache_put(key, value).unwrap();
    }
    drop(log);
    (dir, store)
}

#[test]
fn a_torn_snapshot_reads_as_absent() {
    let (_dir, store) = store_with_cache(&[(b"snap/r\0one", &[1u8; 5000])]);
    for f in files_under(&store.join("cache")) {
        let bytes = std::fs::read(&f).unwrap();
        std::fs::write(&f, &bytes[..bytes.len() / 2]).unwrap();
    }
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.cache_get(b"snap/r\0one").unwrap(), None);
}

#[test]
fn a_snapshot_with_a_flipped_bit_reads_as_absent() {
    let (_dir, store) = store_with_cache(&[
        (b"snap/r\0one", &[1u8; 5000]),
        (b"snap/r\0two", &[2u8; 5000]),
    ]);
    // One bit of the first entry's value (its file is named by its key in hex, "one" last).
    let files = files_under(&store.join("cache"));
    assert_eq!(files.len(), 2);
    let one = files
        .iter()
        .find(|f| f.to_string_lossy().ends_with("6f6e65"))
        .unwrap();
    let mut bytes = std::fs::read(one).unwrap();
    bytes[2500] ^= 0x10;
    std::fs::write(one, &bytes).unwrap();
    let log = Log::open(&store, Options::default()).unwrap();
    assert_eq!(log.cache_get(b"snap/r\0one").unwrap(), None);
    assert_eq!(
        log.cache_get(b"snap/r\0two").unwrap(),
        Some(vec![2u8; 5000])
    );
}

#[test]
fn entries_older_builds_kept_in_one_directory_are_removed_on_open() {
    let (_dir, store) =
        store_with_cache(&[(b"snap/r\0\0\0\0\0\0\0\0\x09", b"new"), (b"plain", b"kept")]);
    let cache = store.join("cache");
    // As those builds named them: the whole key in hex, or a long key's hash.
    let old = |key: &[u8]| key.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let olds = [
        cache.join(old(b"snap/r\0\0\0\0\0\0\0\0\x05")),
        cache.join(format!("h-{}", "ab".repeat(32))),
    ];
    for path in &olds {
        std::fs::write(path, b"an entry with its check and key first").unwrap();
    }
    let log = Log::open(&store, Options::default()).unwrap();
    for path in &olds {
        assert!(!path.exists(), "{} is left", path.display());
    }
    assert_eq!(
        log.cache_keys(b"snap/r\0").unwrap(),
        vec![b"snap/r\0\0\0\0\0\0\0\0\x09".to_vec()]
    );
    assert_eq!(log.cache_get(b"plain").unwrap(), Some(b"kept".to_vec()));
    drop(log);
    // The removal runs once: a file named the old way that appears later is left alone
    // (the open after an upgrade reads the cache's root, the ones after it do not).
    let late = cache.join(old(b"snap/s\0\0\0\0\0\0\0\0\x01"));
    std::fs::write(&late, b"x").unwrap();
    let _log = Log::open(&store, Options::default()).unwrap();
    assert!(late.exists());
}

#[test]
fn concurrent_blob_writers_in_one_directory_each_store_their_own_bytes() {
    // Bodies whose hashes share their first byte land in one fan-out directory, where the
    // writers' temp files meet.
    let bodies: Vec<Vec<u8>> = (0u32..)
        // Past what the WAL keeps first: each goes to its own file at once.
        .map(|i| format!("{i:06}").repeat(12_000).into_bytes())
        .filter(|b| blake3::hash(b).as_bytes()[0] == 0)
        .take(64)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let log = Log::open(&dir.path().join("store"), Options::default()).unwrap();
    std::thread::scope(|s| {
        for chunk in bodies.chunks(16) {
            let log = &log;
            s.spawn(move || {
                for b in chunk {
                    let hash = log.put_blob(b).unwrap();
                    assert_eq!(hash, *blake3::hash(b).as_bytes());
                }
            });
        }
    });
    for b in &bodies {
        let stored = log.get_blob(blake3::hash(b).as_bytes()).unwrap();
        assert_eq!(
            stored.as_deref(),
            Some(&b[..]),
            "a blob holds its own bytes"
        );
    }
}

/// Runs `child` (an ignored test of this file) under strace, returning the paths of every
/// fsync and fdatasync in order, each as `(call, path)`, and the child's marks (a `stat` of a
/// path named `mark-…`) as `("mark", name)`.
fn traced(child: &str, store: &Path, out: &Path) -> Vec<(String, String)> {
    let strace = std::process::Command::new("strace").arg("-V").output();
    assert!(
        strace.is_ok_and(|o| o.status.success()),
        "this test needs strace: install it (`apt-get install strace`); .ci/run does"
    );
    let status = std::process::Command::new("strace")
        .args(["-f", "-y", "-qq", "-e", "trace=fsync,fdatasync,statx", "-o"])
        .arg(out)
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", child, "--ignored", "--test-threads", "1"])
        .env("RUNLOG_TRACED_STORE", store)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(out).unwrap();
    text.lines()
        .filter_map(|l| {
            if l.contains("statx(") {
                let name = l.split('"').nth(1)?.rsplit('/').next()?;
                return name
                    .starts_with("mark-")
                    .then(|| ("mark".to_owned(), name.to_owned()));
            }
            let call = ["fdatasync(", "fsync("]
                .into_iter()
                .find(|c| l.contains(c))?;
            let path = l.split('<').nth(1)?.split('>').next()?;
            Some((call.trim_end_matches('(').to_owned(), path.to_owned()))
        })
        .collect()
}

/// Marks a point in a traced child's calls (see [`traced`]).
fn mark(store: &Path, name: &str) {
    let _ = std::fs::metadata(store.with_file_name(format!("mark-{name}")));
}

/// What `every_directory_entry_an_acknowledgement_needs_is_synced_first` traces.
#[test]
#[ignore = "run by its parent test under strace"]
fn traced_first_append_with_a_blob() {
    let Some(store) = std::env::var_os("RUNLOG_TRACED_STORE") else {
        return;
    };
    let log = Log::open(Path::new(&store), Options::default()).unwrap();
    log.append("r", Some(0), vec![vec![b'x'; 5_000]]).unwrap();
}

#[test]
fn every_directory_entry_an_acknowledgement_needs_is_synced_first() {
    let dir = tempfile::tempdir().unwrap();
    let parent = dir.path().canonicalize().unwrap().join("fresh");
    let store = parent.join("store");
    let calls = traced(
        "traced_first_append_with_a_blob",
        &store,
        &dir.path().join("trace"),
    );
    let wal = store.join("wal").display().to_string();
    // The ack is the last fdatasync of the WAL.
    let ack = calls
        .iter()
        .rposition(|(c, p)| c == "fdatasync" && *p == wal)
        .unwrap_or_else(|| panic!("no fdatasync of the WAL: {calls:?}"));
    let before: Vec<&str> = calls[..ack].iter().map(|(_, p)| p.as_str()).collect();
    // The spilled body's blob rides in the WAL: no file or directory of its own is needed.
    for needed in [
        dir.path().canonicalize().unwrap(),
        parent.clone(),
        store.clone(),
        store.join("db"),
        store.join("db/conf"),
    ] {
        let needed = needed.display().to_string();
        assert!(
            before.contains(&needed.as_str()),
            "{needed} is not synced before the first acknowledgement: {before:?}"
        );
    }
}

/// What `a_model_calls_blobs_are_made_durable_by_the_sync_that_acknowledges_its_record` traces:
/// 20 calls, each a 10 KB answer stored as a blob and a record naming it appended.
#[test]
#[ignore = "run by its parent test under strace"]
fn traced_calls_with_answers() {
    let Some(store) = std::env::var_os("RUNLOG_TRACED_STORE") else {
        return;
    };
    let store = Path::new(&store);
    let log = Log::open(store, Options::default()).unwrap();
    log.append("r", Some(0), vec![b"started".to_vec()]).unwrap();
    mark(store, "begin");
    for n in 0..20u64 {
        let answer = answer(n);
        let hash = log.put_blob_like(&answer, None).unwrap();
        log.append("r", Some(n + 1), vec![hash.to_vec()]).unwrap();
    }
    mark(store, "end");
}

/// A 10 KB answer that compresses as little as a model's does.
fn answer(n: u64) -> Vec<u8> {
    let mut out = blake3::Hasher::new();
    out.update(&n.to_le_bytes());
    let mut bytes = vec![0u8; 10_000];
    out.finalize_xof().fill(&mut bytes);
    bytes
}

#[test]
fn a_model_calls_blobs_are_made_durable_by_the_sync_that_acknowledges_its_record() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().canonicalize().unwrap().join("store");
    let calls = traced(
        "traced_calls_with_answers",
        &store,
        &dir.path().join("trace"),
    );
    let at = |name: &str| {
        calls
            .iter()
            .position(|(c, p)| c == "mark" && p == name)
            .unwrap_or_else(|| panic!("no mark {name}: {calls:?}"))
    };
    let during = &calls[at("mark-begin") + 1..at("mark-end")];
    let wal = store.join("wal").display().to_string();
    let others: Vec<_> = during.iter().filter(|(_, p)| *p != wal).collect();
    assert!(
        others.is_empty(),
        "a call's answer needs only the WAL's sync, but these were synced too: {others:?}"
    );
    assert!(
        during.len() <= 20,
        "20 calls took {} syncs of the WAL",
        during.len()
    );
    // The answers reached their files when the store closed; the archive, which rebuilds sled,
    // does not keep a second copy.
    assert_eq!(
        runlog_store::testkit::files_holding(&store, &answer(3)[..256]),
        files_under(&store.join("blobs"))
            .into_iter()
            .filter(|f| std::fs::read(f).unwrap() == answer(3))
            .collect::<Vec<_>>()
    );
    let log = Log::open(&store, Options::default()).unwrap();
    for n in 0..20 {
        let hash = blake3::hash(&answer(n));
        assert_eq!(log.get_blob(hash.as_bytes()).unwrap(), Some(answer(n)));
    }
    assert_eq!(files_under(&store.join("blobs")).len(), 20);
}

/// What `a_blob_only_the_wal_held_survives_a_kill_and_reaches_its_file` runs: a blob and the
/// record naming it acknowledged, then the process dies without closing the store.
#[test]
#[ignore = "run by its parent test as a child process it kills"]
fn killed_after_a_call() {
    let Some(store) = std::env::var_os("RUNLOG_TRACED_STORE") else {
        return;
    };
    let log = Log::open(Path::new(&store), Options::default()).unwrap();
    let hash = log.put_blob_like(&answer(7), None).unwrap();
    log.append("r", Some(0), vec![hash.to_vec()]).unwrap();
    std::process::abort();
}

#[test]
fn a_blob_only_the_wal_held_survives_a_kill_and_reaches_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "killed_after_a_call",
            "--ignored",
            "--test-threads",
            "1",
        ])
        .env("RUNLOG_TRACED_STORE", &store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(!status.success(), "the child was to die");
    assert!(
        files_under(&store.join("blobs")).is_empty(),
        "the blob was to be in the WAL alone when the process died"
    );
    let log = Log::open(&store, Options::default()).unwrap();
    let records = log.read("r", 1, 1, Direction::Forward).unwrap();
    let hash: [u8; 32] = records[0].body.as_slice().try_into().unwrap();
    assert_eq!(log.get_blob(&hash).unwrap(), Some(answer(7)));
    assert_eq!(
        files_under(&store.join("blobs")).len(),
        1,
        "opening places the blobs the WAL held"
    );
}
