//! Sending a run's alerts (`[[alerts]]`) as they are raised: a POST of each to its receiver,
//! as Slack reads it or as plain JSON, signed when a key is given (`X-Runlog-Signature:
//! sha256=HEX`, HMAC-SHA256 of the body), tried again with backoff. A receiver that is down
//! never holds the run up: deliveries go on beside it, and how each ended comes back to be
//! recorded (`alert-sent`).

use runlog_core::alerts::{AlertOn, AlertSent};
use runlog_core::projections::alerts::Raised;
use runlog_gateway::http::{Client, Target, TlsFiles};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Tries of one delivery, and the wait before each try after the first.
const BACKOFF: [Duration; 3] = [
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];

/// The longest one try may take.
const TRY_WITHIN: Duration = Duration::from_secs(5);

/// How long a run that ends waits for its alerts still under way to be delivered or given up.
pub const SETTLE_WITHIN: Duration = Duration::from_secs(15);

/// How an alert's body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlertFormat {
    /// A Slack incoming webhook's message: `{"text": ...}`.
    Slack,
    /// runlog's own: `{"run", "on", "task", "text", "seq"}`.
    Json,
}

/// Where a run's alerts go (an `[[alerts]]` table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertTarget {
    /// The receiver.
    pub url: String,
    /// How the body is written.
    pub format: AlertFormat,
    /// What it is told of.
    pub on: Vec<AlertOn>,
    /// The variable of the runner's environment holding the signature's key, if any.
    pub secret_env: Option<String>,
}

impl AlertTarget {
    /// The receiver as recorded: its scheme and host only (a webhook's path is often its
    /// secret).
    pub fn shown(&self) -> String {
        match Target::of(&self.url) {
            Ok(t) => format!(
                "{}://{}",
                if t.secure { "https" } else { "http" },
                t.authority
            ),
            Err(_) => "an address that is not http(s)".to_owned(),
        }
    }
}

/// The body of `raised` for `run` (raised by the event at `seq`) in `format`.
pub fn body(format: AlertFormat, run: &str, seq: u64, raised: &Raised) -> Vec<u8> {
    let value = match format {
        AlertFormat::Slack => serde_json::json!({
            "text": format!("runlog {}: {}", raised.on.name(), raised.text),
        }),
        AlertFormat::Json => serde_json::json!({
            "run": run,
            "on": raised.on.name(),
            "task": raised.task,
            "text": raised.text,
            "seq": seq,
        }),
    };
    value.to_string().into_bytes()
}

/// `sha256=HEX`: HMAC-SHA256 of `body` with `key`.
pub fn signature(key: &[u8], body: &[u8]) -> String {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key);
    let tag = ring::hmac::sign(&key, body);
    let hex: String = tag.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// The alerts of one run, sent as they are raised; how each delivery ended comes back on
/// `sent` to be recorded.
pub struct Alerter {
    run: String,
    targets: Vec<(AlertTarget, Option<String>)>,
    client: Arc<Option<Client>>,
    sent: mpsc::UnboundedSender<AlertSent>,
    under_way: Arc<AtomicUsize>,
}

// Written by hand: the keys it holds are never printed.
impl std::fmt::Debug for Alerter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let to: Vec<String> = self.targets.iter().map(|(t, _)| t.shown()).collect();
        f.debug_struct("Alerter")
            .field("run", &self.run)
            .field("to", &to)
            .finish()
    }
}

impl Alerter {
    /// The alerter of `run` to `targets`, each with its key's value (read from the runner's
    /// environment); none when there is nowhere to send. Its deliveries come back on the
    /// receiver.
    pub fn new(
        run: &str,
        targets: Vec<(AlertTarget, Option<String>)>,
    ) -> Option<(Alerter, mpsc::UnboundedReceiver<AlertSent>)> {
        if targets.is_empty() {
            return None;
        }
        let (sent, deliveries) = mpsc::unbounded_channel();
        let client = Client::new(&TlsFiles::default()).ok();
        Some((
            Alerter {
                run: run.to_owned(),
                targets,
                client: Arc::new(client),
                sent,
                under_way: Arc::default(),
            },
            deliveries,
        ))
    }

    /// Sends `raised` (by the event at `seq`) to each target that asks for it. Must be called
    /// within a tokio runtime.
    pub fn raise(&self, seq: u64, raised: &Raised) {
        for (target, key) in &self.targets {
            if !target.on.contains(&raised.on) && raised.on != AlertOn::Test {
                continue;
            }
            let body = body(target.format, &self.run, seq, raised);
            let (target, key, client) = (target.clone(), key.clone(), self.client.clone());
            let (sent, under_way) = (self.sent.clone(), self.under_way.clone());
            under_way.fetch_add(1, Ordering::SeqCst);
            let on = raised.on;
            tokio::spawn(async move {
                let outcome =
                    deliver(client.as_ref().as_ref(), &target, key.as_deref(), body).await;
                let _ = sent.send(AlertSent {
                    on,
                    seq,
                    to: target.shown(),
                    attempts: outcome.0,
                    status: outcome.1,
                    error: outcome.2,
                });
                under_way.fetch_sub(1, Ordering::SeqCst);
            });
        }
    }

    /// Deliveries still under way.
    pub fn under_way(&self) -> usize {
        self.under_way.load(Ordering::SeqCst)
    }
}

/// Posts `body` to `target` until a 2xx answer or the tries run out: tries made, the last
/// status, and the last error when it was not delivered.
async fn deliver(
    client: Option<&Client>,
    target: &AlertTarget,
    key: Option<&str>,
    body: Vec<u8>,
) -> (u32, Option<u16>, Option<String>) {
    let Some(client) = client else {
        return (
            0,
            None,
            Some("no HTTP client (TLS could not be set up)".into()),
        );
    };
    let to = match Target::of(&target.url) {
        Ok(t) => t,
        Err(e) => return (0, None, Some(e.to_string())),
    };
    let signed = key.map(|k| signature(k.as_bytes(), &body));
    let mut tries = 0u32;
    let mut last = (None, None);
    for wait in std::iter::once(Duration::ZERO).chain(BACKOFF) {
        tokio::time::sleep(wait).await;
        tries += 1;
        let path = if to.path.is_empty() {
            "/"
        } else {
            to.path.as_str()
        };
        let mut request = axum::http::Request::post(path)
            .header("content-type", "application/json")
            .header("user-agent", "runlog");
        if let Some(s) = &signed {
            request = request.header("x-runlog-signature", s.as_str());
        }
        let sent = tokio::time::timeout(
            TRY_WITHIN,
            client.send(&to, request, axum::body::Bytes::from(body.clone())),
        )
        .await;
        match sent {
            Ok(Ok(answer)) => {
                let status = answer.status();
                // The answer is read to its end, so the connection can be kept.
                let _ = http_body_util::BodyExt::collect(answer.into_body()).await;
                if status.is_success() {
                    return (tries, Some(status.as_u16()), None);
                }
                last = (Some(status.as_u16()), Some(format!("answered {status}")));
            }
            Ok(Err(e)) => last = (None, Some(runlog_gateway::http::in_one_line(&e))),
            Err(_) => {
                last = (
                    None,
                    Some(format!("no answer within {} s", TRY_WITHIN.as_secs())),
                )
            }
        }
    }
    (tries, last.0, last.1)
}

/// Sends one test alert to each of `targets` (each with its key's value) from workflow
/// `workflow`: how each delivery ended, in their order.
pub async fn send_test(
    workflow: &str,
    targets: Vec<(AlertTarget, Option<String>)>,
) -> Vec<AlertSent> {
    let raised = Raised {
        on: AlertOn::Test,
        task: None,
        text: format!("this receiver gets the alerts of runlog workflow {workflow}"),
    };
    let client = Client::new(&TlsFiles::default()).ok();
    let mut out = Vec::new();
    for (target, key) in targets {
        let body = body(target.format, workflow, 0, &raised);
        let (attempts, status, error) =
            deliver(client.as_ref(), &target, key.as_deref(), body).await;
        out.push(AlertSent {
            on: AlertOn::Test,
            seq: 0,
            to: target.shown(),
            attempts,
            status,
            error,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_the_body_in_hex() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature(b"Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_receiver_is_recorded_without_its_path() {
        let t = AlertTarget {
            url: "https://hooks.slack.com/services/T0/B0/secret".into(),
            format: AlertFormat::Slack,
            on: AlertOn::ALL.to_vec(),
            secret_env: None,
        };
        assert_eq!(t.shown(), "https://hooks.slack.com");
    }
}
