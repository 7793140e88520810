//! The guide never lies: every console example in README.md and docs/ runs against the built
//! binary, as printed (trycmd). Each page runs in a sandbox of its own holding a copy of the
//! fixtures, with runlog's store (`.runlog`) in it and a fixed clock.

mod common;

use common::{copy_tree, repo};
use std::path::Path;

#[test]
fn every_console_example_in_the_readme_and_the_docs_runs_as_printed() {
    let scratch = tempfile::tempdir().unwrap();
    let mut pages = vec![("README".to_owned(), repo().join("README.md"))];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            pages.push((format!("docs-{stem}"), path));
        }
    }
    assert!(pages.len() > 10, "the guide's pages: {pages:?}");
    for (name, page) in &pages {
        std::fs::copy(page, scratch.path().join(format!("{name}.md"))).unwrap();
        // Where the page's commands run: a copy of the fixtures, in a sandbox of its own.
        copy_tree(
            &repo().join("fixtures"),
            &scratch.path().join(format!("{name}.in/fixtures")),
        );
        let out = scratch.path().join(format!("{name}.out"));
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join(".keep"), "").unwrap();
    }
    trycmd::TestCases::new()
        .register_bin("runlog", Path::new(env!("CARGO_BIN_EXE_runlog")))
        .env("NO_COLOR", "1")
        .env("RUNLOG_TEST_CLOCK", "1700000000000")
        // A developer's own OpenTelemetry endpoint is no part of a test (empty is unset).
        .env("RUNLOG_OTLP_ENDPOINT", "")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "")
        .case(scratch.path().join("*.md"));
}
