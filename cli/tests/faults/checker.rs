//! The history checker: what the log, the workers' acknowledgements and the agents' own
//! lines must say together after a schedule of faults. Each rule broken is a sentence naming
//! the seqs, tasks and workers involved.

use runlog_core::{Event, EventKind, RunOutcome};
use std::collections::{BTreeMap, BTreeSet};

/// One execution of a task's command, as its agent wrote it (`/proc/uptime` times).
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    pub task: String,
    pub attempt: u32,
    pub worker: String,
    pub start: f64,
    pub end: Option<f64>,
}

/// An append a worker saw acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ack {
    pub worker: String,
    pub run: String,
    pub first: u64,
    pub last: u64,
    pub hash: String,
}

/// The agents' lines: `start|end TASK ATTEMPT WORKER UPTIME`.
pub fn executions(lines: &str) -> Vec<Execution> {
    let mut found: Vec<Execution> = Vec::new();
    for line in lines.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let [what, task, attempt, worker, at] = f.as_slice() else {
            continue;
        };
        let (Ok(attempt), Ok(at)) = (attempt.parse::<u32>(), at.parse::<f64>()) else {
            continue;
        };
        match *what {
            "start" => found.push(Execution {
                task: (*task).to_owned(),
                attempt,
                worker: (*worker).to_owned(),
                start: at,
                end: None,
            }),
            "end" => {
                if let Some(e) = found
                    .iter_mut()
                    .rev()
                    .find(|e| e.task == *task && e.attempt == attempt && e.worker == *worker)
                {
                    e.end = Some(at);
                }
            }
            _ => {}
        }
    }
    found
}

/// The acknowledgement lines: `WORKER RUN FIRST LAST HASH`.
pub fn acks(lines: &str) -> Vec<Ack> {
    lines
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let [worker, run, first, last, hash] = f.as_slice() else {
                return None;
            };
            Some(Ack {
                worker: (*worker).to_owned(),
                run: (*run).to_owned(),
                first: first.parse().ok()?,
                last: last.parse().ok()?,
                hash: (*hash).to_owned(),
            })
        })
        .collect()
}

/// What the checker reads of one run.
#[derive(Debug)]
pub struct History<'a> {
    pub run: &'a str,
    /// The run's tasks, as planned.
    pub tasks: &'a [String],
    /// Every event, by seq.
    pub events: &'a [(u64, Event)],
    /// Each record's chain hash, hex, by seq.
    pub hashes: &'a BTreeMap<u64, String>,
    pub executions: &'a [Execution],
    pub acks: &'a [Ack],
}

/// Every rule `h` breaks; none when it holds.
pub fn check(h: &History<'_>) -> Vec<String> {
    let mut broken = Vec::new();
    exactly_once(h, &mut broken);
    claimed_before_run(h, &mut broken);
    fenced(h, &mut broken);
    one_live_attempt(h, &mut broken);
    acknowledged_kept(h, &mut broken);
    broken
}

/// The run succeeded and each task completed once.
fn exactly_once(h: &History<'_>, broken: &mut Vec<String>) {
    let mut completed: BTreeMap<&str, u32> = BTreeMap::new();
    let mut finished = false;
    for (_, e) in h.events {
        match &e.kind {
            EventKind::StageCompleted { task, .. } => {
                *completed.entry(task.as_str()).or_default() += 1;
            }
            EventKind::RunFinished {
                outcome: RunOutcome::Succeeded,
            } => finished = true,
            _ => {}
        }
    }
    if !finished {
        broken.push(format!("run {} did not finish as succeeded", h.run));
    }
    for task in h.tasks {
        match completed.get(task.as_str()).copied().unwrap_or(0) {
            1 => {}
            n => broken.push(format!("task {task} completed {n} times, not once")),
        }
    }
}

/// Every command that ran was claimed, in the log, by the worker that ran it; and each
/// attempt ran once.
fn claimed_before_run(h: &History<'_>, broken: &mut Vec<String>) {
    let claims: BTreeSet<(&str, u32, &str)> = h
        .events
        .iter()
        .filter_map(|(_, e)| match &e.kind {
            EventKind::WorkerClaimed {
                task,
                attempt,
                worker,
                ..
            } => Some((task.as_str(), *attempt, worker.as_str())),
            _ => None,
        })
        .collect();
    let mut ran: BTreeMap<(&str, u32), u32> = BTreeMap::new();
    for x in h.executions {
        *ran.entry((x.task.as_str(), x.attempt)).or_default() += 1;
        if !claims.contains(&(x.task.as_str(), x.attempt, x.worker.as_str())) {
            broken.push(format!(
                "attempt {} of {} ran on worker {} without its claim in the log",
                x.attempt, x.task, x.worker
            ));
        }
    }
    for ((task, attempt), n) in ran {
        if n > 1 {
            broken.push(format!("attempt {attempt} of {task} ran {n} times"));
        }
    }
}

/// The seq at which each worker was first declared lost by another (its lease expired, its
/// attempts abandoned). A worker abandoning an attempt of its own that has no process (the
/// engine's own repair) is not declared lost.
fn lost_at<'h>(h: &History<'h>) -> BTreeMap<&'h str, u64> {
    let mut lost = BTreeMap::new();
    for (seq, e) in h.events {
        if let EventKind::AttemptAbandoned { worker, reason, .. } = &e.kind {
            if reason.contains("lease expired") {
                lost.entry(worker.as_str()).or_insert(*seq);
            }
        }
    }
    lost
}

/// Once a worker is declared lost, nothing more of it is recorded: no claim, no append it
/// saw acknowledged (its lease had expired: the fence refuses it).
fn fenced(h: &History<'_>, broken: &mut Vec<String>) {
    let lost = lost_at(h);
    for (seq, e) in h.events {
        if let EventKind::WorkerClaimed {
            task,
            attempt,
            worker,
            ..
        } = &e.kind
        {
            if let Some(at) = lost.get(worker.as_str()).filter(|at| seq > *at) {
                let twice = h
                    .executions
                    .iter()
                    .filter(|x| x.task == task.as_str())
                    .count();
                broken.push(format!(
                    "{}worker {worker} claimed attempt {attempt} of {task} at seq {seq}, after it \
                     was declared lost at seq {at} (its lease had expired; {task} ran {twice} \
                     times)",
                    if twice > 1 {
                        "double execution: "
                    } else {
                        "fence broken: "
                    }
                ));
            }
        }
    }
    for a in h.acks.iter().filter(|a| a.run == h.run) {
        let Some(at) = lost.get(a.worker.as_str()).filter(|at| a.first > **at) else {
            continue;
        };
        let what: Vec<String> = h
            .events
            .iter()
            .filter(|(seq, _)| (a.first..=a.last).contains(seq))
            .map(|(seq, e)| match e.kind.task() {
                Some(task) => format!("{seq} {} of {task}", e.kind.name()),
                None => format!("{seq} {}", e.kind.name()),
            })
            .collect();
        // The work of a task someone else also ran, recorded by a worker that had lost it.
        let twice = h.events.iter().any(|(seq, e)| {
            (a.first..=a.last).contains(seq)
                && e.kind.task().is_some_and(|t| {
                    let ran = |mine: bool| {
                        h.executions
                            .iter()
                            .any(|x| x.task == t.as_str() && (x.worker == a.worker) == mine)
                    };
                    ran(true) && ran(false)
                })
        });
        broken.push(format!(
            "{}worker {} saw seqs {}..={} acknowledged after it was declared lost at seq {at} \
             (its lease had expired): {}",
            if twice {
                "double execution: "
            } else {
                "fence broken: "
            },
            a.worker,
            a.first,
            a.last,
            what.join(", ")
        ));
    }
}

/// Two executions of a task at once only when one of them was abandoned (its worker lost:
/// a worker whose claim was acknowledged late may start its command after its lease expired,
/// but nothing of it is recorded then).
fn one_live_attempt(h: &History<'_>, broken: &mut Vec<String>) {
    let abandoned: BTreeSet<(&str, u32)> = h
        .events
        .iter()
        .filter_map(|(_, e)| match &e.kind {
            EventKind::AttemptAbandoned { task, attempt, .. } => Some((task.as_str(), *attempt)),
            _ => None,
        })
        .collect();
    for a in h.executions {
        for b in h.executions {
            let overlap = b.task == a.task
                && b.attempt != a.attempt
                && b.start >= a.start
                && a.end.is_none_or(|end| b.start < end);
            let either = abandoned.contains(&(a.task.as_str(), a.attempt))
                || abandoned.contains(&(b.task.as_str(), b.attempt));
            if overlap && !either {
                broken.push(format!(
                    "double execution: {} ran as attempt {} on {} and attempt {} on {} at once, \
                     and neither was abandoned",
                    a.task, a.attempt, a.worker, b.attempt, b.worker
                ));
            }
        }
    }
}

/// Every append a worker saw acknowledged is in the log, with the hash it was given.
fn acknowledged_kept(h: &History<'_>, broken: &mut Vec<String>) {
    for a in h.acks.iter().filter(|a| a.run == h.run) {
        match h.hashes.get(&a.last) {
            Some(hash) if *hash == a.hash => {}
            Some(_) => broken.push(format!(
                "worker {} saw seqs {}..={} acknowledged, and the log holds other records there",
                a.worker, a.first, a.last
            )),
            None => broken.push(format!(
                "worker {} saw seqs {}..={} acknowledged, and the log ends before them",
                a.worker, a.first, a.last
            )),
        }
    }
}
