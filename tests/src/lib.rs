//! Cross-crate integration tests live in `tests/tests/`. The end-to-end tests of the `runlog`
//! binary live in `cli/tests/` (Cargo only builds a binary for its own package's tests).

pub mod modules;
pub mod source_rules;
