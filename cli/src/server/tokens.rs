//! Who may do what over TCP (`--token-file`): named tokens, each with a scope, and a limit on
//! failed attempts per client address. The file holds one token per line, `NAME SCOPE TOKEN`
//! (blank lines and `#` comments skipped); a file of a single bare token, as before scopes,
//! is one token named `token` with the `run` scope.
//!
//! Scopes are ordered, each allowing what the ones before it do: `read` (every GET: runs,
//! boards, events, audit, export), `steer` (also every command and interrupt: approve,
//! reject, reopen, rollback, fork, replan), `run` (also starting workflows, whose commands run
//! as the server's user).

use axum::http::Method;
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

    /// The scope a request needs: reading for a GET, starting a workflow for `POST /v1/runs`,
    /// steering for any other POST.
    pub fn needed(method: &Method, path: &str) -> Self {
        match *method {
            Method::GET | Method::HEAD | Method::OPTIONS => Scope::Read,
            _ if path.trim_end_matches('/') == "/v1/runs" => Scope::Run,
            _ => Scope::Steer,
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

/// The shortest secret accepted.
const MIN_SECRET: usize = 16;

impl Tokens {
    /// Reads a token file's text; the error says which line and what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
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
                    let scope = Scope::parse(scope).ok_or_else(|| {
                        format!("line {n}: the scope {scope:?} is not read, steer or run")
                    })?;
                    (*name, scope, *secret)
                }
                _ => return Err(format!("line {n}: expected NAME SCOPE TOKEN")),
            };
            if secret.len() < MIN_SECRET {
                return Err(format!(
                    "line {n}: the token of {name} is shorter than {MIN_SECRET} characters"
                ));
            }
            let digest = *blake3::hash(secret.as_bytes()).as_bytes();
            if tokens.iter().any(|t: &Token| t.name == name) {
                return Err(format!("line {n}: {name} has a token already"));
            }
            if tokens.iter().any(|t: &Token| t.digest == digest) {
                return Err(format!("line {n}: the token of {name} is another's too"));
            }
            tokens.push(Token {
                name: name.to_owned(),
                scope,
                digest,
            });
        }
        if tokens.is_empty() {
            return Err("it holds no token".into());
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
            let err = Tokens::parse(text).unwrap_err();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }

    #[test]
    fn each_request_needs_its_scope() {
        assert_eq!(Scope::needed(&Method::GET, "/v1/runs"), Scope::Read);
        assert_eq!(Scope::needed(&Method::POST, "/v1/runs"), Scope::Run);
        assert_eq!(
            Scope::needed(&Method::POST, "/v1/runs/r/commands"),
            Scope::Steer
        );
        assert_eq!(
            Scope::needed(&Method::POST, "/v1/runs/r/interrupt"),
            Scope::Steer
        );
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
