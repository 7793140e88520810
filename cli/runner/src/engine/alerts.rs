//! The engine's side of alerts: the alerts its recorded events raise sent as the steps that
//! record them are appended, each delivery's end recorded as it comes back, and at the run's
//! end the deliveries still under way waited for (a while) so that they are in its history.

use super::{Engine, Result};
use crate::alerting::{Alerter, SETTLE_WITHIN};
use runlog_core::alerts::AlertSent;
use runlog_core::CommandKind;
use tokio::sync::mpsc;

/// The run's alerter and the deliveries it hands back.
pub(super) struct Alerts {
    alerter: Alerter,
    sent: mpsc::UnboundedReceiver<AlertSent>,
}

impl Engine {
    /// Opens the alerter when the workflow names receivers, each key read from the runner's
    /// environment as the host gave it.
    pub(super) fn open_alerts(&mut self) {
        let targets = self
            .ctx
            .runner
            .alerts
            .iter()
            .chain(self.ctx.host.alerts())
            .map(|t| {
                let key = t.secret_env.as_deref().and_then(|v| self.ctx.host.var(v));
                (t.clone(), key.map(str::to_owned))
            })
            .collect();
        self.alerts = Alerter::new(self.run(), targets).map(|(alerter, sent)| {
            self.rec.alerting();
            Alerts { alerter, sent }
        });
    }

    /// Sends the alerts raised by what was recorded since the last call.
    pub(super) fn send_alerts(&mut self) {
        let raised = self.rec.take_raised();
        if let Some(alerts) = &self.alerts {
            for (seq, r) in raised {
                alerts.alerter.raise(seq, &r);
            }
        }
    }

    /// The next delivery that ended (never, without alerts).
    pub(super) async fn next_alert(alerts: &mut Option<Alerts>) -> Option<AlertSent> {
        match alerts {
            Some(a) => a.sent.recv().await,
            None => std::future::pending().await,
        }
    }

    /// Records how a delivery ended.
    pub(super) fn record_alert(&mut self, sent: AlertSent) -> Result<()> {
        self.record(CommandKind::RecordAlert {
            sent: Box::new(sent),
        })
        .map(|_| ())
    }

    /// As the run ends: its last alerts sent, and every delivery under way waited for (up to
    /// [`SETTLE_WITHIN`]) and recorded. A receiver that is down costs the run that wait at most.
    pub(super) async fn settle_alerts(&mut self) -> Result<()> {
        self.send_alerts();
        let Some(alerts) = &mut self.alerts else {
            return Ok(());
        };
        let until = tokio::time::Instant::now() + SETTLE_WITHIN;
        let mut ended = Vec::new();
        while alerts.alerter.under_way() > 0 || !alerts.sent.is_empty() {
            match tokio::time::timeout_at(until, alerts.sent.recv()).await {
                Ok(Some(sent)) => ended.push(sent),
                Ok(None) | Err(_) => break,
            }
        }
        for sent in ended {
            self.record_alert(sent)?;
        }
        Ok(())
    }
}
