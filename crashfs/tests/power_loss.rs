//! Power loss, not just kill -9: runlog's durable store on crashfs, which keeps written data in
//! memory until it is synced and on a power cut drops what was not (or tears it, or lets an
//! arbitrary subset through). Each cycle mounts what survived the last cut, starts a writer
//! that opens the store (recovery), reports every run and appends from two threads while it
//! prints the seqs acknowledged to it; the power goes at a random change (checkpoints every
//! 64 KiB of write-ahead log, so many cuts land in one, and in sled's segment rewrites); then
//! the writer is killed with -9 and the cut image mounted for the next cycle. Every
//! acknowledged event must be there, with the body appended, and every run must verify. In one
//! cycle of three the writer forgets a run first (the cut may land in it): from then on that
//! run may be whole or gone, and every other run must be as before.
//!
//! `RUNLOG_POWER_CYCLES` (default 200 in release, 5 unoptimised) and `RUNLOG_POWER_SEED` choose the work; a finding names
//! the seed and cycle to replay it. Needs /dev/fuse and fusermount3 (Debian's fuse3, which
//! `.ci/run` installs); `RUNLOG_REQUIRE_MOUNTS=1` (set by `.ci/run`) makes their absence a failure.

use runlog_crashfs::{mount, Cut, Loss, Mounted, Rng, Tree};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Write-ahead-log bytes between checkpoints: small, so cuts land in checkpoints.
const CHECKPOINT_BYTES: &str = "65536";
/// Changes before the cut are drawn from 1..=this.
const MAX_CHANGES: u64 = 1500;
/// Cycles one store lives through before the next store starts beside it. Every read on FUSE
/// is a round trip to this process, so a store's check on open grows slow as it grows.
const CYCLES_PER_STORE: u64 = 20;
/// A cycle whose writer neither loses power nor stops within this is cut by hand.
const CYCLE_LIMIT: Duration = Duration::from_secs(30);

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Why FUSE cannot be used here, if it cannot.
fn fuse_missing(scratch: &Path) -> Option<String> {
    if !Path::new("/dev/fuse").exists() {
        return Some("/dev/fuse does not exist".into());
    }
    let dir = scratch.join("probe");
    std::fs::create_dir_all(&dir).unwrap();
    match mount(Tree::default(), &dir, None) {
        Ok(m) => {
            let wrote = std::fs::write(dir.join("x"), b"x");
            let _ = m.unmount();
            wrote.err().map(|e| format!("writing on a crashfs mount failed: {e}"))
        }
        Err(e) => Some(format!(
            "mounting crashfs failed: {e} (needs fusermount3 from Debian's fuse3, and root or user_allow_other)"
        )),
    }
}

/// What one writer process printed.
#[derive(Debug, Default)]
struct Seen {
    heads: BTreeMap<String, u64>,
    /// Lines that are findings whatever else happens: damaged runs, wrong bodies.
    findings: Vec<String>,
    notes: Vec<String>,
    ready: bool,
    /// Why the store could not be opened (a finding unless the power went during the open).
    open_failed: Option<String>,
    stopped: Option<String>,
    /// Events newly acknowledged.
    acks: u64,
    /// Forgets begun.
    forgets: u64,
}

struct Writer {
    child: Child,
    lines: Receiver<String>,
}

impl Writer {
    fn start(store: &Path, seed: u64, flags: &[&str]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_crash-writer"));
        cmd.arg(store)
            .arg(CHECKPOINT_BYTES)
            .arg(seed.to_string())
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// Takes in one line; acknowledgements go to `acked`.
    fn take(line: &str, seen: &mut Seen, acked: &mut BTreeMap<String, u64>) {
        let mut words = line.splitn(3, ' ');
        let (kind, a, b) = (words.next(), words.next(), words.next());
        let seq = |s: Option<&str>| s.and_then(|s| s.parse::<u64>().ok()).unwrap_or(0);
        match kind {
            Some("ack") => {
                let e = acked.entry(a.unwrap_or_default().to_owned()).or_default();
                seen.acks += seq(b).saturating_sub(*e);
                *e = (*e).max(seq(b));
            }
            Some("head") => {
                seen.heads.insert(a.unwrap_or_default().to_owned(), seq(b));
            }
            Some("ready") => seen.ready = true,
            // From here nothing is asked of the run: the store may hold it whole or not at all
            // (verify's report of every run it holds checks the rest), and no later append
            // reuses its name.
            Some("forgetting") => {
                acked.remove(a.unwrap_or_default());
                seen.forgets += 1;
            }
            Some("forgot") => {}
            Some("note") => seen.notes.push(line.to_owned()),
            Some("error") => seen.stopped = Some(line.to_owned()),
            Some("open-failed") => seen.open_failed = Some(line.to_owned()),
            _ => seen.findings.push(line.to_owned()),
        }
    }
}

/// Checks what a writer found on opening against what was acknowledged before.
fn check_recovery(seen: &Seen, acked: &BTreeMap<String, u64>) -> Vec<String> {
    let mut lost = seen.findings.clone();
    if !seen.ready {
        lost.push(match &seen.open_failed {
            Some(why) => format!("the store could not be opened: {why}"),
            None => "the writer exited without reporting the store".into(),
        });
        return lost;
    }
    for (run, &want) in acked {
        let have = seen.heads.get(run).copied().unwrap_or(0);
        if have < want {
            lost.push(format!(
                "run {run}: seq {want} was acknowledged, the store holds up to {have}"
            ));
        }
    }
    lost
}

/// One cycle: mount, open and check, append until the power goes, kill -9, unmount.
fn cycle(
    tree: Tree,
    mnt: &Path,
    store: &str,
    cut: Cut,
    acked: &mut BTreeMap<String, u64>,
) -> (Tree, Vec<String>, Seen, Vec<String>) {
    let mounted: Mounted = mount(tree, mnt, Some(cut)).unwrap();
    let mut writer = Writer::start(&mnt.join(store), cut.seed, &[]);
    let mut seen = Seen::default();
    let mut findings = Vec::new();
    let started = Instant::now();
    loop {
        match writer.lines.recv_timeout(Duration::from_millis(20)) {
            Ok(line) => {
                let was_ready = seen.ready;
                Writer::take(&line, &mut seen, acked);
                if seen.ready && !was_ready {
                    findings.extend(check_recovery(&seen, acked));
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if mounted.powered_off() || seen.stopped.is_some() {
            break;
        }
        if seen.open_failed.is_some() {
            break;
        }
        if started.elapsed() > CYCLE_LIMIT {
            mounted.state().power_off(cut.loss, cut.seed);
            break;
        }
    }
    // Whether the cut came on its own (the writer is stopped or dead when it did not).
    let cut_came = mounted.powered_off();
    // The power has gone (or the writer stopped): nothing it does now reaches the disk.
    mounted.state().power_off(cut.loss, cut.seed);
    let _ = writer.child.kill();
    let _ = writer.child.wait();
    for line in writer.lines.iter() {
        Writer::take(&line, &mut seen, acked);
    }
    // A cut during the open (recovery writes too) is no finding: the next cycle's open checks.
    if !seen.ready && !cut_came {
        findings.extend(check_recovery(&seen, acked));
    }
    let mid_overwrite = mounted.state().cut_mid_overwrite.clone();
    (mounted.unmount().unwrap(), findings, seen, mid_overwrite)
}

#[test]
fn acknowledged_events_survive_power_loss_at_any_point() {
    let scratch = tempfile::tempdir().unwrap();
    if let Some(why) = fuse_missing(scratch.path()) {
        assert!(
            std::env::var("RUNLOG_REQUIRE_MOUNTS").as_deref() != Ok("1"),
            "the power-loss test needs FUSE: {why}"
        );
        eprintln!(
            "SKIPPED the power-loss test: {why}. Install Debian's fuse3 and run as root \
             (bash .ci/run does), or set RUNLOG_REQUIRE_MOUNTS=1 to make this a failure."
        );
        return;
    }
    // Unoptimised, a cycle takes seconds: `cargo test --workspace` runs a few, `.ci/run` runs
    // the 200 in release (`cargo test --release -p runlog-crashfs`).
    let cycles = env_u64(
        "RUNLOG_POWER_CYCLES",
        if cfg!(debug_assertions) { 5 } else { 200 },
    );
    let seed = env_u64("RUNLOG_POWER_SEED", 20_261_122);
    let mnt = scratch.path().join("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let mut tree = Tree::default();
    // Per store: the seqs acknowledged in each run.
    let mut acked: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut findings = Vec::new();
    let (mut acks, mut notes, mut by_loss) = (0u64, 0usize, BTreeMap::new());
    let mut forgets = 0u64;
    // Cuts that came while a file had unsynced writes over synced bytes, by file and loss: sled
    // reusing a segment between checkpoints is `db/db` here.
    let mut mid_overwrite: BTreeMap<String, u64> = BTreeMap::new();
    let started = Instant::now();
    for n in 0..cycles {
        let mut rng = Rng::new(seed ^ n.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let loss = [Loss::DropAll, Loss::TornTail, Loss::Reordered][rng.below(3) as usize];
        let cut = Cut {
            at_change: 1 + rng.below(MAX_CHANGES),
            loss,
            seed: rng.next_u64(),
        };
        let store = format!("store-{}", n / CYCLES_PER_STORE);
        let acked = acked.entry(store.clone()).or_default();
        let (after, found, seen, overwriting) = cycle(tree, &mnt, &store, cut, acked);
        tree = after;
        acks += seen.acks;
        forgets += seen.forgets;
        notes += seen.notes.len();
        for path in overwriting {
            let file = path
                .strip_prefix(&format!("/{store}/"))
                .unwrap_or(&path)
                .to_owned();
            *mid_overwrite.entry(format!("{file} {loss:?}")).or_default() += 1;
        }
        *by_loss.entry(format!("{loss:?}")).or_insert(0u64) += 1;
        for f in found {
            findings.push(format!("seed {seed}, cycle {n} ({store}, {cut:?}): {f}"));
        }
        if findings.len() > 20 {
            break;
        }
    }
    // A last clean open of every store as the last cut left it; then sled thrown away and
    // rebuilt from the archive alone, which must hold every acknowledged event too.
    let mounted = mount(tree, &mnt, None).unwrap();
    for (store, acked) in &acked {
        for (what, flags) in [
            ("final open", &["--check-only"][..]),
            (
                "rebuild from the archive",
                &["--check-only", "--from-archive"][..],
            ),
        ] {
            let mut writer = Writer::start(&mnt.join(store), 0, flags);
            let mut seen = Seen::default();
            let _ = writer.child.wait();
            for line in writer.lines.iter() {
                Writer::take(&line, &mut seen, &mut BTreeMap::new());
            }
            findings.extend(
                check_recovery(&seen, acked)
                    .into_iter()
                    .map(|f| format!("seed {seed}, {what} of {store}: {f}")),
            );
        }
    }
    let _ = mounted.unmount();
    let runs: usize = acked.values().map(BTreeMap::len).sum();
    eprintln!(
        "power loss: {cycles} cycles (seed {seed}) in {:.0?}: {acks} events acknowledged across {runs} runs, {forgets} forgets \
         in {} stores, cuts {by_loss:?}, cuts amid unsynced writes over synced bytes {mid_overwrite:?}, {notes} recovery notes, \
         findings (events lost or unreadable): {}",
        started.elapsed(),
        acked.len(),
        findings.len()
    );
    assert!(
        findings.is_empty(),
        "acknowledged data lost or unreadable after a power cut:\n{}",
        findings.join("\n")
    );
}
