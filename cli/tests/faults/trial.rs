//! One schedule's run: the lab every schedule shares (the server, the namespaces, the proxies,
//! the shared repositories), a run submitted, a worker kept in each slot, the faults struck on
//! time, and what the checker and the acknowledgements show once they heal.

use super::checker::{self, Ack, History};
use super::git::{git, Daemon, Relay};
use super::net::Net;
use super::postgres::Server;
use super::proxy::Proxy;
use super::schedule::{Fault, Schedule};
use crate::common;
use runlog_core::{Event, EventKind, RunStatus};
use runlog_replay::Replay;
use runlog_store::{EventLog, PgLog};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const SLOTS: usize = 3;
pub const LEASE_MS: u64 = 1_500;
pub const TASKS: usize = 36;
/// In a git workspace, where each task's commit, merge and pushes take their time.
pub const GIT_TASKS: usize = 12;
/// How long a run may take after its last fault before the schedule fails.
pub const SETTLE: Duration = Duration::from_secs(60);
pub const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// One at a time: the tests of this process share the namespaces' address range.
pub static LAB: Mutex<()> = Mutex::new(());

/// What every schedule runs on.
pub struct Lab {
    server: Server,
    net: Arc<Net>,
    proxies: Vec<Proxy>,
    /// The shared repositories, and each slot's way to them.
    git: Daemon,
    relays: Vec<Relay>,
}

impl Lab {
    /// Stops the server and the git daemon and removes the namespaces now: threads of the last
    /// schedule may still hold the lab as the test ends, and a process exits without dropping
    /// what they hold.
    pub fn close(&self) {
        self.server.stop();
        self.git.stop();
        self.net.remove();
    }
}

pub fn lab() -> Option<Arc<Lab>> {
    let made = (|| -> Result<Lab, String> {
        if !Path::new(FAKETIME).exists() {
            return Err(format!(
                "no libfaketime at {FAKETIME} (apt-get install faketime)"
            ));
        }
        let server = Server::start()?;
        let net = Arc::new(Net::make(SLOTS)?);
        let to = std::net::SocketAddr::from(([127, 0, 0, 1], server.port));
        let host = net.host();
        let proxies = (0..SLOTS)
            .map(|_| Proxy::start(&host, to).map_err(|e| format!("cannot listen on {host}: {e}")))
            .collect::<Result<_, _>>()?;
        let git = Daemon::start(&host)?;
        let relays = (0..SLOTS)
            .map(|_| {
                Relay::start(&host, git.at).map_err(|e| format!("cannot listen on {host}: {e}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Lab {
            server,
            net,
            proxies,
            git,
            relays,
        })
    })();
    match made {
        Ok(lab) => Some(Arc::new(lab)),
        Err(why) => {
            let why = format!(
                "network faults need root, ip, PostgreSQL's programs and faketime ({why}); \
                 bash .ci/run has them"
            );
            assert!(std::env::var_os("RUNLOG_REQUIRE_NETNS").is_none(), "{why}");
            eprintln!("SKIPPED: {why}");
            None
        }
    }
}

/// A fault as it happened: the slot it struck (none: all), when, and when it healed.
#[derive(Debug, Clone)]
struct Mark {
    slot: Option<usize>,
    what: &'static str,
    from: Instant,
    healed: Option<Instant>,
}

/// The workers of each slot: the live one, and how many came before it.
#[derive(Debug, Default)]
struct Slot {
    child: Option<Child>,
    incarnation: u32,
    restart_at: Option<Instant>,
    /// Its host is gone: no worker starts there again.
    vanished: bool,
}

fn name(slot: usize, incarnation: u32) -> String {
    format!("w{slot}.{incarnation}")
}

/// One schedule's run, and what it showed.
pub struct Trial {
    lab: Arc<Lab>,
    pub schedule: Schedule,
    unfenced: bool,
    dir: tempfile::TempDir,
    db: String,
    slots: Mutex<Vec<Slot>>,
    marks: Mutex<Vec<Mark>>,
    /// Each acknowledgement line, with when the harness read it.
    acked: Mutex<Vec<(Instant, Ack)>>,
}

/// From a worker's cut (partition, freeze, kill, its host gone) to the abandonment of its
/// attempt (`released`, by the kind of cut) and to another worker's claim of its task
/// (`claimed`), in ms.
#[derive(Debug, Default)]
pub struct Taken {
    pub released: Vec<(&'static str, u64)>,
    pub claimed: Vec<u64>,
    /// Releases during which the database was away from everyone (cut off, restarted):
    /// nobody could take anything over until it was back.
    pub database_away: Vec<u64>,
}

/// What a schedule showed: the rules broken and the recovery times.
#[derive(Debug, Default)]
pub struct Outcome {
    pub broken: Vec<String>,
    /// From a fault's end to the next append acknowledged to a worker of its slot, ms.
    pub progress_after_heal: Vec<(&'static str, u64)>,
    pub taken_over: Taken,
    pub seconds: f64,
    /// What the checker read: events, executions, acknowledged appends.
    pub read: (usize, usize, usize),
    /// Attempts abandoned, by reason.
    pub abandoned: BTreeMap<String, usize>,
    /// Connections the proxies cut in the middle of a transaction.
    pub cut: u32,
}

impl Trial {
    pub fn new(lab: &Arc<Lab>, seed: u64, unfenced: bool) -> Self {
        let db = format!("faults_{seed}_{}", u8::from(unfenced));
        lab.server.create(&db).unwrap();
        Self {
            lab: lab.clone(),
            schedule: {
                let mut drawn = Schedule::draw(seed, SLOTS, LEASE_MS);
                // The same work without faults: the baseline of a seed.
                if std::env::var_os("RUNLOG_FAULT_NONE").is_some() {
                    drawn.faults.clear();
                    drawn.skew = None;
                }
                drawn
            },
            unfenced,
            dir: tempfile::tempdir().unwrap(),
            db,
            slots: Mutex::new((0..SLOTS).map(|_| Slot::default()).collect()),
            marks: Mutex::new(Vec::new()),
            acked: Mutex::new(Vec::new()),
        }
    }

    /// The database straight, from this host (the harness's own reads).
    fn direct(&self) -> String {
        self.lab
            .server
            .url("127.0.0.1", self.lab.server.port, &self.db)
    }

    /// How many tasks the run has.
    fn tasks(&self) -> usize {
        if self.schedule.git {
            GIT_TASKS
        } else {
            TASKS
        }
    }

    fn agents(&self) -> PathBuf {
        self.dir.path().join("agents")
    }

    fn acks(&self) -> PathBuf {
        self.dir.path().join("acks")
    }

    fn submit(&self) {
        // Each command writes when it starts and ends, by the kernel's uptime (which no clock
        // skew moves), with the worker it ran under.
        let lines = self.agents();
        let line = |what: &str| {
            format!(
                "read up rest < /proc/uptime; echo {what} $RUNLOG_TASK $RUNLOG_ATTEMPT \
                 $FAULT_WORKER $up >> {}",
                lines.display()
            )
        };
        let mut run = format!("{}; sleep 0.4; {}", line("start"), line("end"));
        let mut toml = common::dag(self.tasks(), 4, &run, 6);
        let wf = if self.schedule.git {
            // In a checkout of the shared repository, each task leaving a file of its own.
            let checkout = self.dir.path().join("app");
            self.lab.git.repository(&self.db, &checkout);
            run = format!("echo $RUNLOG_TASK > out-$RUNLOG_TASK.txt; {run}");
            toml = common::dag(self.tasks(), 4, &run, 6).replacen(
                "[settings]\n",
                &format!("[settings]\nrepo = \"{}\"\n", self.lab.git.url(&self.db)),
                1,
            );
            let wf = common::workflow(&checkout, "faults", &toml);
            git(&checkout, &["add", "-A"]);
            let who = [
                "-c",
                "user.name=faults",
                "-c",
                "user.email=faults@e.invalid",
            ];
            git(
                &checkout,
                &[&who[..], &["commit", "-qm", "the workflow"]].concat(),
            );
            git(&checkout, &["push", "-q", "origin", "main"]);
            wf
        } else {
            common::workflow(self.dir.path(), "faults", &toml)
        };
        let out = common::runlog(Path::new(&self.direct()))
            .env("RUNLOG_LOCAL_DIR", self.dir.path().join("submitter"))
            .args([
                "run",
                wf.to_str().unwrap(),
                "--run-id",
                "faults",
                "--submit-only",
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", common::text(&out));
    }

    fn spawn(&self, slot: usize, incarnation: u32) -> Child {
        let me = name(slot, incarnation);
        let url = self
            .lab
            .server
            .url(&self.lab.net.host(), self.lab.proxies[slot].port, &self.db);
        let mut inner = common::runlog(Path::new(&url));
        inner
            .args(["worker", "--until-idle", "--jobs", "2", "--name", &me])
            .args(["--lease-ms", &LEASE_MS.to_string()])
            .env(
                "RUNLOG_LOCAL_DIR",
                self.dir.path().join(format!("host{slot}")),
            )
            .env("RUNLOG_TEST_ACK_LOG", self.acks())
            .env("FAULT_WORKER", &me);
        if self.unfenced {
            inner.env("RUNLOG_TEST_UNFENCED", "1");
        }
        // The slot's git goes through its relay, which sees its pushes.
        let host = self.lab.net.host();
        inner
            .env("GIT_CONFIG_COUNT", "1")
            .env(
                "GIT_CONFIG_KEY_0",
                format!("url.git://{host}:{}/.insteadOf", self.lab.relays[slot].port),
            )
            .env("GIT_CONFIG_VALUE_0", format!("git://{}/", self.lab.git.at));
        if let Some((_, secs)) = self.schedule.skew.filter(|(s, _)| *s == slot) {
            inner
                .env("LD_PRELOAD", FAKETIME)
                .env("FAKETIME", format!("{secs:+}"))
                .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
        }
        let log = std::fs::File::create(self.dir.path().join(format!("{me}.log"))).unwrap();
        self.lab
            .net
            .inside(slot, &inner)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap()
    }

    fn mark(
        &self,
        slot: Option<usize>,
        what: &'static str,
        from: Instant,
        healed: Option<Instant>,
    ) {
        self.marks.lock().unwrap().push(Mark {
            slot,
            what,
            from,
            healed,
        });
    }

    fn pid(&self, slot: usize) -> Option<nix::unistd::Pid> {
        let slots = self.slots.lock().unwrap();
        let child = slots[slot].child.as_ref()?;
        Some(nix::unistd::Pid::from_raw(i32::try_from(child.id()).ok()?))
    }

    /// Carries out one fault; those that last heal on a thread of their own.
    fn strike(self: &Arc<Self>, fault: Fault) {
        use nix::sys::signal::{kill, Signal};
        let net = self.lab.net.clone();
        let me = self.clone();
        match fault {
            Fault::Partition {
                slot,
                ms,
                mid_append,
            } => {
                let cut = move || {
                    let from = Instant::now();
                    net.link(slot, false);
                    std::thread::sleep(Duration::from_millis(ms));
                    net.link(slot, true);
                    let what = if mid_append {
                        "partition mid-append"
                    } else {
                        "partition"
                    };
                    me.mark(Some(slot), what, from, Some(Instant::now()));
                };
                if mid_append {
                    self.lab.proxies[slot].at_next_commit(Duration::from_millis(ms), cut);
                } else {
                    std::thread::spawn(cut);
                }
            }
            Fault::PushPartition { slot, ms } => {
                self.lab.relays[slot].at_next_push(move || {
                    // The push under way: its request sent, its pack on the wire.
                    std::thread::sleep(Duration::from_millis(20));
                    let from = Instant::now();
                    net.link(slot, false);
                    std::thread::sleep(Duration::from_millis(ms));
                    net.link(slot, true);
                    me.mark(Some(slot), "partition mid-push", from, Some(Instant::now()));
                });
            }
            Fault::Isolate { ms } => {
                std::thread::spawn(move || {
                    let from = Instant::now();
                    (0..SLOTS).for_each(|s| net.link(s, false));
                    std::thread::sleep(Duration::from_millis(ms));
                    (0..SLOTS).for_each(|s| net.link(s, true));
                    me.mark(None, "database cut off", from, Some(Instant::now()));
                });
            }
            Fault::Restart { immediate } => {
                let from = Instant::now();
                if let Err(e) = self.lab.server.restart(immediate) {
                    eprintln!("faults: {e}");
                }
                let what = if immediate {
                    "restart (immediate)"
                } else {
                    "restart (fast)"
                };
                self.mark(None, what, from, Some(Instant::now()));
            }
            Fault::Cut { slot, at } => self.lab.proxies[slot].arm(at),
            Fault::Stall { slot, ms } => {
                self.lab.proxies[slot].stall(Duration::from_millis(ms));
                let from = Instant::now();
                let healed = from + Duration::from_millis(ms);
                self.mark(Some(slot), "stall", from, Some(healed));
            }
            Fault::Delay { slot, by, ms } => {
                self.lab.proxies[slot].delay(Duration::from_millis(by), Duration::from_millis(ms));
            }
            Fault::Freeze { slot, ms } => {
                let Some(pid) = self.pid(slot) else { return };
                std::thread::spawn(move || {
                    let from = Instant::now();
                    let _ = kill(pid, Signal::SIGSTOP);
                    std::thread::sleep(Duration::from_millis(ms));
                    let _ = kill(pid, Signal::SIGCONT);
                    me.mark(Some(slot), "freeze", from, Some(Instant::now()));
                });
            }
            Fault::Vanish { slot } => {
                let forever = Duration::from_secs(3_600);
                self.lab.proxies[slot].at_next_commit(forever, move || {
                    let from = Instant::now();
                    net.link(slot, false);
                    me.slots.lock().unwrap()[slot].vanished = true;
                    if let Some(pid) = me.pid(slot) {
                        let _ = kill(pid, Signal::SIGKILL);
                    }
                    me.mark(Some(slot), "host gone", from, None);
                });
            }
            Fault::Kill { slot } => {
                if let Some(pid) = self.pid(slot) {
                    let _ = kill(pid, Signal::SIGKILL);
                    let now = Instant::now();
                    self.mark(Some(slot), "kill -9", now, Some(now));
                }
            }
        }
    }

    /// Reads the acknowledgement lines as they come.
    fn watch_acks(self: &Arc<Self>, done: Arc<std::sync::atomic::AtomicBool>) {
        let me = self.clone();
        std::thread::spawn(move || {
            let mut read = 0;
            while !done.load(std::sync::atomic::Ordering::Acquire) {
                if let Ok(all) = std::fs::read_to_string(me.acks()) {
                    let complete = all.rfind('\n').map_or(0, |i| i + 1);
                    if complete > read {
                        let now = Instant::now();
                        let new = checker::acks(&all[read..complete]);
                        me.acked
                            .lock()
                            .unwrap()
                            .extend(new.into_iter().map(|a| (now, a)));
                        read = complete;
                    }
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
    }

    /// Whether the run has ended, as the server says now (false when it cannot be asked).
    fn ended(log: &PgLog) -> bool {
        Replay::new(log)
            .head_state("faults")
            .is_ok_and(|s| matches!(s.status, RunStatus::Finished(_)))
    }

    /// Keeps a worker in each slot until the run ends (a worker that exits is followed by a new
    /// one after 300 ms), then waits for them to leave.
    fn supervise(&self, log: &PgLog, deadline: Instant) -> bool {
        let mut ended = false;
        let mut asked = Instant::now();
        loop {
            let now = Instant::now();
            if now >= asked {
                ended = ended || Self::ended(log);
                asked = now + Duration::from_millis(200);
            }
            let mut slots = self.slots.lock().unwrap();
            let mut live = 0;
            for (i, slot) in slots.iter_mut().enumerate() {
                if let Some(child) = slot.child.as_mut() {
                    if child.try_wait().unwrap().is_none() {
                        live += 1;
                        continue;
                    }
                    slot.child = None;
                    slot.restart_at = Some(now + Duration::from_millis(300));
                }
                if !ended && !slot.vanished && slot.restart_at.is_some_and(|at| now >= at) {
                    slot.incarnation += 1;
                    slot.restart_at = None;
                    slot.child = Some(self.spawn(i, slot.incarnation));
                    live += 1;
                }
            }
            drop(slots);
            if ended && live == 0 {
                return true;
            }
            if now >= deadline {
                for slot in self.slots.lock().unwrap().iter_mut() {
                    if let Some(mut c) = slot.child.take() {
                        let _ = c.kill();
                        let _ = c.wait();
                    }
                }
                return ended;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn go(self: Arc<Self>) -> Outcome {
        let started = Instant::now();
        let cuts = || self.lab.proxies.iter().map(Proxy::cuts).sum::<u32>();
        let cut_before = cuts();
        self.submit();
        for (i, slot) in self.slots.lock().unwrap().iter_mut().enumerate() {
            slot.child = Some(self.spawn(i, 0));
        }
        let reading = Arc::new(std::sync::atomic::AtomicBool::new(false));
        self.watch_acks(reading.clone());
        let striking = {
            let me = self.clone();
            std::thread::spawn(move || {
                for t in me.schedule.faults.clone() {
                    let at = started + Duration::from_millis(t.at_ms);
                    std::thread::sleep(at.saturating_duration_since(Instant::now()));
                    me.strike(t.fault);
                }
            })
        };
        let log = PgLog::connect(&self.direct()).unwrap();
        let last = self.schedule.faults.last().map_or(0, |t| t.at_ms);
        let deadline = started + Duration::from_millis(last + 3 * 3 * LEASE_MS) + SETTLE;
        let finished = self.supervise(&log, deadline);
        striking.join().unwrap();
        // Heal whatever a fault left (a host gone, a partition armed at a COMMIT that never
        // came), for the next schedule.
        for (slot, proxy) in self.lab.proxies.iter().enumerate() {
            proxy.heal();
            self.lab.relays[slot].heal();
            self.lab.net.link(slot, true);
        }
        std::thread::sleep(Duration::from_millis(50));
        reading.store(true, std::sync::atomic::Ordering::Release);
        let mut outcome = self.judge(&log);
        if !finished {
            outcome.broken.push(format!(
                "the run did not end within {} s of its last fault",
                (SETTLE + Duration::from_millis(9 * LEASE_MS)).as_secs()
            ));
        }
        outcome.seconds = started.elapsed().as_secs_f64();
        if !outcome.broken.is_empty() {
            let board = common::runlog(Path::new(&self.direct()))
                .args(["status", "faults"])
                .output()
                .unwrap();
            eprintln!("  the run's board:\n{}", common::text(&board));
            let log = common::runlog(Path::new(&self.direct()))
                .args(["log", "faults"])
                .output()
                .unwrap();
            let said = common::text(&log);
            let tail: Vec<&str> = said.lines().rev().take(25).collect();
            eprintln!(
                "  the run's last events, newest first:\n    {}",
                tail.join("\n    ")
            );
            // What the workers said, for whoever reads the failure.
            for slot in 0..SLOTS {
                for incarnation in 0..=self.slots.lock().unwrap()[slot].incarnation {
                    let me = name(slot, incarnation);
                    let said = std::fs::read_to_string(self.dir.path().join(format!("{me}.log")))
                        .unwrap_or_default();
                    let tail: Vec<&str> = said.lines().rev().take(6).collect();
                    eprintln!("  worker {me} said (last lines, newest first): {tail:?}");
                }
            }
        }
        outcome.cut = cuts() - cut_before;
        outcome
    }

    /// The checker over what was recorded, `runlog verify`, and the recovery times.
    fn judge(&self, log: &PgLog) -> Outcome {
        // Read again from the disk: the watcher's copy is for the times only.
        let acks = checker::acks(&std::fs::read_to_string(self.acks()).unwrap_or_default());
        let executions =
            checker::executions(&std::fs::read_to_string(self.agents()).unwrap_or_default());
        let head = log.head("faults").unwrap().map_or(0, |h| h.seq);
        let events = Replay::new(log).events("faults", 1, head).unwrap();
        let mut hashes = BTreeMap::new();
        log.scan("faults", 1, head, &mut |r| {
            hashes.insert(r.seq, hex(r.hash));
            Ok(true)
        })
        .unwrap();
        let tasks: Vec<String> = (0..self.tasks()).map(|i| format!("t{i}")).collect();
        let mut broken = checker::check(&History {
            run: "faults",
            tasks: &tasks,
            events: &events,
            hashes: &hashes,
            executions: &executions,
            acks: &acks,
        });
        if self.schedule.git {
            broken.extend(self.merged_work(&tasks));
        }
        let verify = common::runlog(Path::new(&self.direct()))
            .args(["verify", "faults"])
            .output()
            .unwrap();
        if verify.status.code() != Some(0) {
            broken.push(format!("runlog verify: {}", common::text(&verify)));
        }
        let (progress_after_heal, taken_over) = self.recovery(&events);
        Outcome {
            broken,
            progress_after_heal,
            taken_over,
            seconds: 0.0,
            read: (events.len(), executions.len(), acks.len()),
            cut: 0,
            abandoned: events
                .iter()
                .filter_map(|(_, e)| match &e.kind {
                    EventKind::AttemptAbandoned { reason, .. } => Some(reason.clone()),
                    _ => None,
                })
                .fold(BTreeMap::new(), |mut m, r| {
                    *m.entry(r).or_default() += 1;
                    m
                }),
        }
    }

    /// In a git workspace: every task's file is on the shared repository's integration branch.
    fn merged_work(&self, tasks: &[String]) -> Vec<String> {
        let bare = format!("{}.git", self.db);
        let listed = std::process::Command::new("git")
            .current_dir(self.dir.path())
            .args([
                "ls-remote",
                &self.lab.git.url(&self.db),
                "refs/heads/runlog/faults",
            ])
            .output();
        let Some(tip) = listed.ok().and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()
                .map(str::to_owned)
        }) else {
            return vec![format!("the shared repository {bare} has no runlog/faults")];
        };
        let checkout = self.dir.path().join("app");
        git(
            &checkout,
            &["fetch", "-q", "origin", "refs/heads/runlog/faults"],
        );
        let files = git(&checkout, &["ls-tree", "--name-only", &tip]);
        tasks
            .iter()
            .filter(|t| !files.lines().any(|f| f == format!("out-{t}.txt")))
            .map(|t| {
                format!("task {t}'s work is not on the shared repository's runlog/faults ({tip})")
            })
            .collect()
    }

    /// The recovery times the acknowledgements show.
    fn recovery(&self, events: &[(u64, Event)]) -> (Vec<(&'static str, u64)>, Taken) {
        let marks = self.marks.lock().unwrap().clone();
        let acked = self.acked.lock().unwrap().clone();
        let slot_of = |w: &str| {
            w.strip_prefix('w')
                .and_then(|w| w.split('.').next())
                .and_then(|s| s.parse::<usize>().ok())
        };
        let mut progress = Vec::new();
        for m in &marks {
            let Some(healed) = m.healed else { continue };
            let next = acked.iter().find(|(at, a)| {
                *at > healed && m.slot.is_none_or(|s| slot_of(&a.worker) == Some(s))
            });
            if let Some((at, _)) = next {
                progress.push((m.what, ms(*at - healed)));
            }
        }
        // When each seq was acknowledged, as the harness saw it.
        let when = |seq: u64| {
            acked
                .iter()
                .find(|(_, a)| a.first <= seq && seq <= a.last)
                .map(|(at, _)| *at)
        };
        // The cut that took a worker away: the last on its slot before `t`, reaching back
        // through the cuts it overlapped (a freeze during a partition is one absence).
        let cut_before = |worker: &str, t: Instant| {
            let slot = slot_of(worker)?;
            let lease = Duration::from_millis(LEASE_MS);
            let mut cuts: Vec<&Mark> = marks
                .iter()
                .filter(|m| {
                    // A kill or a host gone is for good; a partition or a freeze loses the
                    // lease only when it outlasts most of it, and a worker back renews at once.
                    let lasting = match (m.what, m.healed) {
                        ("kill -9", _) | (_, None) => true,
                        (_, Some(h)) => h - m.from >= lease * 3 / 4 && t <= h + lease,
                    };
                    m.slot == Some(slot)
                        && m.from < t
                        && lasting
                        && matches!(
                            m.what,
                            "partition"
                                | "partition mid-append"
                                | "partition mid-push"
                                | "freeze"
                                | "kill -9"
                                | "host gone"
                        )
                })
                .collect();
            cuts.sort_by_key(|m| std::cmp::Reverse(m.from));
            let last = cuts.first()?;
            let mut cut = last.from;
            for m in cuts.iter().skip(1) {
                if m.healed.is_none_or(|h| h >= cut) {
                    cut = cut.min(m.from);
                }
            }
            Some((cut, last.what))
        };
        let mut taken = Taken::default();
        for (seq, e) in events {
            let (worker, released) = match &e.kind {
                EventKind::AttemptAbandoned { worker, .. } => (worker, true),
                EventKind::WorkerClaimed {
                    previous: Some(previous),
                    ..
                } => (previous, false),
                _ => continue,
            };
            let Some(at) = when(*seq) else { continue };
            let Some((cut, what)) = cut_before(worker, at) else {
                continue;
            };
            let away = marks
                .iter()
                .any(|m| m.slot.is_none() && m.from < at && m.healed.is_none_or(|h| h > cut));
            match (away, released) {
                (false, true) => taken.released.push((what, ms(at - cut))),
                (false, false) => taken.claimed.push(ms(at - cut)),
                (true, true) => taken.database_away.push(ms(at - cut)),
                (true, false) => {}
            }
        }
        (progress, taken)
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
