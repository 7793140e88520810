//! Export a run to JSON lines and import it back, to the same chain hash.
//!
//! ```text
//! {"runlog_export":2,"run":"r","events":N,"head_seq":N,"head_hash":"…"}
//! {"seq":1,"hash":"…","event":{"at":…,"kind":{"type":"run-started",…}}}
//! …
//! {"blob":"…","base64":"…"}
//! ```
//!
//! Import re-encodes every event exactly as the store holds it and recomputes the chain, so a
//! line that was edited is caught, and an import under the same run id reproduces the head
//! hash. The chain starts from the run id: an import under another id gets another chain.
//! The format's number is the run's chain's: 1 for a run of the per-record chain, 2 for the
//! blocked chain (see `runlog_store::blocks`); an import keeps the run on the chain it had.
//!
//! After the events come the blobs they name (a model call's request and answer, an output or
//! a patch too large for an event), one a line, so a run imported elsewhere keeps them; each is
//! checked against its hash. A run that names none exports as it always did.

use crate::error::{ReplayError, Result};
use crate::events;
use runlog_core::codec::encode_event;
use runlog_core::{Event, Hash};
use runlog_store::blocks::Linker;
use runlog_store::{Chain, EventLog};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// The first line of an export.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// Format version.
    pub runlog_export: u32,
    /// The run.
    pub run: String,
    /// Events that follow.
    pub events: u64,
    /// The head seq.
    pub head_seq: u64,
    /// The head chain hash.
    pub head_hash: String,
}

#[derive(Debug, Serialize, Deserialize)]
struct Line {
    seq: u64,
    hash: String,
    event: Event,
}

/// A blob the run's events name: its hash (hex) and its bytes.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct BlobLine {
    blob: String,
    base64: String,
}

/// An export's content: the header, the events' bodies, and the blobs they name.
struct Read {
    header: Header,
    bodies: Vec<Vec<u8>>,
    blobs: Vec<Vec<u8>>,
}

/// Writes a run as JSON lines; returns the header written.
pub fn export(log: &dyn EventLog, run: &str, out: &mut dyn Write) -> Result<Header> {
    let head = events::head(log, run)?;
    let chain = log.chain(run)?.unwrap_or(Chain::Blocked);
    let header = Header {
        runlog_export: chain.number(),
        run: run.into(),
        events: head.seq,
        head_seq: head.seq,
        head_hash: Hash(head.hash).to_hex(),
    };
    let io = |source: std::io::Error| ReplayError::ExportWrite {
        run: run.to_owned(),
        cause: source,
    };
    serde_json::to_writer(&mut *out, &header).map_err(|e| io(e.into()))?;
    out.write_all(b"\n").map_err(io)?;
    let mut failed = None;
    // Each blob once, in the order the events first name it.
    let mut named: Vec<Hash> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    events::for_each_hashed(log, run, 1, head.seq, &mut |seq, hash, event| {
        named.extend(
            event
                .kind
                .blobs_named()
                .into_iter()
                .filter(|b| seen.insert(b.0)),
        );
        let line = Line {
            seq,
            hash: Hash(*hash).to_hex(),
            event,
        };
        let written = serde_json::to_writer(&mut *out, &line)
            .map_err(std::io::Error::from)
            .and_then(|_| out.write_all(b"\n"));
        if let Err(e) = written {
            failed = Some(io(e));
            return Ok(false);
        }
        Ok(true)
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    for hash in named {
        // A blob the store no longer has (lost to a damaged disk) is left out: the events
        // still say it was there.
        let Some(bytes) = log.get_blob(&hash.0)? else {
            continue;
        };
        let line = BlobLine {
            blob: hash.to_hex(),
            base64: base64::Engine::encode(&base64::engine::general_purpose::STANDARD, bytes),
        };
        serde_json::to_writer(&mut *out, &line).map_err(|e| io(e.into()))?;
        out.write_all(b"\n").map_err(io)?;
    }
    Ok(header)
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Imported {
    /// The run written.
    pub run: String,
    /// Events written.
    pub events: u64,
    /// Its head hash.
    pub head_hash: String,
    /// Whether it equals the export's head hash (always under the same run id).
    pub same_head_hash: bool,
}

/// The digest of an export's history, once every line checks out against the chain (what
/// `runlog digest --export` compares with the store or a forgotten run's tombstone).
pub fn digest_of(input: &mut dyn BufRead) -> Result<crate::digest::Digest> {
    let Read { header, .. } = read(input)?;
    Ok(crate::digest::Digest {
        run: header.run,
        head_seq: header.head_seq,
        head_hash: header.head_hash,
    })
}

/// Reads an export and appends it as `as_run` (default: the exported run id), which must not
/// exist. Nothing is written unless the whole file checks out.
pub fn import(
    log: &dyn EventLog,
    input: &mut dyn BufRead,
    as_run: Option<&str>,
) -> Result<Imported> {
    let Read {
        header,
        bodies,
        blobs,
    } = read(input)?;
    let chain = chain_of(&header).unwrap_or(Chain::Blocked);
    let run = as_run.unwrap_or(&header.run).to_owned();
    runlog_core::check_name("run", &run)?;
    if log.head(&run)?.is_some() {
        return Err(ReplayError::RunExists { run });
    }
    // The blobs first: an event is never in the store before what it names.
    for blob in &blobs {
        log.put_blob(blob)?;
    }
    let count = bodies.len() as u64;
    let mut head = 0;
    let mut last = None;
    let mut rest = bodies;
    while !rest.is_empty() {
        let tail = rest.split_off(rest.len().min(10_000));
        let part = std::mem::replace(&mut rest, tail);
        let h = match last {
            None => log.create(&run, chain, part)?,
            Some(_) => log.append(&run, Some(head), part)?,
        };
        head = h.seq;
        last = Some(h);
    }
    let head_hash = last.map(|h| Hash(h.hash).to_hex()).unwrap_or_default();
    Ok(Imported {
        run,
        events: count,
        same_head_hash: head_hash == header.head_hash,
        head_hash,
    })
}

/// An export's header, its events' bodies, each line checked against the chain, and its
/// blobs, each checked against its hash.
fn read(input: &mut dyn BufRead) -> Result<Read> {
    let bad = |line: usize, reason: String| ReplayError::Import { line, reason };
    let mut lines = input.lines().enumerate();
    let header: Header = match lines.next() {
        Some((_, Ok(text))) => serde_json::from_str(&text)
            .map_err(|e| bad(1, format!("not a runlog export header: {e}")))?,
        Some((_, Err(e))) => return Err(bad(1, e.to_string())),
        None => return Err(bad(1, "the file is empty".into())),
    };
    let Some(chain) = chain_of(&header) else {
        return Err(bad(
            1,
            format!(
                "export format {} is not supported (this runlog reads 1 and 2)",
                header.runlog_export
            ),
        ));
    };
    let mut linker = Linker::genesis(chain, &header.run);
    let mut bodies = Vec::new();
    let mut blobs = Vec::new();
    for (i, text) in lines {
        let n = i + 1;
        let text = text.map_err(|e| bad(n, e.to_string()))?;
        if text.trim().is_empty() {
            continue;
        }
        if let Ok(blob) = serde_json::from_str::<BlobLine>(&text) {
            blobs.push(blob_of(&blob).map_err(|reason| bad(n, reason))?);
            continue;
        }
        let line: Line =
            serde_json::from_str(&text).map_err(|e| bad(n, format!("not an event line: {e}")))?;
        let expected = bodies.len() as u64 + 1;
        if line.seq != expected {
            return Err(bad(
                n,
                format!("seq {} where {expected} was expected", line.seq),
            ));
        }
        let body = encode_event(&line.event).map_err(|e| bad(n, e.to_string()))?;
        let hash = linker.push(&body);
        if Hash(hash).to_hex() != line.hash {
            return Err(bad(
                n,
                format!(
                    "seq {} does not match its recorded hash: the export was changed",
                    line.seq
                ),
            ));
        }
        bodies.push(body);
    }
    if bodies.len() as u64 != header.events || Hash(linker.hash()).to_hex() != header.head_hash {
        return Err(bad(
            1,
            format!(
                "the header promises {} events ending in {}, the file has {}",
                header.events,
                header.head_hash,
                bodies.len()
            ),
        ));
    }
    Ok(Read {
        header,
        bodies,
        blobs,
    })
}

/// A blob line's bytes, once they match its hash.
fn blob_of(line: &BlobLine) -> std::result::Result<Vec<u8>, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&line.base64)
        .map_err(|e| format!("blob {} is not base64: {e}", line.blob))?;
    if Hash(*blake3::hash(&bytes).as_bytes()).to_hex() != line.blob {
        return Err(format!(
            "blob {} does not match its hash: the export was changed",
            line.blob
        ));
    }
    Ok(bytes)
}

/// The chain an export's lines are linked by: its format's number.
fn chain_of(header: &Header) -> Option<Chain> {
    Chain::from_number(header.runlog_export)
}
