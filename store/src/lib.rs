//! The runlog event log. Filled in by the store issue; this crate only reserves its place for now.
