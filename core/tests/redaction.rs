//! A known secret never survives redaction, in any encoding a recorder stores it in: as it is
//! (an output, a reason), JSON-escaped (a request body, an export), or base64 inside a longer
//! base64 text (a blob an agent sent encoded), wherever in the text it falls.

use base64::Engine;
use proptest::prelude::*;
use runlog_core::redact::{Counts, Redactor};

/// Every form of `secret` that must not be found afterwards.
fn forms(secret: &str) -> Vec<String> {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD_NO_PAD.encode(bytes);
    let escaped = serde_json::to_string(secret).unwrap();
    let mut forms = vec![secret.to_owned(), escaped[1..escaped.len() - 1].to_owned()];
    // The characters that stand for the secret alone, at each alignment.
    for before in 0..3usize {
        let mut bytes = vec![0u8; before];
        bytes.extend_from_slice(secret.as_bytes());
        let text = b64(&bytes);
        let skip = if before == 0 { 0 } else { 4 };
        let end = (before + secret.len()) / 3 * 4;
        if end > skip + 8 {
            forms.push(text[skip..end].to_owned());
        }
    }
    forms
}

fn redacted(redactor: &Redactor, text: &str) -> String {
    redactor
        .redact(text, &mut Counts::new())
        .unwrap_or_else(|| text.to_owned())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn a_known_secret_never_survives_plain_json_escaped_or_base64(
        secret in "[ -~\"\\\\é€]{8,40}",
        before in "[ -~\n]{0,40}",
        after in "[ -~\n]{0,40}",
    ) {
        let redactor = Redactor::new([("LOCAL_LLM_CRED".to_owned(), secret.clone())]);
        let text = format!("{before}{secret}{after}");
        let encoded = [
            text.clone(),
            serde_json::to_string(&serde_json::json!({ "body": text })).unwrap(),
            base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
        ];
        for (what, encoded) in ["plain", "json", "base64"].iter().zip(encoded) {
            let out = redacted(&redactor, &encoded);
            for form in forms(&secret) {
                prop_assert!(!out.contains(&form), "{what}: {form:?} survives in {out:?}");
            }
        }
    }
}

#[test]
fn a_replacement_says_which_secret_it_was() {
    let redactor = Redactor::new([(
        "provider local".to_owned(),
        "bad\"key\\value-123".to_owned(),
    )]);
    let body = serde_json::json!({"error": "bad key: Bearer bad\"key\\value-123"}).to_string();
    let mut counts = Counts::new();
    let out = redactor.redact(&body, &mut counts).unwrap();
    assert_eq!(
        out,
        r#"{"error":"bad key: Bearer [redacted:provider local]"}"#
    );
    assert_eq!(counts.get("provider local"), Some(&1));
    let key = format!("runlog-{}", "0123456789abcdef".repeat(2));
    assert_eq!(
        Redactor::new([])
            .redact(&format!("my key is {key}."), &mut counts)
            .unwrap(),
        "my key is [redacted:runlog-command-key]."
    );
}
