//! The byte encoding of events: bincode 2 (standard config) with a decode size limit.

use crate::event::Event;
use bincode::config::{self, Configuration, Limit};
use thiserror::Error;

/// Largest encoded event accepted. Without a limit, a few corrupt length bytes can make the
/// decoder try to allocate terabytes and abort the process.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

type Config = Configuration<config::LittleEndian, config::Varint, Limit<MAX_EVENT_BYTES>>;

fn config() -> Config {
    config::standard().with_limit::<MAX_EVENT_BYTES>()
}

/// An event's bytes could not be turned back into an event.
#[derive(Debug, Error)]
pub enum CodecError {
    /// The bytes are not a valid encoding of an event.
    #[error("cannot decode event: {0}")]
    Decode(bincode::error::DecodeError),
    /// The bytes decode, but some are left over.
    #[error("event decoded from {used} of {len} bytes: trailing garbage")]
    Trailing {
        /// Bytes consumed.
        used: usize,
        /// Bytes given.
        len: usize,
    },
    /// The event could not be encoded (a value nested too deeply).
    #[error("cannot encode event: {0}")]
    Encode(bincode::error::EncodeError),
    /// The event encodes to more bytes than an event may have.
    #[error("an event of {len} bytes is larger than the {} MiB an event may be", MAX_EVENT_BYTES >> 20)]
    TooLarge {
        /// Its size.
        len: usize,
    },
}

/// What bincode writes, appended to a buffer. bincode's own `encode_to_vec` encodes every
/// value twice, the first time only to size its buffer: for snapshots, whose encode took a
/// sixth of a first replay, that first pass was a third of it.
struct Append<'a>(&'a mut Vec<u8>);

impl bincode::enc::write::Writer for Append<'_> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> Result<(), bincode::error::EncodeError> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }
}

/// Bytes an event's buffer starts with: most events fit.
const EVENT_BUFFER: usize = 128;

/// Encodes an event into a fresh buffer.
pub fn encode_event(event: &Event) -> Result<Vec<u8>, CodecError> {
    let mut bytes = Vec::with_capacity(EVENT_BUFFER);
    bincode::encode_into_writer(event, Append(&mut bytes), config()).map_err(CodecError::Encode)?;
    // The decoder's limit, checked here: whatever encodes decodes back.
    if bytes.len() > MAX_EVENT_BYTES {
        return Err(CodecError::TooLarge { len: bytes.len() });
    }
    Ok(bytes)
}

/// Decodes exactly one event from `bytes`. Never panics, whatever the bytes.
///
/// Inlined into other crates' loops: called apart, each 192-byte event was copied out through
/// every layer's `Result`, a third of a replay's decoding thread.
#[inline]
pub fn decode_event(bytes: &[u8]) -> Result<Event, CodecError> {
    let (event, used) = bincode::decode_from_slice(bytes, config()).map_err(CodecError::Decode)?;
    if used != bytes.len() {
        return Err(CodecError::Trailing {
            used,
            len: bytes.len(),
        });
    }
    Ok(event)
}

/// Version of the `RunState` encoding and of the fold that produces it. Snapshots carry it;
/// bump it whenever `RunState` or `evolve` changes, and every old snapshot is ignored and
/// rebuilt instead of trusted.
pub const STATE_FORMAT: u32 = 8;

/// Largest encoded state accepted from a snapshot.
pub const MAX_STATE_BYTES: usize = 1 << 30;

type StateConfig = Configuration<config::LittleEndian, config::Varint, Limit<MAX_STATE_BYTES>>;

fn state_config() -> StateConfig {
    config::standard().with_limit::<MAX_STATE_BYTES>()
}

/// Encodes a run state (for snapshots).
pub fn encode_state(state: &crate::state::RunState) -> Result<Vec<u8>, CodecError> {
    let mut bytes = Vec::new();
    encode_state_into(state, &mut bytes)?;
    Ok(bytes)
}

/// Encodes a run state at the end of `out` (a snapshot's header before it, say), in one pass.
pub fn encode_state_into(
    state: &crate::state::RunState,
    out: &mut Vec<u8>,
) -> Result<(), CodecError> {
    bincode::encode_into_writer(state, Append(out), state_config()).map_err(CodecError::Encode)
}

/// Decodes a run state; never panics, whatever the bytes.
pub fn decode_state(bytes: &[u8]) -> Result<crate::state::RunState, CodecError> {
    let (state, used) =
        bincode::decode_from_slice(bytes, state_config()).map_err(CodecError::Decode)?;
    if used != bytes.len() {
        return Err(CodecError::Trailing {
            used,
            len: bytes.len(),
        });
    }
    Ok(state)
}
