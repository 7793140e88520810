//! Where given secrets (and the well-known key shapes) sit in a run's history: every record's
//! bytes and the blobs its events point to (`runlog verify --secrets FILE`). For stores written
//! before redaction, or secrets redaction did not know: the log cannot be edited, so the answer
//! is to know where they are, and rotate them.

use runlog_core::codec::decode_event;
use runlog_replay::Result;
use runlog_store::EventLog;
use serde::Serialize;

/// One secret found.
#[derive(Debug, Clone, Serialize)]
pub struct Leak {
    /// The run.
    pub run: String,
    /// The record.
    pub seq: u64,
    /// Its event's name.
    pub event: &'static str,
    /// The secret's name (from the file, or the key shape's).
    pub secret: String,
    /// `record` (the event itself) or `blob` (an output, a patch or a model call's body it
    /// points to).
    pub place: &'static str,
}

/// What to look for: each secret's name and a matcher of its bytes.
#[derive(Debug)]
pub struct Wanted(Vec<(String, regex::bytes::Regex)>);

impl Wanted {
    /// The values of a secrets file (as `redact_file`) and the key shapes.
    pub fn new(values: Vec<(String, String)>) -> Self {
        let mut wanted: Vec<(String, regex::bytes::Regex)> = values
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .filter_map(|(name, v)| {
                regex::bytes::Regex::new(&regex::escape(&v))
                    .ok()
                    .map(|re| (name, re))
            })
            .collect();
        wanted.extend(runlog_core::redact::shapes().filter_map(|(name, re)| {
            regex::bytes::Regex::new(re.as_str())
                .ok()
                .map(|re| (name.to_owned(), re))
        }));
        Self(wanted)
    }

    fn found_in<'a>(&'a self, bytes: &'a [u8]) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(_, re)| re.is_match(bytes))
            .map(|(name, _)| name.as_str())
    }
}

/// Every place of `run` holding one of the wanted secrets.
pub fn scan(log: &dyn EventLog, run: &str, wanted: &Wanted) -> Result<Vec<Leak>> {
    let mut leaks = Vec::new();
    let mut blobs = Vec::new();
    log.scan(run, 1, u64::MAX, &mut |r| {
        let event = decode_event(r.body).ok();
        let name = event.as_ref().map_or("undecodable", |e| e.kind.name());
        for secret in wanted.found_in(r.body) {
            leaks.push(Leak {
                run: run.to_owned(),
                seq: r.seq,
                event: name,
                secret: secret.to_owned(),
                place: "record",
            });
        }
        // Every blob the event names: outputs and patches, and a model call's request,
        // answer and assembled message.
        for hash in event.map(|e| e.kind.blobs_named()).unwrap_or_default() {
            blobs.push((r.seq, name, hash));
        }
        Ok(true)
    })?;
    for (seq, event, hash) in blobs {
        let Some(bytes) = log.get_blob(&hash.0)? else {
            continue;
        };
        for secret in wanted.found_in(&bytes) {
            leaks.push(Leak {
                run: run.to_owned(),
                seq,
                event,
                secret: secret.to_owned(),
                place: "blob",
            });
        }
    }
    Ok(leaks)
}
