//! Replay of runlog runs. Filled in by the replay issue; this crate only reserves its place for now.
