//! Re-evaluation after a destructive task: which tasks are destructive and which files a task touches.

use crate::spec::TaskSpec;
use std::collections::BTreeSet;

/// Verb stems that make a task destructive when its spec does not say (the destructive verbs:
/// extract, delete, remove, refactor, modify, split, create).
const DESTRUCTIVE_STEMS: [&str; 7] = [
    "extract", "delet", "remov", "refactor", "modif", "split", "creat",
];

/// File extensions recognised in descriptions even without a directory part.
const SOURCE_EXTENSIONS: [&str; 24] = [
    "py", "rs", "js", "ts", "tsx", "jsx", "go", "java", "kt", "c", "h", "cc", "cpp", "hpp", "rb",
    "md", "toml", "json", "yaml", "yml", "txt", "sh", "sql", "html",
];

/// Whether a task is destructive: its explicit flag, else a destructive verb in its description.
pub fn is_destructive(spec: &TaskSpec) -> bool {
    spec.destructive.unwrap_or_else(|| {
        spec.description
            .split(|c: char| !c.is_alphanumeric())
            .map(str::to_lowercase)
            .any(|w| DESTRUCTIVE_STEMS.iter().any(|stem| w.starts_with(stem)))
    })
}

/// Files a task touches: its explicit `files` plus paths found in its description.
pub fn touched_files(spec: &TaskSpec) -> BTreeSet<String> {
    let mut files: BTreeSet<String> = spec.files.iter().map(|f| normalise(f)).collect();
    files.extend(paths_in(&spec.description));
    files
}

/// Paths mentioned in free text: tokens with an extension and either a directory part or a
/// known source extension (`lib/analysts.py`, `src/main.rs`, `app.py`).
pub fn paths_in(text: &str) -> Vec<String> {
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                ',' | ';' | '(' | ')' | '`' | '"' | '\'' | '[' | ']' | '<' | '>'
            )
    })
    .map(|t| t.trim_end_matches(['.', ':', '!', '?']))
    .filter(|t| looks_like_path(t))
    .map(normalise)
    .collect()
}

fn looks_like_path(token: &str) -> bool {
    let Some((stem, ext)) = token.rsplit_once('.') else {
        return false;
    };
    let ext_ok = !ext.is_empty()
        && ext.len() <= 8
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic());
    let chars_ok = token
        .chars()
        .all(|c| c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-'));
    let stem_ok = stem.chars().any(|c| c.is_alphanumeric()) && !token.contains("://");
    let has_dir = stem.contains('/');
    let known_ext = SOURCE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str());
    ext_ok && chars_ok && stem_ok && (has_dir || known_ext)
}

fn normalise(path: &str) -> String {
    path.trim().trim_start_matches("./").to_owned()
}
