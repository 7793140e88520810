//! The OpenAPI document `runlog serve` serves (`GET /v1/openapi.json`) answers each route with
//! the JSON schema of the view it serializes, generated from the Rust types (schemars); this test
//! keeps the committed document equal to that, so a changed view changes the document, and
//! schemathesis (`.ci/run`) checks every answer against it.

use std::path::Path;

#[test]
fn the_openapi_documents_answers_are_the_schemas_of_the_views() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/server/api/openapi.json");
    let committed = std::fs::read_to_string(&path).expect("read openapi.json");
    let generated = runlog_cli::openapi_with_views(&committed).expect("openapi.json is JSON");
    if std::env::var_os("RUNLOG_WRITE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).expect("write openapi.json");
        return;
    }
    assert!(
        committed == generated,
        "{} is stale: regenerate with RUNLOG_WRITE_OPENAPI=1 cargo test -p runlog-cli --test openapi",
        path.display()
    );
}
