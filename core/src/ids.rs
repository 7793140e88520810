//! Identifiers and the two scalar types every event carries: time and hashes.

use bincode::de::read::Reader;
use bincode::de::Decoder;
use bincode::error::DecodeError;
use bincode::{Decode, Encode};
use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Serialize, Deserialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl<Context> Decode<Context> for $name {
            fn decode<D: Decoder<Context = Context>>(decoder: &mut D) -> Result<Self, DecodeError> {
                decode_string(decoder).map(Self)
            }
        }
        bincode::impl_borrow_decode!($name);

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

/// Decodes a `String` as bincode encodes one, copying its bytes straight out of the input
/// when the input is a slice. Ids are most of a snapshot's and an event's strings, and
/// bincode's own `String` decode zero-fills a buffer before copying into it.
fn decode_string<D: Decoder>(decoder: &mut D) -> Result<String, DecodeError> {
    let len = u64::decode(decoder)?;
    let len = usize::try_from(len).map_err(|_| DecodeError::OutsideUsizeRange(len))?;
    decoder.claim_container_read::<u8>(len)?;
    let Some(bytes) = decoder.reader().peek_read(len) else {
        let mut bytes = vec![0; len];
        decoder.reader().read(&mut bytes)?;
        return String::from_utf8(bytes).map_err(|e| DecodeError::Utf8 {
            inner: e.utf8_error(),
        });
    };
    let s = std::str::from_utf8(bytes)
        .map_err(|inner| DecodeError::Utf8 { inner })?
        .to_owned();
    decoder.reader().consume(len);
    Ok(s)
}

/// A hash map keyed by ids. The fold looks a task or stage up for nearly every event, and a
/// snapshot's decode inserts every task: foldhash hashes a short id several times faster than
/// the standard SipHash, and is still seeded at random per process.
pub type IdMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

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
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS), ts(type = "string"))]
pub struct Hash(pub [u8; 32]);

/// Written as 64 hex digits.
#[cfg(feature = "ts")]
impl schemars::JsonSchema for Hash {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Hash".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "pattern": "^[0-9a-f]{64}$"})
    }
}

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
    use super::{not_a_name, TaskId};
    use bincode::config;
    use bincode::error::DecodeError;

    #[test]
    fn an_id_decodes_alike_from_a_slice_and_from_a_stream() {
        let cfg = config::standard();
        for id in ["t-1", "", &"x".repeat(300)] {
            let bytes = bincode::encode_to_vec(TaskId::from(id), cfg).unwrap();
            let (from_slice, used): (TaskId, usize) =
                bincode::decode_from_slice(&bytes, cfg).unwrap();
            let from_stream: TaskId = bincode::decode_from_std_read(&mut &bytes[..], cfg).unwrap();
            assert_eq!((from_slice.as_str(), used), (id, bytes.len()));
            assert_eq!(from_stream, from_slice);
        }
    }

    #[test]
    fn an_id_that_is_not_utf8_cut_short_or_over_the_limit_is_an_error() {
        let cfg = config::standard();
        let decode = |bytes: &[u8]| bincode::decode_from_slice::<TaskId, _>(bytes, cfg);
        assert!(matches!(
            decode(&[2, 0xff, 0xfe]),
            Err(DecodeError::Utf8 { .. })
        ));
        assert!(matches!(
            decode(&[10, b'a']),
            Err(DecodeError::UnexpectedEnd { .. })
        ));
        let limited = cfg.with_limit::<4>();
        assert!(matches!(
            bincode::decode_from_slice::<TaskId, _>(
                &[8, b'a', b'b', b'c', b'd', b'e', b'f', b'g', b'h'],
                limited
            ),
            Err(DecodeError::LimitExceeded)
        ));
    }

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
