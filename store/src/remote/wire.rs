//! What processes sharing a store say to each other over its socket: one request, one response,
//! each a length-prefixed bincode message. Not an on-disk format: both ends are the same build
//! (the handshake refuses any other, naming its version).

use crate::error::{Damage, DamageKind, StoreError};
use crate::types::{Durability, Head, Record, RunMeta, VerifyReport};
use bincode::{Decode, Encode};
use std::io::{Read, Write};

/// Bumped whenever a message below changes.
pub const PROTOCOL: u32 = 2;

/// The largest message either side accepts: a whole append of maximum records fits.
pub const MAX_MESSAGE: usize = 64 * 1024 * 1024;

/// Records a scan answers with at most, per message (the client asks again for the rest).
pub const SCAN_BATCH: usize = 2048;

/// What a client asks.
#[derive(Debug, Encode, Decode)]
pub enum Request {
    /// First message: the client's protocol and program version.
    Hello { protocol: u32, version: String },
    /// [`crate::EventLog::append`].
    Append {
        run: String,
        expected: Option<u64>,
        bodies: Vec<Vec<u8>>,
    },
    /// [`crate::EventLog::head`].
    Head { run: String },
    /// [`crate::EventLog::runs`].
    Runs,
    /// Records `from..=to`, at most [`SCAN_BATCH`] of them.
    Scan { run: String, from: u64, to: u64 },
    /// Turns the connection into a stream of appended records.
    Subscribe { run: Option<String> },
    /// [`crate::EventLog::verify`].
    Verify { run: String },
    /// [`crate::EventLog::sync`].
    Sync,
    /// [`crate::EventLog::put_blob`].
    PutBlob { bytes: Vec<u8> },
    /// [`crate::EventLog::get_blob`].
    GetBlob { hash: [u8; 32] },
    /// [`crate::EventLog::cache_put`].
    CachePut { key: Vec<u8>, value: Vec<u8> },
    /// [`crate::EventLog::cache_get`].
    CacheGet { key: Vec<u8> },
    /// [`crate::EventLog::cache_keys`].
    CacheKeys { prefix: Vec<u8> },
    /// [`crate::EventLog::size_bytes`].
    SizeBytes,
    /// [`crate::EventLog::durability`].
    Durability,
    /// [`crate::EventLog::create`], the chain by its number.
    Create {
        run: String,
        chain: u32,
        bodies: Vec<Vec<u8>>,
    },
    /// [`crate::EventLog::chain`].
    Chain { run: String },
    /// Records `from..=to` without their chain hashes ([`crate::EventLog::scan_bodies`]), at
    /// most [`SCAN_BATCH`] of them.
    ScanBodies { run: String, from: u64, to: u64 },
}

/// What the owner answers.
#[derive(Debug, Encode, Decode)]
pub enum Response {
    /// The handshake's answer: who owns the store.
    Hello {
        protocol: u32,
        version: String,
        owner: String,
    },
    /// A head (after an append, or asked for).
    Head(Option<WireHead>),
    /// Every run.
    Runs(Vec<WireRunMeta>),
    /// Records of a scan, or one appended record of a subscription.
    Records(Vec<WireRecord>),
    /// A verification.
    Verify(WireVerify),
    /// Done, nothing to say.
    Done,
    /// A blob or cache entry.
    Bytes(Option<Vec<u8>>),
    /// A blob's hash.
    Hash([u8; 32]),
    /// Cache keys.
    Keys(Vec<Vec<u8>>),
    /// A size.
    Size(u64),
    /// The owner's durability: `None` durable, else the buffered interval in ms.
    Durability(Option<u64>),
    /// The request failed.
    Error(WireError),
    /// A run's chain by its number, `None` if it has no records.
    Chain(Option<u32>),
    /// Records of a scan without their chain hashes: (seq, body).
    Bodies(Vec<(u64, Vec<u8>)>),
}

/// A store error as it crosses the socket: the kinds a caller acts on keep their fields.
#[derive(Debug, Encode, Decode)]
pub enum WireError {
    /// [`StoreError::Conflict`].
    Conflict {
        run: String,
        expected: u64,
        actual: u64,
    },
    /// [`StoreError::Damaged`].
    Damaged {
        run: String,
        seq: u64,
        torn: bool,
        reason: String,
    },
    /// [`StoreError::Invalid`].
    Invalid(String),
    /// Anything else, as its message.
    Other(String),
}

impl From<&StoreError> for WireError {
    fn from(e: &StoreError) -> Self {
        match e {
            StoreError::Conflict {
                run,
                expected,
                actual,
            } => WireError::Conflict {
                run: run.clone(),
                expected: *expected,
                actual: *actual,
            },
            StoreError::Damaged { run, damage } => WireError::Damaged {
                run: run.clone(),
                seq: damage.seq,
                torn: damage.kind == DamageKind::TornTail,
                reason: damage.reason.clone(),
            },
            StoreError::Invalid(why) => WireError::Invalid(why.clone()),
            other => WireError::Other(other.to_string()),
        }
    }
}

impl From<WireError> for StoreError {
    fn from(e: WireError) -> Self {
        match e {
            WireError::Conflict {
                run,
                expected,
                actual,
            } => StoreError::Conflict {
                run,
                expected,
                actual,
            },
            WireError::Damaged {
                run,
                seq,
                torn,
                reason,
            } => StoreError::Damaged {
                run,
                damage: Damage {
                    seq,
                    kind: if torn {
                        DamageKind::TornTail
                    } else {
                        DamageKind::Corrupt
                    },
                    reason,
                },
            },
            WireError::Invalid(why) => StoreError::Invalid(why),
            WireError::Other(message) => StoreError::Owner { message },
        }
    }
}

/// [`Head`] on the wire.
#[derive(Debug, Encode, Decode)]
pub struct WireHead {
    seq: u64,
    hash: [u8; 32],
}

impl From<Head> for WireHead {
    fn from(h: Head) -> Self {
        Self {
            seq: h.seq,
            hash: h.hash,
        }
    }
}

impl From<WireHead> for Head {
    fn from(h: WireHead) -> Self {
        Self {
            seq: h.seq,
            hash: h.hash,
        }
    }
}

/// [`Record`] on the wire.
#[derive(Debug, Encode, Decode)]
pub struct WireRecord {
    run: String,
    seq: u64,
    hash: [u8; 32],
    body: Vec<u8>,
}

impl From<Record> for WireRecord {
    fn from(r: Record) -> Self {
        Self {
            run: r.run,
            seq: r.seq,
            hash: r.hash,
            body: r.body,
        }
    }
}

impl From<WireRecord> for Record {
    fn from(r: WireRecord) -> Self {
        Self {
            run: r.run,
            seq: r.seq,
            hash: r.hash,
            body: r.body,
        }
    }
}

/// [`RunMeta`] on the wire.
#[derive(Debug, Encode, Decode)]
pub struct WireRunMeta {
    run: String,
    created_ms: u64,
    head: Option<WireHead>,
}

impl From<RunMeta> for WireRunMeta {
    fn from(m: RunMeta) -> Self {
        Self {
            run: m.run,
            created_ms: m.created_ms,
            head: m.head.map(WireHead::from),
        }
    }
}

impl From<WireRunMeta> for RunMeta {
    fn from(m: WireRunMeta) -> Self {
        Self {
            run: m.run,
            created_ms: m.created_ms,
            head: m.head.map(Head::from),
        }
    }
}

/// [`VerifyReport`] on the wire.
#[derive(Debug, Encode, Decode)]
pub struct WireVerify {
    run: String,
    verified: u64,
    head: Option<WireHead>,
    damage: Option<WireError>,
}

impl From<VerifyReport> for WireVerify {
    fn from(v: VerifyReport) -> Self {
        let run = v.run.clone();
        Self {
            verified: v.verified,
            head: v.head.map(WireHead::from),
            damage: v.damage.map(|damage| {
                WireError::from(&StoreError::Damaged {
                    run: run.clone(),
                    damage,
                })
            }),
            run,
        }
    }
}

impl From<WireVerify> for VerifyReport {
    fn from(v: WireVerify) -> Self {
        Self {
            run: v.run,
            verified: v.verified,
            head: v.head.map(Head::from),
            damage: v.damage.and_then(|d| match StoreError::from(d) {
                StoreError::Damaged { damage, .. } => Some(damage),
                _ => None,
            }),
        }
    }
}

/// The durability as the wire says it.
pub fn durability_to_wire(d: Durability) -> Option<u64> {
    match d {
        Durability::Durable => None,
        Durability::Buffered { interval } => {
            Some(u64::try_from(interval.as_millis()).unwrap_or(u64::MAX))
        }
    }
}

/// The durability the wire said.
pub fn durability_from_wire(d: Option<u64>) -> Durability {
    match d {
        None => Durability::Durable,
        Some(ms) => Durability::Buffered {
            interval: std::time::Duration::from_millis(ms),
        },
    }
}

fn config() -> impl bincode::config::Config {
    bincode::config::standard().with_limit::<MAX_MESSAGE>()
}

/// Writes one message.
pub fn send<T: Encode>(to: &mut impl Write, message: &T) -> std::io::Result<()> {
    let bytes = bincode::encode_to_vec(message, config())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    let len = u32::try_from(bytes.len())
        .ok()
        .filter(|&n| n as usize <= MAX_MESSAGE)
        .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidData, "message too large"))?;
    to.write_all(&len.to_le_bytes())?;
    to.write_all(&bytes)?;
    to.flush()
}

/// Reads one message; a length past [`MAX_MESSAGE`] or bytes that do not decode are an error.
pub fn receive<T: Decode<()>>(from: &mut impl Read) -> std::io::Result<T> {
    let mut len = [0u8; 4];
    from.read_exact(&mut len)?;
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_MESSAGE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a message of {len} bytes"),
        ));
    }
    let mut bytes = vec![0u8; len];
    from.read_exact(&mut bytes)?;
    let (message, used) = bincode::decode_from_slice(&bytes, config())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    if used != len {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "trailing bytes in a message",
        ));
    }
    Ok(message)
}
