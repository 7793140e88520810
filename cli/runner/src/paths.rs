//! The one way a path is made from an id (a run, a task, a worktree): [`within`]. Ids are
//! names ([`runlog_core::NAME_RULE`]) wherever they enter, but logs recorded before that rule
//! may hold any string, and `resume` of such a run still needs its worktrees; so a path is
//! never made by joining an id as it is.

use std::path::{Path, PathBuf};

/// `base/id` when `id` is a name; otherwise `base/%HASH`, a name made from the id's blake3
/// hash, which no name can equal (`%` is not in a name). Either way one plain component
/// below `base`: never `..`, an absolute path, a NUL or a separator.
pub fn within(base: &Path, id: &str) -> PathBuf {
    if runlog_core::not_a_name(id).is_none() {
        base.join(id)
    } else {
        let hash = blake3::hash(id.as_bytes()).to_hex();
        base.join(format!("%{}", &hash.as_str()[..32]))
    }
}

/// A name made from `text` (a workflow's name, say): each character outside the rule becomes
/// `-`, and a leading `.` or `-` becomes `_`; within the length limit.
pub fn name_from(text: &str) -> String {
    let mut name: String = text
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '-',
        })
        .collect();
    if name.starts_with(['.', '-']) || name.is_empty() {
        name.insert(0, '_');
    }
    name.truncate(runlog_core::MAX_NAME);
    name
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Component;

    #[test]
    fn every_id_gives_one_plain_component_below_the_base() {
        let base = Path::new("/store/worktrees/r1");
        let long = "é".repeat(300);
        for id in [
            "a",
            "..",
            ".",
            "../../../tmp/escaped-task",
            "/etc",
            "/",
            "a/b",
            "a\0b",
            "",
            "tâche",
            "-rf",
            &long,
        ] {
            let path = within(base, id);
            let rest = path.strip_prefix(base).unwrap();
            let parts: Vec<Component<'_>> = rest.components().collect();
            assert_eq!(parts.len(), 1, "{id:?} gives {path:?}");
            assert!(
                matches!(parts[0], Component::Normal(_)),
                "{id:?} gives {path:?}"
            );
            assert!(
                runlog_core::not_a_name(rest.to_str().unwrap()).is_none()
                    || rest.to_str().unwrap().starts_with('%')
            );
        }
        assert_eq!(within(base, "plan"), base.join("plan"));
        assert_ne!(within(base, "../a"), within(base, "../b"));
    }

    #[test]
    fn names_made_from_text_are_names() {
        for text in [
            "My pipeline",
            ".hidden",
            "-x",
            "",
            "tâche/2",
            &"x".repeat(200),
        ] {
            assert_eq!(runlog_core::not_a_name(&name_from(text)), None, "{text:?}");
        }
        assert_eq!(name_from("build"), "build");
    }
}
