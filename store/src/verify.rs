//! Verification: walk every frame of a run from the genesis hash, checking framing, seq
//! continuity, each record's checksum and the chain across frames.

use crate::chain::{check_remembered, ChainWalker, WalkError};
use crate::error::{DamageKind, Result, StoreError};
use crate::types::{Head, VerifyReport};
use crate::writer::Shared;

pub(crate) fn verify(shared: &Shared, run: &str) -> Result<VerifyReport> {
    let backend = &*shared.backend;
    let mut report = VerifyReport {
        run: run.to_owned(),
        verified: 0,
        head: None,
        damage: None,
    };
    // Taken before the walk, for the reason `chain::head_from_backend` gives.
    let remembered = backend.remembered(run);
    let Some(slot) = backend.run_slot(run)? else {
        return Ok(report);
    };
    let last_first = backend
        .frame_at_or_before(slot.num, u64::MAX)?
        .map(|(first, _)| first);
    let mut walker = ChainWalker::new(run, 1);
    let mut damage = None;
    backend.scan_frames(slot.num, 0, u64::MAX, &mut |first, bytes| {
        match walker.frame(backend, first, bytes, false, &mut |_| Ok(true)) {
            Ok(_) => Ok(true),
            Err(WalkError::Damage(mut d)) => {
                // Only the very end of the log can be torn; anywhere else it is corruption.
                if d.kind == DamageKind::TornTail && Some(first) != last_first {
                    d.kind = DamageKind::Corrupt;
                }
                damage = Some(d);
                Ok(false)
            }
            Err(WalkError::Reader(e)) => Err(e),
        }
    })?;
    report.verified = walker.next_seq() - 1;
    if let Some(d) = &damage {
        report.verified = report.verified.min(d.seq.saturating_sub(1));
    }
    if damage.is_none() {
        let seq = walker.next_seq() - 1;
        let found = walker.hash().filter(|_| seq > 0).map(|hash| (seq, hash));
        if let Err(StoreError::Damaged { damage: short, .. }) =
            check_remembered(run, remembered, found)
        {
            damage = Some(short);
        }
    }
    report.damage = damage;
    report.head = shared
        .load_head(run)
        .ok()
        .flatten()
        .and_then(|h| h.head())
        .or_else(|| {
            let seq = walker.next_seq() - 1;
            walker
                .hash()
                .filter(|_| seq > 0)
                .map(|hash| Head { seq, hash })
        });
    Ok(report)
}
