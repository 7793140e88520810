//! No crate's modules use each other in a circle, and in the binary only the crate root reaches
//! the commands: the server, the runner and the queries never import a command.

use runlog_tests::modules::{circles, graph, name};
use runlog_tests::source_rules::{doubled_causes, lines_of_code, size_limits, sources};
use std::path::{Path, PathBuf};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

const CRATES: &[&str] = &[
    "core/src",
    "store/src",
    "replay/src",
    "cli/gateway/src",
    "cli/runner/src",
    "cli/src",
    "crashfs/src",
];

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let mut found = Vec::new();
    for src in CRATES {
        let g = graph(&workspace().join(src)).unwrap_or_else(|e| panic!("{src}: {e}"));
        assert!(g.len() > 1, "{src}: no modules read");
        for circle in circles(&g) {
            let names: Vec<String> = circle.iter().map(|m| name(m)).collect();
            found.push(format!("{src}: {}", names.join(" -> ")));
        }
    }
    assert!(found.is_empty(), "import circles:\n{}", found.join("\n"));
}

#[test]
fn only_the_binarys_root_uses_the_commands() {
    let g = graph(&workspace().join("cli/src")).unwrap_or_else(|e| panic!("{e}"));
    let commands = vec!["commands".to_owned()];
    let users: Vec<String> = g
        .iter()
        .filter(|(module, used)| {
            !module.is_empty()
                && !module.starts_with(&commands)
                && used.iter().any(|u| u.starts_with(&commands))
        })
        .map(|(module, _)| name(module))
        .collect();
    assert!(
        users.is_empty(),
        "modules outside `commands` that use it: {users:?}"
    );
}

#[test]
fn no_source_file_is_over_the_size_architecture_md_names() {
    let root = workspace();
    let doc = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap_or_default();
    let (within, elsewhere) = size_limits(&doc)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md names no sizes (a line `File sizes: …`)"));
    let mut over = Vec::new();
    for src in CRATES {
        for (path, text) in sources(&root.join(src)).unwrap_or_else(|e| panic!("{src}: {e}")) {
            let shown = path
                .strip_prefix(&root)
                .unwrap_or(&path)
                .display()
                .to_string();
            let limit = within
                .iter()
                .find(|(dir, _)| shown.starts_with(dir.as_str()))
                .map_or(elsewhere, |(_, n)| *n);
            let lines = lines_of_code(&text);
            if lines > limit {
                over.push(format!("{shown}: {lines} lines (at most {limit})"));
            }
        }
    }
    assert!(
        over.is_empty(),
        "files over their size:\n{}",
        over.join("\n")
    );
}

#[test]
fn no_error_says_its_cause_twice() {
    let mut found = Vec::new();
    for src in CRATES {
        for (path, text) in sources(&workspace().join(src)).unwrap_or_else(|e| panic!("{src}: {e}"))
        {
            for doubled in doubled_causes(&text) {
                found.push(format!("{}: {doubled}", path.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "messages that say the cause they also give as their source (say it, or leave it to the chain):\n{}",
        found.join("\n")
    );
}

#[test]
fn architecture_md_has_no_paragraph_over_600_characters() {
    let doc = std::fs::read_to_string(workspace().join("ARCHITECTURE.md")).unwrap_or_default();
    // A drawing in a fenced block is not a paragraph.
    let prose: String = doc.split("```").step_by(2).collect::<Vec<_>>().join("\n\n");
    let long: Vec<String> = prose
        .split("\n\n")
        .map(str::trim)
        .filter(|p| p.chars().count() > 600)
        .map(|p| {
            format!(
                "{} characters: {}…",
                p.chars().count(),
                p.chars().take(80).collect::<String>()
            )
        })
        .collect();
    assert!(long.is_empty(), "{}", long.join("\n"));
}
