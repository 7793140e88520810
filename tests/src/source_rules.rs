//! Rules read from the source files themselves: how long a file may be (its test module
//! aside), and that an error type never says its cause twice (in its message and as the
//! `source` a chain printer prints after it).

use std::path::{Path, PathBuf};

/// Every `.rs` file under `src`, with its text.
pub fn sources(src: &Path) -> std::io::Result<Vec<(PathBuf, String)>> {
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path)?;
                out.push((path, text));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A file's lines before its test module (`#[cfg(test)]` at the start of a line).
pub fn lines_of_code(text: &str) -> usize {
    crate::modules::before_tests(text).lines().count()
}

/// The sizes a file may have, as `ARCHITECTURE.md` names them on its line starting
/// `File sizes:`: `(directory, lines)` pairs (`cli/runner 600`), and the limit elsewhere.
pub fn size_limits(architecture: &str) -> Option<(Vec<(String, usize)>, usize)> {
    let line = architecture
        .lines()
        .find_map(|l| l.strip_prefix("File sizes:"))?;
    let mut within = Vec::new();
    let mut elsewhere = None;
    for part in line.split(';') {
        let words: Vec<&str> = part.split_whitespace().collect();
        let number = words.iter().find_map(|w| {
            w.trim_matches(|c: char| !c.is_ascii_digit())
                .replace(',', "")
                .parse()
                .ok()
        });
        let place = words
            .iter()
            .find(|w| w.starts_with('`'))
            .map(|w| w.trim_matches(|c| c == '`' || c == ',').to_owned());
        match (place, number) {
            (Some(p), Some(n)) => within.push((p, n)),
            (None, Some(n)) => elsewhere = Some(n),
            _ => {}
        }
    }
    Some((within, elsewhere?))
}

/// Each `#[error("...")]` whose message interpolates the field that is also its source
/// (`#[source]`, `#[from]`, or a field named `source`): the printer would say that cause twice.
/// `Variant: message` for each.
pub fn doubled_causes(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("#[error(\"") {
        rest = rest.get(at + 9..).unwrap_or("");
        let Some(message) = string_body(rest) else {
            continue;
        };
        let after = rest.get(message.len()..).unwrap_or("");
        let Some(item) = after.find(']').and_then(|i| after.get(i + 1..)) else {
            continue;
        };
        let item = skip_doc_and_attrs(item);
        let name: String = item
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let body = item.get(name.len()..).unwrap_or("").trim_start();
        let sources = source_fields(body);
        if sources
            .iter()
            .any(|f| message.contains(&format!("{{{f}}}")) || message.contains(&format!("{{{f}:")))
        {
            found.push(format!("{name}: {message}"));
        }
    }
    found
}

/// The text of a string literal up to its closing quote (escapes kept).
fn string_body(text: &str) -> Option<&str> {
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return text.get(..i),
            _ => escaped = false,
        }
    }
    None
}

fn skip_doc_and_attrs(mut text: &str) -> &str {
    loop {
        text = text.trim_start();
        if text.starts_with("///") || text.starts_with("//") {
            text = text.find('\n').and_then(|i| text.get(i..)).unwrap_or("");
        } else if text.starts_with("#[") {
            text = text.find(']').and_then(|i| text.get(i + 1..)).unwrap_or("");
        } else {
            return text;
        }
    }
}

/// The names (or tuple indexes) of a variant's source fields, from its body `( .. )` or `{ .. }`.
fn source_fields(body: &str) -> Vec<String> {
    let (open, close) = match body.chars().next() {
        Some('(') => ('(', ')'),
        Some('{') => ('{', '}'),
        _ => return Vec::new(),
    };
    let mut depth = 0usize;
    let mut end = body.len();
    for (i, c) in body.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth = depth.saturating_sub(1);
            if depth == 0 {
                end = i;
                break;
            }
        }
    }
    let inner = body.get(1..end).unwrap_or("");
    let mut fields = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in inner.char_indices() {
        match c {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                fields.push(inner.get(start..i).unwrap_or(""));
                start = i + 1;
            }
            _ => {}
        }
    }
    fields.push(inner.get(start..).unwrap_or(""));
    fields
        .into_iter()
        .filter(|f| !f.trim().is_empty())
        .enumerate()
        .filter_map(|(i, field)| {
            let marked = field.contains("#[source]") || field.contains("#[from]");
            let bare = skip_doc_and_attrs(field).trim_start_matches("pub ").trim();
            match open {
                '(' => marked.then(|| i.to_string()),
                _ => {
                    let name = bare.split(':').next().unwrap_or("").trim().to_owned();
                    (marked || name == "source").then_some(name)
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_saying_its_source_is_found_in_every_form() {
        let text = r#"
            #[error("cannot read {path}: {source}")]
            Read { path: PathBuf, source: io::Error },
            #[error("git: {0}")]
            Git(#[from] GitError),
            #[error("decode: {0:?}")]
            Decode(#[source] DecodeError),
            /// A cause in words only.
            #[error("lease: {0}")]
            Lease(StoreError),
            /// A cause left to the chain.
            #[error("cannot open")]
            Open {
                /// The OS error.
                #[source]
                cause: io::Error,
            },
            #[error(transparent)]
            Other(#[from] X),
        "#;
        let found = doubled_causes(text);
        assert_eq!(
            found,
            [
                "Read: cannot read {path}: {source}",
                "Git: git: {0}",
                "Decode: decode: {0:?}"
            ]
        );
    }

    #[test]
    fn size_limits_are_read_from_their_line() {
        let doc = "# A\nFile sizes: at most 600 lines in `cli/runner`; 1,000 elsewhere (test modules aside).\n";
        assert_eq!(
            size_limits(doc),
            Some((vec![("cli/runner".to_owned(), 600)], 1000))
        );
        assert_eq!(size_limits("no such line"), None);
        assert_eq!(lines_of_code("a\nb\n#[cfg(test)]\nmod tests {}\n"), 2);
    }
}
