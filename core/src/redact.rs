//! Secrets kept out of the log: a [`Redactor`] replaces known secret values and well-known key
//! shapes with `[redacted:NAME]` before text is recorded, and counts what it replaced by name
//! (never the value), for the `secrets-redacted` event. The log is append-only and chained, so
//! a secret that reached it could never be taken out again: this is the only place to stop it.
//!
//! Pure: the values come from the caller (the runner reads its environment and the workflow's
//! `redact_file`); this module only matches and replaces.

use aho_corasick::{AhoCorasick, MatchKind};
use bincode::{Decode, Encode};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The environment variable names whose values are secrets unless the workflow says otherwise
/// (`[settings] redact_env`): `*` stands for any characters, compared without case.
/// `*_HEADERS` holds the credentials of header variables such as `OTEL_EXPORTER_OTLP_HEADERS`.
pub const DEFAULT_ENV_PATTERNS: &[&str] =
    &["*_KEY", "*_TOKEN", "*_SECRET", "*PASSWORD*", "*_HEADERS"];

/// Values shorter than this are not redacted: `FOO_KEY=1` would otherwise turn every `1` of
/// every output into a marker. Real keys and passwords are longer.
pub const MIN_SECRET_LEN: usize = 8;

/// How many of one secret were replaced.
#[derive(Debug, Clone, PartialEq, Eq, Encode, Decode, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Redaction {
    /// The secret's name: an environment variable's, a `redact_file` entry's, or a key shape
    /// (`openai-key`, `anthropic-key`, `aws-access-key`, `github-token`, `private-key`).
    pub name: String,
    /// How many times it was replaced.
    pub count: u32,
}

/// The well-known key shapes, most specific first (an Anthropic key also starts with `sk-`).
static SHAPES: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    [
        (
            "private-key",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
        ),
        ("anthropic-key", r"sk-ant-[A-Za-z0-9]+-[A-Za-z0-9_\-]{20,}"),
        (
            "openai-key",
            r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        ),
        ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
        (
            "github-token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        ),
        // The key runlog's gateway gives each running command (`runlog-` and 32 hex digits).
        ("runlog-command-key", r"\brunlog-[0-9a-f]{32}\b"),
    ]
    .into_iter()
    .filter_map(|(name, pattern)| Regex::new(pattern).ok().map(|re| (name, re)))
    .collect()
});

/// The well-known key shapes, by name.
pub fn shapes() -> impl Iterator<Item = (&'static str, &'static Regex)> {
    SHAPES.iter().map(|(name, re)| (*name, re))
}

/// The secrets of one process or run, and the key shapes. Its `Debug` names the secrets,
/// never shows them.
#[derive(Clone, Default)]
pub struct Redactor {
    /// `(name, value)`, longest value first, so a secret containing another is replaced whole.
    values: Vec<(String, String)>,
    /// All the values in one automaton: one pass over a text however many secrets there are.
    matcher: Option<AhoCorasick>,
}

impl PartialEq for Redactor {
    fn eq(&self, other: &Self) -> bool {
        self.values == other.values
    }
}

impl Eq for Redactor {}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redactor")
            .field("secrets", &self.names().collect::<Vec<_>>())
            .finish()
    }
}

/// A secret as a recorder may hold it: as it is; JSON-escaped (a request body, an export);
/// and base64-encoded inside a longer base64 text, at each of the three places a byte can
/// start in a group of three (the characters that depend on the secret alone, when there are
/// at least [`MIN_SECRET_LEN`] of them).
fn encodings(value: &str) -> Vec<String> {
    use base64::Engine;
    let mut found = vec![value.to_owned()];
    let escaped = serde_json::to_string(value).unwrap_or_default();
    if let Some(inner) = escaped.get(1..escaped.len().saturating_sub(1)) {
        found.push(inner.to_owned());
    }
    for before in 0..3usize {
        let mut bytes = vec![0u8; before];
        bytes.extend_from_slice(value.as_bytes());
        let text = base64::engine::general_purpose::STANDARD_NO_PAD.encode(&bytes);
        // The first group mixes in what came before; the last holds what follows.
        let skip = if before == 0 { 0 } else { 4 };
        let end = (before + value.len()) / 3 * 4;
        if let Some(core) = text.get(skip..end).filter(|c| c.len() >= MIN_SECRET_LEN) {
            found.push(core.to_owned());
        }
    }
    found.sort();
    found.dedup();
    found
}

/// What one pass replaced, by name.
pub type Counts = BTreeMap<String, u32>;

impl Redactor {
    /// A redactor of the key shapes and of `values` (`(name, value)`); values shorter than
    /// [`MIN_SECRET_LEN`] are ignored.
    pub fn new(values: impl IntoIterator<Item = (String, String)>) -> Self {
        let values: Vec<(String, String)> = values
            .into_iter()
            .filter(|(_, v)| v.len() >= MIN_SECRET_LEN)
            .flat_map(|(name, value)| {
                encodings(&value)
                    .into_iter()
                    .map(move |encoded| (name.clone(), encoded))
            })
            .collect();
        Self::of_encoded(values)
    }

    /// This redactor and `(name, value)` too (a secret the process made: a token it hands a
    /// run's commands).
    pub fn with(&self, name: &str, value: &str) -> Self {
        let mut values = self.values.clone();
        values.extend(Self::new([(name.to_owned(), value.to_owned())]).values);
        Self::of_encoded(values)
    }

    fn of_encoded(mut values: Vec<(String, String)>) -> Self {
        values.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        values.dedup_by(|a, b| a.1 == b.1);
        let matcher = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(values.iter().map(|(_, v)| v.as_bytes()))
            .ok()
            .filter(|_| !values.is_empty());
        Self { values, matcher }
    }

    /// The secrets among `vars` (an environment) whose names match one of `patterns`.
    pub fn named_in(
        vars: impl IntoIterator<Item = (String, String)>,
        patterns: &[impl AsRef<str>],
    ) -> Vec<(String, String)> {
        vars.into_iter()
            .filter(|(name, _)| patterns.iter().any(|p| glob(p.as_ref(), name)))
            .collect()
    }

    /// The secrets of a `redact_file`: one per line, `NAME=VALUE` (NAME in capitals, digits
    /// and `_`) or a bare value (named `listed`); blank lines and `#` comments skipped.
    pub fn parse_file(text: &str) -> Vec<(String, String)> {
        text.lines()
            .map(|l| l.trim_end_matches('\r'))
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map(|line| match line.split_once('=') {
                Some((name, value))
                    if !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_') =>
                {
                    (name.to_owned(), value.to_owned())
                }
                _ => ("listed".to_owned(), line.to_owned()),
            })
            .collect()
    }

    /// The names of the secret values it knows (for messages; never the values).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|(n, _)| n.as_str())
    }

    /// `text` with every secret replaced by `[redacted:NAME]`, counting into `counts`.
    pub fn redact(&self, text: &str, counts: &mut Counts) -> Option<String> {
        let mut out: Option<String> = None;
        if let Some(matcher) = &self.matcher {
            let mut clean = String::new();
            let mut last = 0;
            for m in matcher.find_iter(text) {
                let Some((name, _)) = self.values.get(m.pattern().as_usize()) else {
                    continue;
                };
                clean.push_str(text.get(last..m.start()).unwrap_or(""));
                clean.push_str(&marker(name));
                last = m.end();
                *counts.entry(name.clone()).or_default() += 1;
            }
            if last > 0 {
                clean.push_str(text.get(last..).unwrap_or(""));
                out = Some(clean);
            }
        }
        for (name, shape) in SHAPES.iter() {
            let now = out.as_deref().unwrap_or(text);
            // Markers already written are not keys: they hold no shape's characters run.
            let n = shape.find_iter(now).count();
            if n > 0 {
                out = Some(shape.replace_all(now, marker(name).as_str()).into_owned());
                *counts.entry((*name).to_owned()).or_default() += count(n);
            }
        }
        out
    }

    /// [`Self::redact`] in place.
    pub fn redact_in_place(&self, text: &mut String, counts: &mut Counts) {
        if let Some(clean) = self.redact(text, counts) {
            *text = clean;
        }
    }

    /// Every string of a JSON value (object keys included) redacted in place.
    pub fn redact_json(&self, value: &mut serde_json::Value, counts: &mut Counts) {
        match value {
            serde_json::Value::String(s) => self.redact_in_place(s, counts),
            serde_json::Value::Array(items) => {
                for item in items {
                    self.redact_json(item, counts);
                }
            }
            serde_json::Value::Object(map) => {
                let taken = std::mem::take(map);
                for (mut key, mut item) in taken {
                    self.redact_in_place(&mut key, counts);
                    self.redact_json(&mut item, counts);
                    map.insert(key, item);
                }
            }
            _ => {}
        }
    }
}

/// The counts as the event records them, by name.
pub fn redactions(counts: Counts) -> Vec<Redaction> {
    counts
        .into_iter()
        .map(|(name, count)| Redaction { name, count })
        .collect()
}

fn marker(name: &str) -> String {
    format!("[redacted:{name}]")
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Whether `name` matches `pattern`, where `*` stands for any characters; without case.
pub fn glob(pattern: &str, name: &str) -> bool {
    let pattern = pattern.to_ascii_uppercase();
    let name = name.to_ascii_uppercase();
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = rest.get(at + part.len()..).unwrap_or(""),
            None => return false,
        }
    }
    rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn redacted(r: &Redactor, text: &str) -> (String, Counts) {
        let mut counts = Counts::new();
        let out = r
            .redact(text, &mut counts)
            .unwrap_or_else(|| text.to_owned());
        (out, counts)
    }

    #[test]
    fn each_key_shape_is_redacted_by_its_name() {
        let r = Redactor::default();
        let cases = [
            ("openai-key", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
            ("openai-key", "sk-AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
            ("anthropic-key", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_x"),
            ("aws-access-key", "AKIAIOSFODNN7EXAMPLE"),
            ("github-token", "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
            ("github-token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop"),
            (
                "private-key",
                "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
            ),
        ];
        for (name, key) in cases {
            let (out, counts) = redacted(&r, &format!("error: auth with {key} failed"));
            assert_eq!(
                out,
                format!("error: auth with [redacted:{name}] failed"),
                "{key}"
            );
            assert_eq!(counts.get(name), Some(&1), "{key}");
        }
    }

    #[test]
    fn ordinary_text_is_left_alone() {
        let r = Redactor::default();
        for text in [
            "task-started sk-short",
            "AKIA is a prefix, AKIAshort",
            "ghp_tooShort",
            "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----",
            "the skeleton key risk-assessment",
        ] {
            assert_eq!(
                redacted(&r, text),
                (text.to_owned(), Counts::new()),
                "{text}"
            );
        }
    }

    #[test]
    fn values_are_replaced_whole_and_counted_by_name() {
        let r = Redactor::new([
            ("DB_PASSWORD".to_owned(), "hunter2-hunter2".to_owned()),
            ("SHORT_KEY".to_owned(), "1".to_owned()),
            (
                "LONG_TOKEN".to_owned(),
                "hunter2-hunter2-and-more".to_owned(),
            ),
        ]);
        let (out, counts) = redacted(&r, "a hunter2-hunter2-and-more b hunter2-hunter2 c 1");
        assert_eq!(out, "a [redacted:LONG_TOKEN] b [redacted:DB_PASSWORD] c 1");
        assert_eq!(counts.get("LONG_TOKEN"), Some(&1));
        assert_eq!(counts.get("DB_PASSWORD"), Some(&1));
        assert_eq!(counts.get("SHORT_KEY"), None);
    }

    #[test]
    fn json_strings_and_keys_are_redacted() {
        let r = Redactor::new([("API_KEY".to_owned(), "abcdefgh1234".to_owned())]);
        let mut v = serde_json::json!({"ok": true, "abcdefgh1234": ["x abcdefgh1234", 3]});
        let mut counts = Counts::new();
        r.redact_json(&mut v, &mut counts);
        assert_eq!(
            v,
            serde_json::json!({"ok": true, "[redacted:API_KEY]": ["x [redacted:API_KEY]", 3]})
        );
        assert_eq!(counts.get("API_KEY"), Some(&2));
    }

    #[test]
    fn env_names_match_the_patterns() {
        let pats = DEFAULT_ENV_PATTERNS;
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "aws_secret",
            "PGPASSWORD",
            "MY_PASSWORD_FILE",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ] {
            assert!(pats.iter().any(|p| glob(p, name)), "{name}");
        }
        for name in ["PATH", "HOME", "KEYBOARD", "TOKENS_USED", "SECRETARY"] {
            assert!(!pats.iter().any(|p| glob(p, name)), "{name}");
        }
        assert!(glob("EXACT", "exact"));
        assert!(!glob("EXACT", "EXACTLY"));
    }

    #[test]
    fn a_redact_file_names_its_values() {
        let listed =
            Redactor::parse_file("# ours\nSTRIPE_KEY=rk_live_abc=def\n\nbare value here\n");
        assert_eq!(
            listed,
            vec![
                ("STRIPE_KEY".to_owned(), "rk_live_abc=def".to_owned()),
                ("listed".to_owned(), "bare value here".to_owned())
            ]
        );
    }
}
