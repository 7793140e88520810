//! Identifiers and the two scalar types every event carries: time and hashes.

use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            /// The id as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{:?}", self.0)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_owned())
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(s)
            }
        }
    };
}

/// The longest id, in bytes.
pub const MAX_NAME: usize = 128;

/// What an id may be, said once for every hint.
pub const NAME_RULE: &str =
    "1 to 128 ASCII letters, digits, '.', '_' or '-', not starting with '.' or '-'";

/// Why `id` is not a name, or `None` when it is one: [`NAME_RULE`]. Ids become file names
/// (worktrees, feedback files), URL segments and command-line arguments, so where an id enters
/// (a workflow, `--run-id`, `fork --as`, `emit`, the API) nothing else is accepted: no `/`, no
/// `..`, no NUL, nothing a terminal would interpret. Logs recorded before the rule still replay:
/// `decide` checks, `evolve` does not.
pub fn not_a_name(id: &str) -> Option<&'static str> {
    let first = id.bytes().next();
    if first.is_none() {
        Some("it is empty")
    } else if id.len() > MAX_NAME {
        Some("it is longer than 128 bytes")
    } else if matches!(first, Some(b'.' | b'-')) {
        Some("it starts with '.' or '-'")
    } else if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    {
        Some("it has a character other than letters, digits, '.', '_' and '-'")
    } else {
        None
    }
}

string_id!(
    /// A run: one execution of a workflow, one stream of events.
    RunId
);
string_id!(
    /// A task, stable across replans, rollbacks and forks (diffs match tasks by it).
    TaskId
);
string_id!(
    /// A supervisor stage; tasks default to a stage named after themselves.
    StageId
);
string_id!(
    /// An agent identity; a rescue must reuse the identity of the attempt it rescues.
    AgentId
);

/// Milliseconds since the Unix epoch. Time only enters the core inside commands and events.
#[derive(
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Encode,
    Decode,
    Serialize,
    Deserialize,
)]
#[serde(transparent)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// Milliseconds elapsed from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: Timestamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}

/// A 32-byte blake3 digest (plan hashes, log chain heads, blob references).
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode)]
pub struct Hash(pub [u8; 32]);

impl Hash {
    /// Hashes `bytes` with blake3.
    pub fn of(bytes: &[u8]) -> Self {
        Self(*blake3::hash(bytes).as_bytes())
    }

    /// Lower-case hex, 64 characters.
    pub fn to_hex(&self) -> String {
        blake3::Hash::from_bytes(self.0).to_hex().to_string()
    }

    /// Parses 64 hex characters; `None` for anything else.
    pub fn from_hex(s: &str) -> Option<Self> {
        blake3::Hash::from_hex(s).ok().map(|h| Self(*h.as_bytes()))
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.to_hex();
        write!(f, "{}…", hex.get(..12).unwrap_or(&hex))
    }
}

impl Serialize for Hash {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Hash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Hash::from_hex(&s).ok_or_else(|| serde::de::Error::custom("expected 64 hex characters"))
    }
}

#[cfg(test)]
mod tests {
    use super::not_a_name;

    #[test]
    fn names_are_plain_file_names() {
        for good in ["a", "plan", "t-1", "phase_2.buffer", "A9", &"x".repeat(128)] {
            assert_eq!(not_a_name(good), None, "{good}");
        }
        let long = "x".repeat(129);
        for bad in [
            "",
            ".",
            "..",
            "../x",
            "a/b",
            "/tmp/x",
            ".hidden",
            "-flag",
            "a\0b",
            "a b",
            "tâche",
            "a\u{1b}[31m",
            "a:b",
            &long,
        ] {
            assert!(not_a_name(bad).is_some(), "{bad:?}");
        }
    }
}
