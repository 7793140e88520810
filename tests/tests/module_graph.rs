//! No crate's modules use each other in a circle, and in the binary only the crate root reaches
//! the commands: the server, the runner and the queries never import a command.

use runlog_tests::modules::{circles, graph, name};
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
