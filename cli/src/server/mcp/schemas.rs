//! Each tool's `outputSchema`: the schema the OpenAPI document gives its route's answer (the
//! same typed view, generated from the same Rust type), with the views it names carried along
//! under `$defs`, so the schema stands alone.

use serde_json::{json, Map, Value};
use std::sync::OnceLock;

const COMPONENTS: &str = "#/components/schemas/";
const DEFS: &str = "#/$defs/";

fn document() -> &'static Value {
    static DOC: OnceLock<Value> = OnceLock::new();
    DOC.get_or_init(|| serde_json::from_str(super::super::api::OPENAPI).unwrap_or(Value::Null))
}

/// The schema of the answer of `route` (method, path, status), as an object schema: a list is
/// put under `wrap`. `None` when the document has no JSON answer for it (a test checks that
/// every tool has one).
pub(super) fn output(
    (method, path, status): (&str, &str, &str),
    wrap: Option<&str>,
) -> Option<Map<String, Value>> {
    let doc = document();
    let at = format!(
        "/paths/{}/{method}/responses/{status}/content/application~1json/schema",
        path.replace('~', "~0").replace('/', "~1")
    );
    let answer = doc.pointer(&at)?.clone();
    let mut defs = Map::new();
    reach(doc, &answer, &mut defs);
    let root = match wrap {
        Some(key) => json!({"type": "object", "properties": {key: answer}, "required": [key]}),
        None => match named(&answer) {
            // The view itself at the root: clients show its description and fields.
            Some(name) => defs.get(name).cloned().unwrap_or(answer),
            None => answer,
        },
    };
    let mut root = match relinked(root) {
        Value::Object(m) => m,
        _ => return None,
    };
    let defs = defs.into_iter().map(|(k, v)| (k, relinked(v))).collect();
    root.insert("$defs".into(), Value::Object(defs));
    Some(root)
}

/// The component a schema is only a reference to.
fn named(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix(COMPONENTS)
}

/// Every component `schema` names, directly or through others, into `defs`.
fn reach(doc: &Value, schema: &Value, defs: &mut Map<String, Value>) {
    match schema {
        Value::Object(m) => {
            if let Some(name) = named(schema) {
                if !defs.contains_key(name) {
                    let found = doc
                        .pointer(&format!("/components/schemas/{name}"))
                        .cloned()
                        .unwrap_or(Value::Bool(true));
                    defs.insert(name.to_owned(), found.clone());
                    reach(doc, &found, defs);
                }
            }
            for v in m.values() {
                reach(doc, v, defs);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| reach(doc, v, defs)),
        _ => {}
    }
}

/// `schema` with its references pointing into its own `$defs`.
fn relinked(schema: Value) -> Value {
    match schema {
        Value::Object(m) => Value::Object(
            m.into_iter()
                .map(|(k, v)| match (k.as_str(), v) {
                    ("$ref", Value::String(r)) => {
                        let r = match r.strip_prefix(COMPONENTS) {
                            Some(name) => format!("{DEFS}{name}"),
                            None => r,
                        };
                        (k, Value::String(r))
                    }
                    (_, v) => (k, relinked(v)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(relinked).collect()),
        other => other,
    }
}
