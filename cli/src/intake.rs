//! What the command line and the API both take in from outside: commands as JSON lines
//! (`runlog emit`, `POST /v1/runs/{run}/commands`) and who is acting.

use runlog_core::redact::{redactions, Counts, Redactor};
use runlog_core::{Command, CommandKind, Principal, Via};
use runlog_runner::Workflow;

/// Who is acting: `--by`, else `$USER`, else "unknown".
pub fn actor(by: Option<String>) -> String {
    by.or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "unknown".into())
}

/// The user this process runs as: who a decision recorded from the command line is by,
/// whatever `--by` claims.
pub fn os_user() -> Principal {
    user(nix::unistd::getuid(), Via::OsUser)
}

/// The principal of user `uid`, established `via` some means: the user's name, or `uid N` for
/// a user the system does not name.
pub fn user(uid: nix::unistd::Uid, via: Via) -> Principal {
    let name = nix::unistd::User::from_uid(uid)
        .ok()
        .flatten()
        .map_or_else(|| format!("uid {uid}"), |u| u.name);
    Principal { name, via }
}

/// `cmd` with every secret of this process's environment (its `*_KEY`, `*_TOKEN`, `*_SECRET`,
/// `*PASSWORD*` and `*_HEADERS` variables) and every well-known key shape replaced, the replacement noted
/// on the command so that its events record it. Commands from outside (the API, `emit`, a
/// person's decision) pass here before they are decided. A secret where a replacement would not
/// be a command any more is refused, never recorded.
pub fn redacted(cmd: Command, redactor: &Redactor) -> Result<Command, IntakeError> {
    let Ok(mut value) = serde_json::to_value(&cmd.kind) else {
        return Ok(cmd);
    };
    let mut counts = Counts::new();
    redactor.redact_json(&mut value, &mut counts);
    if counts.is_empty() {
        return Ok(cmd);
    }
    let names: Vec<&str> = counts.keys().map(String::as_str).collect();
    match serde_json::from_value::<CommandKind>(value) {
        Ok(kind) => Ok(Command {
            kind,
            redacted: redactions(counts.clone()),
            ..cmd
        }),
        Err(e) => Err(IntakeError::SecretInPlace {
            names: names.join(", "),
            why: e.to_string(),
        }),
    }
}

/// One line of `emit`'s input: a command with its time, or a bare command kind stamped `now`; a
/// start-run may be written short, with a workflow file's defaults ([`Workflow::short_start`]).
pub fn parse_line(
    line: &str,
    now: impl FnOnce() -> runlog_core::Timestamp,
    redactor: &Redactor,
) -> Result<Command, IntakeError> {
    if let Ok(c) = serde_json::from_str::<Command>(line) {
        return redacted(c, redactor);
    }
    let kind = match serde_json::from_str::<CommandKind>(line) {
        Ok(kind) => kind,
        Err(e) => match Workflow::short_start(line) {
            Some(short) => short.map_err(|e| IntakeError::NotACommand(e.to_string()))?,
            None => return Err(IntakeError::NotACommand(e.to_string())),
        },
    };
    redacted(Command::new(now(), kind), redactor)
}

/// Why a command from outside is not taken in.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    /// Neither a command, a command kind, nor a short start-run (JSON's or the workflow's words).
    #[error("{0}")]
    NotACommand(String),
    /// A secret stands where its replacement would not be a command.
    #[error("it holds a secret ({names}) where [redacted:NAME] cannot stand ({why}); nothing was recorded")]
    SecretInPlace {
        /// The secrets' names.
        names: String,
        /// What reading the command back said.
        why: String,
    },
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use base64::Engine;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// A secret the intake knows, sent in a command's text plain, JSON-escaped or inside
        /// base64, is in none of those forms in the command that is decided.
        #[test]
        fn a_known_secret_never_survives_the_intake(
            secret in "[ -~\"\\\\é]{8,32}",
            before in "[ -~]{0,24}",
            form in 0..3usize,
        ) {
            let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t.as_bytes());
            let sent = match form {
                0 => format!("{before}{secret}"),
                1 => serde_json::to_string(&format!("{before}{secret}")).unwrap(),
                _ => b64(&format!("{before}{secret}")),
            };
            let redactor = Redactor::new([("DB_PASSWORD".to_owned(), secret.clone())]);
            let cmd = Command::new(
                runlog_core::Timestamp(0),
                CommandKind::PostMessage { task: None, from: sent.clone(), text: sent },
            );
            let kept = serde_json::to_string(&redacted(cmd, &redactor).unwrap().kind).unwrap();
            let escaped = serde_json::to_string(&secret).unwrap();
            prop_assert!(!kept.contains(&secret), "{kept}");
            prop_assert!(!kept.contains(&escaped[1..escaped.len() - 1]), "{kept}");
            if form == 2 {
                prop_assert!(kept.contains("[redacted:DB_PASSWORD]"), "{kept}");
            }
        }
    }
}
