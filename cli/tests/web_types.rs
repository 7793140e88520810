//! The web view's modules are type-checked (`tsc`, run by `.ci/run`) against
//! `src/server/ui/js/types.d.ts`; this test keeps that file equal to the declarations generated
//! from the Rust views the API serializes, so a changed view changes the check.

use std::path::Path;

#[test]
fn the_web_views_types_are_those_of_the_api() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server/ui/js/types.d.ts");
    let generated = runlog_cli::web_view_types();
    if std::env::var_os("RUNLOG_WRITE_TYPES").is_some() {
        std::fs::write(&path, &generated).expect("write types.d.ts");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale: regenerate with RUNLOG_WRITE_TYPES=1 cargo test -p runlog-cli --test web_types",
        path.display()
    );
}
