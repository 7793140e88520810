//! What tests of a store's files share (behind the `testkit` feature).

use std::path::{Path, PathBuf};

/// Every file under `dir` that holds `needle`, archive segments read decoded too: what a test
/// that a forgotten run left no byte behind looks through.
pub fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let decoded = crate::archive::decompressed(&bytes);
                let holds = |b: &[u8]| b.windows(needle.len()).any(|w| w == needle);
                if holds(&bytes) || holds(&decoded) {
                    found.push(path);
                }
            }
        }
    }
    found
}
