//! Writes an attempt made outside its own worktree: a coding agent can write anywhere its user
//! can (a model names an absolute path, and nothing in the agent keeps it inside), so runlog
//! looks at the places it manages around a task's worktree after each attempt and records what
//! changed there. `outside_writes` says what that means for the attempt.

use crate::ids::{RunId, TaskId};
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};

/// What a write outside the worktree does to its attempt (`[settings] outside_writes`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum OutsidePolicy {
    /// Recorded and shown; the attempt goes on as it ended.
    #[default]
    Warn,
    /// Recorded, and the attempt fails naming the paths.
    Fail,
}

/// A place outside a task's worktree that runlog watches.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
#[serde(tag = "place", rename_all = "kebab-case")]
pub enum Place {
    /// The repository's own checkout (the person's working tree).
    Checkout,
    /// The worktrees directory of another run in the store, not being executed now.
    OtherRun {
        /// That run.
        run: RunId,
    },
}

impl Place {
    /// `the repository's checkout`, `run nightly-3's worktrees`.
    pub fn describe(&self) -> String {
        match self {
            Place::Checkout => "the repository's checkout".to_owned(),
            Place::OtherRun { run } => format!("run {run}'s worktrees"),
        }
    }
}

/// The paths changed in one place, relative to it.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Written {
    /// Where.
    pub place: Place,
    /// The paths created, modified or deleted there (at most [`MAX_PATHS`]).
    pub paths: Vec<String>,
    /// How many more were changed than are named.
    pub more: u32,
}

/// The most paths named for one place.
pub const MAX_PATHS: usize = 50;

/// What an attempt wrote outside its worktree (the `wrote-outside` event's record).
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct OutsideWrites {
    /// The task.
    pub task: TaskId,
    /// Its attempt.
    pub attempt: u32,
    /// Each place, with what changed there.
    pub written: Vec<Written>,
    /// The policy in force: whether the attempt fails for it.
    pub policy: OutsidePolicy,
}

impl OutsideWrites {
    /// `attempt 1 wrote outside its worktree: hello.txt in the repository's checkout`.
    pub fn describe(&self) -> String {
        let places: Vec<String> = self
            .written
            .iter()
            .map(|w| {
                let more = if w.more > 0 {
                    format!(" and {} more", w.more)
                } else {
                    String::new()
                };
                format!("{}{more} in {}", w.paths.join(", "), w.place.describe())
            })
            .collect();
        format!(
            "attempt {} wrote outside its worktree: {}",
            self.attempt,
            places.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_is_said_with_its_place() {
        let w = OutsideWrites {
            task: TaskId::from("hello"),
            attempt: 1,
            written: vec![
                Written {
                    place: Place::Checkout,
                    paths: vec!["hello.txt".into()],
                    more: 0,
                },
                Written {
                    place: Place::OtherRun {
                        run: RunId::from("nightly"),
                    },
                    paths: vec!["hello/a".into(), "hello/b".into()],
                    more: 3,
                },
            ],
            policy: OutsidePolicy::Warn,
        };
        assert_eq!(
            w.describe(),
            "attempt 1 wrote outside its worktree: hello.txt in the repository's checkout; \
             hello/a, hello/b and 3 more in run nightly's worktrees"
        );
    }
}
