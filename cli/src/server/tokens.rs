//! Who may do what over TCP (`--token-file`): named tokens, each with a scope, and a limit on
//! failed attempts per client address. The file holds one token per line, `NAME SCOPE TOKEN`
//! (blank lines and `#` comments skipped); a file of a single bare token, as before scopes,
//! is one token named `token` with the `run` scope.
//!
//! Scopes are ordered, each allowing what the ones before it do: `read` (every GET: runs,
//! boards, events, audit, export), `steer` (also every command and interrupt: approve,
//! reject, reopen, rollback, fork, replan), `run` (also starting workflows, whose commands run
//! as the server's user).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed attempts allowed per client address within [`WINDOW`]; more are answered 429.
pub const MAX_FAILURES: u32 = 10;

/// How long failed attempts are remembered.
pub const WINDOW: Duration = Duration::from_secs(60);

/// Addresses remembered at most; past that, the forgotten ones start afresh.
const MAX_REMEMBERED: usize = 10_000;

/// What a token allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// Inspect only.
    Read,
    /// Inspect and decide: every command.
    Steer,
    /// All of it, and start workflows.
    Run,
}

impl Scope {
    fn parse(s: &str) -> Option<Self> {
        [Scope::Read, Scope::Steer, Scope::Run]
            .into_iter()
            .find(|scope| scope.name() == s)
    }

    /// The scope's word, as the token file spells it.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Steer => "steer",
            Scope::Run => "run",
        }
    }
}

/// One token: its holder's name, its scope, and the hash of its secret (compared, never kept
/// or printed in the clear).
#[derive(Debug)]
struct Token {
    name: String,
    scope: Scope,
    digest: [u8; 32],
}

/// The tokens of a server and the failed attempts it remembers.
#[derive(Debug)]
pub struct Tokens {
    tokens: Vec<Token>,
    failures: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

/// Why a token file cannot be used, with its line.
#[derive(Debug, thiserror::Error)]
pub enum TokenFileError {
    /// A scope runlog does not have.
    #[error("line {line}: the scope {scope:?} is not read, steer or run")]
    Scope {
        /// The line.
        line: usize,
        /// The scope written.
        scope: String,
    },
    /// Neither `NAME SCOPE TOKEN` nor a lone token.
    #[error("line {line}: expected NAME SCOPE TOKEN")]
    Shape {
        /// The line.
        line: usize,
    },
    /// A secret too short to be one.
    #[error("line {line}: the token of {name} is shorter than {MIN_SECRET} characters")]
    Short {
        /// The line.
        line: usize,
        /// The holder.
        name: String,
    },
    /// A name given a second token.
    #[error("line {line}: {name} has a token already")]
    Taken {
        /// The line.
        line: usize,
        /// The holder.
        name: String,
    },
    /// A secret given to two names.
    #[error("line {line}: the token of {name} is another's too")]
    Shared {
        /// The line.
        line: usize,
        /// The holder.
        name: String,
    },
    /// No token at all.
    #[error("it holds no token")]
    Empty,
}

/// The shortest secret accepted.
const MIN_SECRET: usize = 16;

impl Tokens {
    /// Reads a token file's text; the error says which line and what is wrong.
    pub fn parse(text: &str) -> Result<Self, TokenFileError> {
        let lines: Vec<(usize, Vec<&str>)> = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.split_whitespace().collect::<Vec<_>>()))
            .filter(|(_, w)| w.first().is_some_and(|first| !first.starts_with('#')))
            .collect();
        let mut tokens = Vec::new();
        for (n, words) in &lines {
            let (name, scope, secret) = match words.as_slice() {
                [secret] if lines.len() == 1 => ("token", Scope::Run, *secret),
                [name, scope, secret] => {
                    let scope = Scope::parse(scope).ok_or_else(|| TokenFileError::Scope {
                        line: *n,
                        scope: (*scope).to_owned(),
                    })?;
                    (*name, scope, *secret)
                }
                _ => return Err(TokenFileError::Shape { line: *n }),
            };
            if secret.len() < MIN_SECRET {
                return Err(TokenFileError::Short {
                    line: *n,
                    name: name.to_string(),
                });
            }
            let digest = *blake3::hash(secret.as_bytes()).as_bytes();
            if tokens.iter().any(|t: &Token| t.name == name) {
                return Err(TokenFileError::Taken {
                    line: *n,
                    name: name.to_string(),
                });
            }
            if tokens.iter().any(|t: &Token| t.digest == digest) {
                return Err(TokenFileError::Shared {
                    line: *n,
                    name: name.to_string(),
                });
            }
            tokens.push(Token {
                name: name.to_owned(),
                scope,
                digest,
            });
        }
        if tokens.is_empty() {
            return Err(TokenFileError::Empty);
        }
        Ok(Self {
            tokens,
            failures: Mutex::default(),
        })
    }

    /// Who holds `sent`, and with which scope. Every token is compared, each in time that does
    /// not depend on where the bytes differ, so the answer's timing tells nothing.
    pub fn holder(&self, sent: &str) -> Option<(&str, Scope)> {
        let digest = blake3::hash(sent.as_bytes());
        let mut found = None;
        for t in &self.tokens {
            // blake3's Hash compares in constant time.
            if blake3::Hash::from(t.digest) == digest {
                found = Some((t.name.as_str(), t.scope));
            }
        }
        found
    }

    fn remembered(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, (u32, Instant)>> {
        self.failures.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether `peer` has failed too often lately to be heard now.
    pub fn blocked(&self, peer: Option<IpAddr>, now: Instant) -> bool {
        let Some(peer) = peer else { return false };
        self.remembered()
            .get(&peer)
            .is_some_and(|(n, since)| *n >= MAX_FAILURES && now.duration_since(*since) < WINDOW)
    }

    /// Counts a failed attempt from `peer`.
    pub fn failed(&self, peer: Option<IpAddr>, now: Instant) {
        let Some(peer) = peer else { return };
        let mut failures = self.remembered();
        if failures.len() >= MAX_REMEMBERED {
            failures.retain(|_, (_, since)| now.duration_since(*since) < WINDOW);
            if failures.len() >= MAX_REMEMBERED {
                failures.clear();
            }
        }
        let entry = failures.entry(peer).or_insert((0, now));
        if now.duration_since(entry.1) >= WINDOW {
            *entry = (0, now);
        }
        entry.0 += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbb";

    #[test]
    fn a_file_names_tokens_with_scopes_and_a_bare_token_may_do_everything() {
        let t = Tokens::parse(&format!("# who\nci read {A}\n\nalice steer {B}\n")).unwrap();
        assert_eq!(t.holder(A), Some(("ci", Scope::Read)));
        assert_eq!(t.holder(B), Some(("alice", Scope::Steer)));
        assert_eq!(t.holder("cccccccccccccccccccc"), None);
        let bare = Tokens::parse(&format!("{A}\n")).unwrap();
        assert_eq!(bare.holder(A), Some(("token", Scope::Run)));
    }

    #[test]
    fn bad_files_say_which_line() {
        for (text, says) in [
            ("", "no token"),
            ("ci admin aaaaaaaaaaaaaaaaaaaa", "line 1: the scope"),
            ("ci read short", "shorter than 16"),
            (
                &format!("a read {A}\na run {B}") as &str,
                "line 2: a has a token",
            ),
            (&format!("a read {A}\nb run {A}"), "another's too"),
            (&format!("{A}\n{B}"), "line 1: expected NAME SCOPE TOKEN"),
        ] {
            let err = Tokens::parse(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }

    #[test]
    fn scopes_are_ordered_read_steer_run() {
        assert!(Scope::Read < Scope::Steer && Scope::Steer < Scope::Run);
    }

    #[test]
    fn too_many_failures_block_an_address_for_a_while() {
        let t = Tokens::parse(A).unwrap();
        let peer = Some(IpAddr::from([10, 0, 0, 1]));
        let other = Some(IpAddr::from([10, 0, 0, 2]));
        let now = Instant::now();
        for _ in 0..MAX_FAILURES {
            assert!(!t.blocked(peer, now));
            t.failed(peer, now);
        }
        assert!(t.blocked(peer, now));
        assert!(!t.blocked(other, now));
        assert!(!t.blocked(peer, now + WINDOW));
    }
}
