//! Test discovery (the test conventions): a task that requires testing and names no `test`
//! command gets one from the files beside its workflow, and the run records which convention
//! chose it. A task that matches none is an error before anything runs, never a silent skip.

use runlog_core::{CommandKind, TaskId};
use std::path::Path;

/// One task's discovered test command and the convention that found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The task.
    pub task: String,
    /// Which convention matched, as the event records it.
    pub convention: String,
    /// The command it gives the task.
    pub test: String,
}

impl Discovery {
    /// The command that records it in the run.
    pub fn command(&self) -> CommandKind {
        CommandKind::RecordTestsDiscovered {
            task: TaskId(self.task.clone()),
            convention: self.convention.clone(),
            test: self.test.clone(),
        }
    }
}

/// What to do when nothing matched: the conventions, in the order they are tried.
pub fn conventions_hint(id: &str) -> String {
    format!(
        "give it `test = \"COMMAND\"` or `test_file = \"FILE.py\"`, or put beside the workflow \
         one of (tried in this order): tests/test_{id}.py, a Makefile target `test-{id}:`, \
         {id}_test.py, test_{id}.py; or say `requires_testing = false`"
    )
}

/// The test command for task `id` in workflow directory `dir`: its `test_file` when it names
/// one, else the first convention whose file exists. `Err` when `test_file` is missing.
pub fn discover(
    dir: &Path,
    id: &str,
    test_file: Option<&str>,
) -> Result<Option<Discovery>, String> {
    let found = |convention: &str, test: String| {
        Some(Discovery {
            task: id.to_owned(),
            convention: convention.to_owned(),
            test,
        })
    };
    if let Some(file) = test_file {
        if !dir.join(file).is_file() {
            return Err(format!(
                "test_file {file:?} does not exist in {}",
                dir.display()
            ));
        }
        return Ok(found("test_file", pytest(file)));
    }
    let pinned = format!("tests/test_{id}.py");
    if dir.join(&pinned).is_file() {
        return Ok(found("pytest tests/test_{id}.py", pytest(&pinned)));
    }
    if has_make_target(dir, &format!("test-{id}")) {
        return Ok(found("make test-{id}", format!("make test-{id}")));
    }
    for (convention, file) in [
        ("{id}_test.py", format!("{id}_test.py")),
        ("test_{id}.py", format!("test_{id}.py")),
    ] {
        if dir.join(&file).is_file() {
            return Ok(found(convention, pytest(&file)));
        }
    }
    Ok(None)
}

fn pytest(file: &str) -> String {
    format!("pytest {file} -v")
}

/// Whether `dir/Makefile` (or `makefile`, `GNUmakefile`, as make looks) defines `target:`.
fn has_make_target(dir: &Path, target: &str) -> bool {
    ["GNUmakefile", "makefile", "Makefile"].iter().any(|name| {
        std::fs::read_to_string(dir.join(name)).is_ok_and(|text| {
            text.lines().any(|line| {
                line.split_once(':').is_some_and(|(names, rest)| {
                    // `a b: deps` names several targets; `x := 1` is a variable, not a rule.
                    !rest.starts_with('=')
                        && !line.starts_with(char::is_whitespace)
                        && names.split_whitespace().any(|n| n == target)
                })
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn chosen(files: &[(&str, &str)], test_file: Option<&str>) -> Option<(String, String)> {
        let dir = dir_with(files);
        discover(dir.path(), "parse", test_file)
            .unwrap()
            .map(|d| (d.convention, d.test))
    }

    #[test]
    fn the_conventions_are_tried_in_the_seeds_order() {
        let all = [
            ("tests/test_parse.py", ""),
            ("Makefile", "test-parse:\n\tpytest -q\n"),
            ("parse_test.py", ""),
            ("test_parse.py", ""),
        ];
        assert_eq!(
            chosen(&all, None),
            Some((
                "pytest tests/test_{id}.py".into(),
                "pytest tests/test_parse.py -v".into()
            ))
        );
        assert_eq!(
            chosen(&all[1..], None),
            Some(("make test-{id}".into(), "make test-parse".into()))
        );
        assert_eq!(
            chosen(&all[2..], None),
            Some(("{id}_test.py".into(), "pytest parse_test.py -v".into()))
        );
        assert_eq!(
            chosen(&all[3..], None),
            Some(("test_{id}.py".into(), "pytest test_parse.py -v".into()))
        );
        assert_eq!(chosen(&[], None), None);
    }

    #[test]
    fn test_file_wins_and_must_exist() {
        let files = [("checks/parse.py", ""), ("test_parse.py", "")];
        assert_eq!(
            chosen(&files, Some("checks/parse.py")),
            Some(("test_file".into(), "pytest checks/parse.py -v".into()))
        );
        let dir = dir_with(&[]);
        let err = discover(dir.path(), "parse", Some("nope.py")).unwrap_err();
        assert!(err.contains("\"nope.py\" does not exist"), "{err}");
    }

    #[test]
    fn only_a_rule_for_the_exact_target_counts() {
        let near = [(
            "Makefile",
            "test-parser:\n\ttrue\nX := test-parse\n\techo test-parse: no\n",
        )];
        assert_eq!(chosen(&near, None), None);
        let several = [("Makefile", "test-lex test-parse: build\n\ttrue\n")];
        assert_eq!(
            chosen(&several, None),
            Some(("make test-{id}".into(), "make test-parse".into()))
        );
    }
}
