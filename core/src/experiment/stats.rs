//! The statistics of an experiment's report, each one a careful reader would choose: a share's
//! 95% interval by Wilson's score method (sound near 0 and 1, where the normal approximation
//! is not), fixed against broken tasks by an exact two-sided sign test, and a paired mean
//! difference's interval by a percentile bootstrap on a seeded generator, so the same report
//! gives the same numbers every time. The tests check them against statsmodels and scipy.

use serde::Serialize;

/// The normal quantile of 97.5%: a 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// How many resamples the bootstrap draws.
pub const RESAMPLES: usize = 10_000;

/// A share with its 95% interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Share {
    /// Successes.
    pub k: u32,
    /// Trials.
    pub n: u32,
    /// k / n (0 when n is 0).
    pub share: f64,
    /// The interval's low end.
    pub low: f64,
    /// Its high end.
    pub high: f64,
}

impl Share {
    /// `k` of `n`, with Wilson's 95% interval (0 to 1 when there is no trial).
    pub fn of(k: u32, n: u32) -> Share {
        let (low, high) = wilson(k, n);
        Share {
            k,
            n,
            share: if n == 0 {
                0.0
            } else {
                f64::from(k) / f64::from(n)
            },
            low,
            high,
        }
    }
}

/// Wilson's score interval at 95% for `k` successes in `n` trials (statsmodels'
/// `proportion_confint(k, n, method="wilson")`).
pub fn wilson(k: u32, n: u32) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let n = f64::from(n);
    let p = f64::from(k.min(n as u32)) / n;
    let z2 = Z95 * Z95;
    let denominator = 1.0 + z2 / n;
    let centre = (p + z2 / (2.0 * n)) / denominator;
    let half = Z95 * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// The exact two-sided sign test's p-value for `fixed` against `broken` (ties left out): the
/// chance, were a flip as likely either way, of a split at least as uneven (scipy's
/// `binomtest(fixed, fixed + broken, 0.5).pvalue`). 1 when nothing flipped.
pub fn sign_test(fixed: u32, broken: u32) -> f64 {
    let n = fixed.saturating_add(broken);
    if n == 0 {
        return 1.0;
    }
    let fewer = fixed.min(broken);
    // P(X <= fewer) for X ~ Binomial(n, 1/2), summed in logs so large n cannot overflow.
    let ln_half_n = f64::from(n) * std::f64::consts::LN_2;
    let mut ln_choose = 0.0_f64;
    let mut tail = 0.0_f64;
    for i in 0..=fewer {
        if i > 0 {
            ln_choose += (f64::from(n - i + 1)).ln() - f64::from(i).ln();
        }
        tail += (ln_choose - ln_half_n).exp();
    }
    // An even split's own probability is counted on both sides once.
    if 2 * fewer == n {
        return 1.0;
    }
    (2.0 * tail).min(1.0)
}

/// The 95% percentile-bootstrap interval of the mean of `diffs` (each a paired difference),
/// drawn from a generator seeded with `seed`; `None` when there is no pair.
pub fn bootstrap_mean(diffs: &[f64], seed: u64) -> Option<(f64, f64)> {
    if diffs.is_empty() {
        return None;
    }
    let n = diffs.len();
    let mut rng = SplitMix(seed);
    let mut means: Vec<f64> = (0..RESAMPLES)
        .map(|_| {
            let sum: f64 = (0..n)
                .map(|_| diffs.get(rng.below(n)).copied().unwrap_or(0.0))
                .sum();
            sum / n as f64
        })
        .collect();
    means.sort_by(f64::total_cmp);
    Some((quantile(&means, 0.025), quantile(&means, 0.975)))
}

/// The `q` quantile of sorted `xs`, interpolated linearly between neighbours (numpy's default).
fn quantile(xs: &[f64], q: f64) -> f64 {
    let last = xs.len().saturating_sub(1);
    let at = q * last as f64;
    let below = at.floor() as usize;
    let above = (below + 1).min(last);
    let (lo, hi) = (
        xs.get(below).copied().unwrap_or(0.0),
        xs.get(above).copied().unwrap_or(0.0),
    );
    lo + (hi - lo) * (at - below as f64)
}

/// SplitMix64: small, fast, and the same sequence on every machine.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (n > 0), by multiply-shift: no modulo bias worth the name at these n.
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }
}

/// The mean of `xs`, or `None` when empty.
pub fn mean(xs: &[f64]) -> Option<f64> {
    (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_of_ten_is_the_interval_statsmodels_gives() {
        let (lo, hi) = wilson(7, 10);
        assert!(
            (lo - 0.396_8).abs() < 1e-4 && (hi - 0.892_2).abs() < 1e-4,
            "{lo} {hi}"
        );
    }

    #[test]
    fn the_sign_test_is_exact_and_symmetric() {
        // 0 fixed, 3 broken: 2 * (1/8).
        assert!((sign_test(0, 3) - 0.25).abs() < 1e-12);
        assert_eq!(sign_test(3, 0), sign_test(0, 3));
        assert_eq!(sign_test(2, 2), 1.0);
        assert_eq!(sign_test(0, 0), 1.0);
        // 1 of 10: 2 * 11/1024.
        assert!((sign_test(1, 9) - 22.0 / 1024.0).abs() < 1e-12);
    }

    #[test]
    fn the_bootstrap_is_seeded() {
        let diffs = [0.1, -0.2, 0.3, 0.05, 0.0, 0.4];
        assert_eq!(bootstrap_mean(&diffs, 7), bootstrap_mean(&diffs, 7));
        let (lo, hi) = bootstrap_mean(&diffs, 7).unwrap_or_default();
        assert!(lo < 0.108 && 0.108 < hi, "{lo} {hi}");
    }
}
