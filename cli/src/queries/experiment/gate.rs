//! `runlog experiment gate`: an experiment's variants held to criteria, for CI. Each variant
//! is compared with `base`; an experiment with reruns not ended fails, as its figures are not
//! whole.

use super::report::ExperimentView;
use runlog_core::experiment::report::VariantFigures;
use serde::Serialize;

/// The criteria; each unset one is not checked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Criteria {
    /// The most the pass rate may fall (a share: 0.02 is two points).
    pub max_pass_rate_drop: Option<f64>,
    /// The most the mean cost per task may grow, as a ratio to base's.
    pub max_cost_ratio: Option<f64>,
    /// The most tasks a variant may break.
    pub max_broken: Option<u32>,
    /// The most the mean score may fall.
    pub max_score_drop: Option<f64>,
}

/// A criterion a variant failed.
#[derive(Debug, Clone, Serialize)]
pub struct Failed {
    /// The variant (none: the experiment as a whole).
    pub variant: Option<String>,
    /// The criterion, as its option is spelled.
    pub criterion: String,
    /// What was found, in words.
    pub found: String,
}

/// Each criterion `view`'s variants fail (`only`: that variant alone).
pub fn check(view: &ExperimentView, criteria: Criteria, only: Option<&str>) -> Vec<Failed> {
    let mut failed = Vec::new();
    let p = view.progress;
    if p.ended < p.total {
        failed.push(Failed {
            variant: None,
            criterion: "all reruns ended".into(),
            found: format!(
                "{} of {} reruns ended: `runlog experiment resume {}` goes on",
                p.ended, p.total, view.name
            ),
        });
    }
    let mut variants = view.figures.variants.iter();
    let Some(base) = variants.next() else {
        return failed;
    };
    for v in variants.filter(|v| only.is_none_or(|o| o == v.name)) {
        failed.extend(against(base, v, criteria));
    }
    failed
}

fn against(base: &VariantFigures, v: &VariantFigures, c: Criteria) -> Vec<Failed> {
    let mut out = Vec::new();
    let mut fail = |criterion: &str, found: String| {
        out.push(Failed {
            variant: Some(v.name.clone()),
            criterion: criterion.to_owned(),
            found,
        });
    };
    if let Some(max) = c.max_pass_rate_drop {
        let drop = base.pass_rate.share - v.pass_rate.share;
        if drop > max + 1e-12 {
            fail(
                "--max-pass-rate-drop",
                format!(
                    "pass rate {:.3} against base's {:.3}: down {drop:.3}, more than {max}",
                    v.pass_rate.share, base.pass_rate.share
                ),
            );
        }
    }
    if let Some(max) = c.max_cost_ratio {
        let (was, now) = (base.totals.cost_usd_mean, v.totals.cost_usd_mean);
        let ratio = if was > 0.0 {
            now / was
        } else if now > 0.0 {
            f64::INFINITY
        } else {
            1.0
        };
        if ratio > max + 1e-12 {
            fail(
                "--max-cost-ratio",
                format!("mean cost per task ${now:.4} against base's ${was:.4}: {ratio:.2}×, more than {max}×"),
            );
        }
    }
    if let Some(max) = c.max_broken {
        let broken = u32::try_from(v.broken.len()).unwrap_or(u32::MAX);
        if broken > max {
            let names: Vec<String> = v
                .broken
                .iter()
                .map(|f| format!("{}/{}", f.run, f.task))
                .collect();
            fail(
                "--max-broken",
                format!(
                    "{broken} tasks broken ({}), more than {max}",
                    names.join(", ")
                ),
            );
        }
    }
    if let (Some(max), Some(was), Some(now)) = (c.max_score_drop, base.mean_score, v.mean_score) {
        if was - now > max + 1e-12 {
            fail(
                "--max-score-drop",
                format!(
                    "mean score {now:.3} against base's {was:.3}: down {:.3}, more than {max}",
                    was - now
                ),
            );
        }
    }
    out
}
