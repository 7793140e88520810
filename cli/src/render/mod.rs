//! Everything the CLI prints for people: status words and colours (one [`palette`]), events in
//! words, tables' helpers, graphs, JSON lines, progress. Commands decide what to show; this
//! module decides how it looks.

pub mod event;
pub mod palette;
pub mod summary;
pub mod terminal;
pub mod viz;

use crate::error::CliError;
use runlog_core::projections::board::BoardRow;
use runlog_core::Readiness;
use serde::Serialize;
use std::io::{BufWriter, IsTerminal, StdoutLock, Write};

/// Whether to colour stdout.
pub fn color() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// A status word, coloured (blocked open tasks in dim red).
pub fn status_word(row: &BoardRow, color: bool) -> String {
    let word = if palette::is_blocked(row) {
        "blocked"
    } else {
        row.status.name()
    };
    paint(word, palette::of_row(row).filter(|_| color))
}

/// `text` in a colour, or plain.
pub fn paint(text: &str, rgb: Option<palette::Rgb>) -> String {
    match rgb {
        Some(c) => format!(
            "{}{text}{}",
            terminal::own(&c.ansi_fg()),
            terminal::own("\x1b[0m")
        ),
        None => text.to_owned(),
    }
}

/// Readiness in words.
pub fn readiness(r: &Option<Readiness>) -> String {
    match r {
        Some(Readiness::Ready) => "ready".into(),
        Some(Readiness::Waiting { on }) => format!("waiting on {}", join(on)),
        Some(Readiness::Blocked { by }) => format!("blocked by {}", join(by)),
        Some(Readiness::CircuitOpen { stage }) => {
            format!("blocked: stage {stage}'s circuit is open")
        }
        Some(Readiness::BudgetSpent { spent }) => format!("stopped: {spent}"),
        None => String::new(),
    }
}

/// Comma-joined ids.
pub fn join<T: std::fmt::Display>(ids: &[T]) -> String {
    ids.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Prints a value as one line of JSON.
pub fn json<T: Serialize>(value: &T) -> Result<(), CliError> {
    write_json(&mut stdout(), value).map_err(CliError::stdout)
}

/// Standard output, through the [`terminal::Terminal`] writer.
pub fn stdout() -> terminal::Terminal<StdoutLock<'static>> {
    terminal::Terminal(std::io::stdout().lock())
}

/// Writes text to standard output ([`outln!`] and [`out!`]).
pub fn out(text: std::fmt::Arguments<'_>) -> Result<(), CliError> {
    stdout().write_fmt(text).map_err(CliError::stdout)
}

/// Writes a value as one line of JSON.
pub fn write_json<T: Serialize>(out: &mut impl Write, value: &T) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, value)
        .map_err(|e| std::io::Error::other(format!("cannot encode JSON: {e}")))?;
    out.write_all(b"\n")
}

/// Standard output for a long listing (an event a line, a task a row): `println!` writes each
/// line on its own, which was 1.3 s of system time in exporting a run of 1M events. Flush it
/// at the end: what is still buffered when it is dropped is written, but a failure then goes
/// unseen.
pub fn listing() -> terminal::Terminal<BufWriter<StdoutLock<'static>>> {
    terminal::Terminal(BufWriter::with_capacity(
        64 * 1024,
        std::io::stdout().lock(),
    ))
}

/// Pads `text` (which may hold colour escapes) to `width` visible characters.
pub fn pad(text: &str, visible: usize, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(visible)))
}

/// A gate decision in words.
pub fn gate_word(o: &runlog_core::GateOutcome) -> String {
    match o {
        runlog_core::GateOutcome::Pass => "pass".into(),
        runlog_core::GateOutcome::Rescue { n } => format!("rescue {n} (same agent, same worktree)"),
        runlog_core::GateOutcome::Fail => "fail".into(),
    }
}

/// An eval decision in words, as `runlog audit` prints it and the web view shows it.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct AuditWords {
    /// The gate's decision and the threshold in force (`pass at threshold 0.7`).
    pub decision: String,
    /// What it led to (`done at seq 12; ready: b`), empty while it is pending.
    pub consequence: String,
    /// Why a person should look twice, each in words.
    pub flags: Vec<String>,
}

impl AuditWords {
    /// The words of one eval decision.
    pub fn of(e: &runlog_core::projections::audit::AuditEntry) -> Self {
        use runlog_core::projections::audit::AuditFlag;
        let decision = match (&e.decision, e.threshold) {
            (Some(d), Some(t)) => format!("{} at threshold {t}", gate_word(d)),
            _ => "no decision".into(),
        };
        let flags = e
            .flags
            .iter()
            .map(|f| match f {
                AuditFlag::NearThreshold { margin } => {
                    format!("near the threshold (margin {margin})")
                }
                AuditFlag::MissingDimensions { missing } if missing.is_empty() => {
                    "no dimensions".into()
                }
                AuditFlag::MissingDimensions { missing } => {
                    format!("missing dimensions: {}", missing.join(", "))
                }
                AuditFlag::ApprovedOverFailingScore { by, seq } => {
                    format!("approved by {by} at seq {seq} over this failing score")
                }
            })
            .collect();
        Self {
            decision,
            consequence: e.consequence.as_ref().map(consequence).unwrap_or_default(),
            flags,
        }
    }
}

/// An eval decision as the API sends it: the audit's entry with its words.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct WordedDecision {
    /// The decision.
    #[serde(flatten)]
    pub entry: runlog_core::projections::audit::AuditEntry,
    /// What `runlog audit` prints for it.
    pub words: AuditWords,
}

/// A run's audit as the API sends it: each decision with its words.
#[derive(Debug, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct WordedAudit {
    /// Every eval decision, in order.
    pub entries: Vec<WordedDecision>,
    /// Decisions made outside the gate (by a person, by an evaluator's error), in order.
    pub out_of_gate: Vec<runlog_core::projections::audit::OutOfGate>,
}

impl WordedAudit {
    /// The audit `a` with its words.
    pub fn of(a: runlog_core::projections::audit::EvalAudit) -> Self {
        let entries = a
            .entries
            .into_iter()
            .map(|entry| WordedDecision {
                words: AuditWords::of(&entry),
                entry,
            })
            .collect();
        Self {
            entries,
            out_of_gate: a.out_of_gate,
        }
    }
}

/// What a gate decision led to, in words (`runlog audit`).
pub fn consequence(c: &runlog_core::projections::audit::Consequence) -> String {
    use runlog_core::projections::audit::Consequence;
    match c {
        Consequence::Done {
            ready,
            at_seq,
            merged_at,
        } => {
            let merged = merged_at.map_or(String::new(), |m| format!(", merged at seq {m}"));
            if ready.is_empty() {
                format!("done at seq {at_seq}{merged}")
            } else {
                format!("done at seq {at_seq}{merged}; ready: {}", join(ready))
            }
        }
        Consequence::Rescue { n } => format!("rescue {n}"),
        Consequence::Failed => "failed".into(),
        Consequence::MergeConflicted { files, rescue, .. } => {
            let then = rescue.map_or("it waits for a person".to_owned(), |n| {
                format!("rescue {n}")
            });
            format!("merge conflicted ({}), {then}", join(files))
        }
        Consequence::Held => "held for a person's review (`runlog review`)".into(),
        Consequence::Reviewed {
            by,
            approved,
            reopen,
            at_seq,
        } => match (approved, reopen) {
            (true, _) => format!("reviewed: approved by {by} at seq {at_seq}"),
            (false, true) => format!("reviewed: rejected and reopened by {by} at seq {at_seq}"),
            (false, false) => format!("reviewed: rejected by {by} at seq {at_seq}"),
        },
    }
}

/// Progress of a long replay on stderr, when it is a terminal and the history is long enough
/// to be worth it; the line is cleared at the end.
pub fn replay_progress(label: &str) -> impl FnMut(u64, u64) + '_ {
    let tty = std::io::stderr().is_terminal();
    move |done, total| {
        if !tty || total < 50_000 {
            return;
        }
        if done >= total {
            eprint!("\r\x1b[2K");
        } else {
            eprint!(
                "\r\x1b[2K{label}: {done}/{total} events ({}%)",
                done * 100 / total.max(1)
            );
        }
    }
}

/// What changed for one task in a diff, as short phrases.
pub fn task_changes(t: &runlog_replay::diff::TaskDiff) -> Vec<String> {
    use runlog_replay::diff::Presence;
    let mut parts = Vec::new();
    match t.presence {
        Presence::LeftOnly => parts.push("not in the right".to_owned()),
        Presence::RightOnly => parts.push("added".to_owned()),
        Presence::Both => {}
    }
    if let Some((x, y)) = t.status {
        parts.push(format!(
            "{} → {}",
            x.map_or("-", |s| s.name()),
            y.map_or("-", |s| s.name())
        ));
    }
    if let Some((x, y)) = t.attempts {
        parts.push(format!("attempts {x} → {y}"));
    }
    if let Some((x, y)) = t.rescues {
        parts.push(format!("rescues {x} → {y}"));
    }
    if let Some((x, y)) = t.test_failures {
        parts.push(format!("test failures {x} → {y}"));
    }
    if let Some((x, y)) = t.score {
        parts.push(format!(
            "score {} → {}",
            x.map_or("-".into(), |v| v.to_string()),
            y.map_or("-".into(), |v| v.to_string())
        ));
    }
    for (name, d) in &t.dimensions {
        parts.push(format!(
            "{name} {}",
            d.delta.map_or_else(
                || format!("{:?} → {:?}", d.left, d.right),
                |v| format!("{v:+}")
            )
        ));
    }
    if !t.replaced_by.is_empty() {
        parts.push(format!("replaced by {}", join(&t.replaced_by)));
    }
    parts
}

/// What something spent, in words: `$0.9500, 110015 tokens`, with the records that had no
/// price named (never shown as free): `$0.9500 + 2 unpriced, 110015 tokens`.
pub fn spend(s: &runlog_core::usage::Spend) -> String {
    let unpriced = match s.unpriced {
        0 => String::new(),
        n => format!(" + {n} unpriced"),
    };
    format!(
        "{}{unpriced}, {} tokens",
        runlog_core::usage::usd(s.cost_usd),
        s.tokens.total()
    )
}

/// A cost in a table's column: `$0.9500`, `$0.9500+?` when some usage had no price, `unpriced`
/// when none had one, `-` for none.
pub fn cost_cell(s: &runlog_core::usage::Spend) -> String {
    let nothing = s.cost_usd == 0.0;
    match (s.unpriced, s.tokens.total()) {
        (0, 0) if nothing => "-".into(),
        (0, _) => runlog_core::usage::usd(s.cost_usd),
        _ if nothing => "unpriced".into(),
        _ => format!("{}+?", runlog_core::usage::usd(s.cost_usd)),
    }
}

/// A size for people: `512 B`, `3.1 KiB`, `2.0 MiB`, `1.2 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if n < 1024 {
        return format!("{n} B");
    }
    let mut size = n as f64 / 1024.0;
    let mut unit = 0;
    while size >= 1024.0 && unit + 1 < UNITS.len() {
        size /= 1024.0;
        unit += 1;
    }
    format!("{size:.1} {}", UNITS.get(unit).copied().unwrap_or("TiB"))
}
