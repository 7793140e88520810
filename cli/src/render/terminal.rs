//! The one way text reaches a person's terminal. Recorded text comes from agents, models,
//! upstreams and requests: a model name holding `\r` and an escape sequence could print a
//! forged `run-finished` line and hide the real one. So everything written to standard output,
//! and the errors, notes and live view on standard error, passes a [`Terminal`] writer that
//! shows each control character (but newline and tab), DEL, the C1 controls and the
//! bidirectional overrides as an escape (`\u001b`, `\r`, `\u0085`, `\u202e`).
//!
//! Those are JSON's escapes: JSON output, whose strings can only hold such characters raw when
//! they are DEL, C1 or bidi ones, stays valid JSON saying the same thing.
//!
//! runlog's own sequences (colours, the live view's redrawn line) get through because they are
//! written with [`own`]: each control character as a mark that names it, the mark holding a
//! number drawn afresh by each process, which no recorded text can know.

use std::borrow::Cow;
use std::io::Write;
use std::sync::LazyLock;

/// The mark before one of runlog's own control characters: a private-use character and this
/// process's number.
static MARK: LazyLock<String> = LazyLock::new(|| {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("\u{E000}{:016x}", hasher.finish())
});

/// `sequence` (runlog's own: a colour, a cleared line) as the [`Terminal`] writer lets through:
/// each control character marked, two hex digits after the mark.
pub fn own(sequence: &str) -> String {
    let mut out = String::with_capacity(sequence.len() * 2);
    for c in sequence.chars() {
        if c.is_ascii_control() {
            out.push_str(&MARK);
            out.push_str(&format!("{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// A writer that shows control characters escaped (see the module).
#[derive(Debug)]
pub struct Terminal<W: Write>(pub W);

impl<W: Write> Write for Terminal<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(&escaped(buf))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// `bytes` as a terminal may show them: control characters escaped, runlog's own let through.
pub fn escaped(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !bytes.iter().any(|b| needs_looking(*b)) {
        return Cow::Borrowed(bytes);
    }
    let mark = MARK.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() + 16);
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let rest = bytes.get(i..).unwrap_or_default();
        // A mark starts with U+E000 (0xEE …): compared only where one can start.
        let own = if b == 0xee {
            marked(rest, mark).and_then(own_byte)
        } else {
            None
        };
        if let Some(own) = own {
            out.push(own);
            i += mark.len() + 2;
            continue;
        }
        let (width, shown) = match b {
            b'\n' | b'\t' => (1, None),
            b'\r' => (1, Some("\\r".to_owned())),
            0..=0x1f | 0x7f => (1, Some(format!("\\u{:04x}", b))),
            // C1 controls: U+0080..U+009F.
            0xc2 => match rest.get(1) {
                Some(&c @ 0x80..=0x9f) => (2, Some(format!("\\u{:04x}", c))),
                _ => (1, None),
            },
            // Bidirectional marks and overrides: U+200E, U+200F, U+202A..U+202E, U+2066..U+2069.
            0xe2 => match (rest.get(1), rest.get(2)) {
                (Some(0x80), Some(&c @ (0x8e | 0x8f | 0xaa..=0xae))) => {
                    (3, Some(format!("\\u{:04x}", 0x2000 + u32::from(c) - 0x80)))
                }
                (Some(0x81), Some(&c @ 0xa6..=0xa9)) => {
                    (3, Some(format!("\\u{:04x}", 0x2040 + u32::from(c) - 0x80)))
                }
                _ => (1, None),
            },
            _ => (1, None),
        };
        match shown {
            Some(text) => out.extend_from_slice(text.as_bytes()),
            None => out.extend_from_slice(rest.get(..width).unwrap_or_default()),
        }
        i += width;
    }
    Cow::Owned(out)
}

/// What follows `mark` at the start of `bytes`, when it is there. Compared without a byte
/// comparison that stops at the first difference: nothing watching the comparison (a
/// fuzzer's comparison tracing, a timing) learns the number the mark holds.
fn marked<'a>(bytes: &'a [u8], mark: &[u8]) -> Option<&'a [u8]> {
    let head = bytes.get(..mark.len())?;
    let differs = head.iter().zip(mark).fold(0u8, |acc, (a, b)| acc | (a ^ b));
    (differs == 0).then(|| bytes.get(mark.len()..).unwrap_or_default())
}

/// The control character two hex digits name after the mark: only those runlog writes
/// itself (the escape of a colour, the carriage return of a redrawn line).
fn own_byte(after: &[u8]) -> Option<u8> {
    let hex = std::str::from_utf8(after.get(..2)?).ok()?;
    u8::from_str_radix(hex, 16)
        .ok()
        .filter(|b| matches!(b, 0x1b | b'\r'))
}

/// Whether a byte may begin something to escape or a mark.
fn needs_looking(b: u8) -> bool {
    b < 0x20 && b != b'\n' && b != b'\t' || b == 0x7f || b == 0xc2 || b == 0xe2 || b == 0xee
}

/// Writes `text` to standard error through the [`Terminal`] writer (errors, notes).
pub fn eprint(text: &str) {
    let _ = Terminal(std::io::stderr().lock()).write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn shown(text: &str) -> String {
        String::from_utf8(escaped(text.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn a_forged_line_is_shown_for_what_it_is() {
        let forged = "m\r\n    99  12:00:00  run-finished  run finished: succeeded\u{1b}[8m";
        assert_eq!(
            shown(forged),
            "m\\r\n    99  12:00:00  run-finished  run finished: succeeded\\u001b[8m"
        );
        assert_eq!(
            shown("a\u{9b}b\u{202e}c\u{7f}\td"),
            "a\\u009bb\\u202ec\\u007f\td"
        );
        assert_eq!(shown("plain, naïve — ✓"), "plain, naïve — ✓");
        assert_eq!(shown("p\0"), "p\\u0000");
    }

    #[test]
    fn runlogs_own_sequences_pass_and_a_mark_without_the_number_does_not() {
        let own = own("\u{1b}[38;2;1;2;3m");
        assert_eq!(shown(&format!("{own}done")), "\u{1b}[38;2;1;2;3mdone");
        assert_eq!(
            shown("\u{E000}00000000000000001b[8m"),
            "\u{E000}00000000000000001b[8m"
        );
    }

    #[test]
    fn json_output_stays_json() {
        let line = serde_json::json!({"model": "m\u{85}\u{202e}x\u{7f}"}).to_string();
        let shown: serde_json::Value = serde_json::from_str(&shown(&line)).unwrap();
        assert_eq!(shown["model"], "m\u{85}\u{202e}x\u{7f}");
    }
}
