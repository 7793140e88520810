//! The journal of a run's process groups (`.groups/journal`): each command's group listed while
//! it runs, so that a runner killed with -9 leaves a trace the next one stops its agents by.

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use std::path::Path;
use std::time::{Duration, Instant};

/// The file in a run's groups directory where each command's process group is listed while it
/// runs: a line `+ID` when it starts, `-ID` when it is gone, appended. A runner killed with -9,
/// whose agents (in groups of their own) outlive it, so leaves a trace the next one acts on.
/// One file for all, not one per group: creating and deleting a file per command showed in the
/// kernel's inode allocation on runs of many short tasks.
const GROUP_JOURNAL: &str = "journal";

/// Appends `+ID` (started) or `-ID` (gone) for `group` to the journal in `dir`.
pub(crate) fn list_group(dir: &Path, group: Pid, started: bool) -> bool {
    let line = format!("{}{}\n", if started { '+' } else { '-' }, group.as_raw());
    let path = dir.join(GROUP_JOURNAL);
    let open = || {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
    };
    let file = open().or_else(|_| {
        std::fs::create_dir_all(dir)?;
        open()
    });
    // One write of one short line: appends from the runner's tasks never interleave.
    file.and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()))
        .is_ok()
}

/// Forgets the groups listed in `dir` once none can be running (the run's engine finished).
pub fn forget_groups(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(GROUP_JOURNAL));
}

/// The groups a journal lists as started and not gone.
pub(crate) fn journal_groups(text: &str) -> Vec<i32> {
    let mut live = std::collections::BTreeSet::new();
    for line in text.lines() {
        let (sign, id) = line.split_at(line.len().min(1));
        match (sign, id.parse::<i32>()) {
            ("+", Ok(id)) => live.insert(id),
            ("-", Ok(id)) => live.remove(&id),
            _ => false,
        };
    }
    live.into_iter().collect()
}

/// Whether a live process of `group` runs for `run` (its environment says `RUNLOG_RUN=run`):
/// a listed group id may have been reused by an unrelated process since.
pub(crate) fn group_runs_for(group: i32, run: &str) -> bool {
    let wanted = format!("RUNLOG_RUN={run}");
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    procs.flatten().any(|p| {
        let path = p.path();
        let in_group = std::fs::read_to_string(path.join("stat")).is_ok_and(|stat| {
            // Fields after the command name (which may hold spaces): state, ppid, pgrp.
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(2).map(str::to_owned))
                == Some(group.to_string())
        });
        in_group
            && std::fs::read(path.join("environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()))
    })
}

/// Stops the process groups a previous runner of `run` listed in `dir` and left running (it
/// was killed with -9, or the machine's power failed mid-run): SIGTERM, `grace`, SIGKILL. One
/// line per group stopped, for the log.
pub async fn stop_leftover_groups(dir: &Path, run: &str, grace: Duration) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut said = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let listed = if name == GROUP_JOURNAL {
            journal_groups(&std::fs::read_to_string(entry.path()).unwrap_or_default())
        } else {
            // A file per group: how a runner before the journal listed them.
            name.to_str()
                .and_then(|n| n.parse::<i32>().ok())
                .into_iter()
                .collect()
        };
        for id in listed
            .into_iter()
            .filter(|id| *id > 1 && group_runs_for(*id, run))
        {
            let how = terminate(Pid::from_raw(id), grace, || {}).await;
            said.push(format!(
                "process group {id}, left running by a runner that stopped without recording it, was {}",
                how.words()
            ));
        }
        let _ = std::fs::remove_file(entry.path());
    }
    said
}

/// Whether any process of the group exists (zombies included).
pub(crate) fn group_alive(group: Pid) -> bool {
    !matches!(killpg(group, None), Err(Errno::ESRCH))
}

/// How often a stopping group is checked.
const POLL: Duration = Duration::from_millis(20);

/// How a process group was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// It ended within the grace period after SIGTERM.
    Terminated,
    /// It outlived the grace period and was sent SIGKILL.
    Killed,
}

impl Stop {
    pub(crate) fn words(self) -> &'static str {
        match self {
            Stop::Terminated => "stopped with SIGTERM",
            Stop::Killed => "killed with SIGKILL after the grace period",
        }
    }
}

/// The one way a group is stopped: SIGTERM, up to `grace` for it to end (calling `reap`
/// between checks, so a leader that is our child does not linger as a zombie), then SIGKILL.
pub(crate) async fn terminate(group: Pid, grace: Duration, mut reap: impl FnMut()) -> Stop {
    let _ = killpg(group, Signal::SIGTERM);
    let until = Instant::now() + grace;
    while Instant::now() < until {
        tokio::time::sleep(POLL).await;
        reap();
        if !group_alive(group) {
            return Stop::Terminated;
        }
    }
    let _ = killpg(group, Signal::SIGKILL);
    Stop::Killed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_journal_lists_what_started_and_is_not_gone() {
        let text = "+100\n+200\n-100\n+300\n-300\n+300\ngarbage\n+4";
        assert_eq!(journal_groups(text), vec![4, 200, 300]);
        let dir = tempfile::tempdir().unwrap();
        let groups = dir.path().join(".groups");
        assert!(list_group(&groups, Pid::from_raw(7), true));
        assert!(list_group(&groups, Pid::from_raw(8), true));
        assert!(list_group(&groups, Pid::from_raw(7), false));
        let listed = std::fs::read_to_string(groups.join(GROUP_JOURNAL)).unwrap();
        assert_eq!(journal_groups(&listed), vec![8]);
        forget_groups(&groups);
        assert!(!groups.join(GROUP_JOURNAL).exists());
    }
}
