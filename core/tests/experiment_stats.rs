//! The experiment report's statistics against independent implementations: Wilson's interval
//! against statsmodels' `proportion_confint(method="wilson")`, the sign test against scipy's
//! `binomtest`, and the seeded percentile bootstrap against scipy's `bootstrap` (another
//! generator, so equal within the resampling's own spread). Needs python3 with statsmodels
//! and scipy (`.ci/run` installs them into the pytest venv); without them each test says
//! SKIPPED and how to get them (a failure when `RUNLOG_REQUIRE_SCIPY` is set, as `.ci/run` sets
//! it).

use runlog_core::experiment::stats::{bootstrap_mean, sign_test, wilson};

/// What `program` prints, as numbers; `None` (after saying why) without statsmodels and scipy.
fn python(program: &str) -> Option<Vec<f64>> {
    let found = std::process::Command::new("python3")
        .args(["-c", "import scipy, statsmodels"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        let why = "python3 cannot import statsmodels and scipy (pip install scipy statsmodels; bash .ci/run installs them into its pytest venv)";
        assert!(std::env::var_os("RUNLOG_REQUIRE_SCIPY").is_none(), "{why}");
        eprintln!("SKIPPED: {why}");
        return None;
    }
    let out = std::process::Command::new("python3")
        .args(["-c", program])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "python3 cannot import statsmodels and scipy (.ci/run installs them into the pytest venv; put its bin on PATH): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect(),
    )
}

#[test]
fn wilson_intervals_are_statsmodels() {
    let cases = [
        (0, 1),
        (1, 1),
        (7, 10),
        (0, 9),
        (9, 9),
        (6, 9),
        (37, 120),
        (999, 1000),
    ];
    let program = format!(
        "from statsmodels.stats.proportion import proportion_confint\nfor k, n in {cases:?}:\n    print(*proportion_confint(k, n, alpha=0.05, method='wilson'))\n"
    );
    let Some(want) = python(&program) else { return };
    for (i, (k, n)) in cases.iter().enumerate() {
        let (lo, hi) = wilson(*k, *n);
        assert!(
            (lo - want[2 * i]).abs() < 1e-9 && (hi - want[2 * i + 1]).abs() < 1e-9,
            "{k}/{n}: {lo} {hi} vs {want:?}"
        );
    }
}

#[test]
fn sign_tests_are_scipys_binomtest() {
    let cases = [
        (0, 3),
        (3, 0),
        (1, 9),
        (2, 2),
        (5, 1),
        (12, 30),
        (0, 1),
        (40, 60),
    ];
    let program = format!(
        "from scipy.stats import binomtest\nfor f, b in {cases:?}:\n    print(binomtest(f, f + b, 0.5).pvalue)\n"
    );
    let Some(want) = python(&program) else { return };
    for (i, (f, b)) in cases.iter().enumerate() {
        let p = sign_test(*f, *b);
        assert!(
            (p - want[i]).abs() < 1e-9,
            "{f} fixed, {b} broken: {p} vs {}",
            want[i]
        );
    }
}

#[test]
fn the_seeded_bootstrap_agrees_with_scipys_within_its_spread() {
    let diffs = [
        0.12, -0.05, 0.3, 0.0, 0.22, -0.1, 0.4, 0.05, 0.18, -0.02, 0.09, 0.15,
    ];
    let program = format!(
        "import numpy as np\nfrom scipy.stats import bootstrap\nr = bootstrap(({diffs:?},), np.mean, n_resamples=10000, method='percentile', confidence_level=0.95, random_state=1)\nprint(r.confidence_interval.low, r.confidence_interval.high)\n"
    );
    let Some(want) = python(&program) else { return };
    let (lo, hi) = bootstrap_mean(&diffs, 7).unwrap();
    assert!(
        (lo - want[0]).abs() < 0.01 && (hi - want[1]).abs() < 0.01,
        "{lo} {hi} vs {want:?}"
    );
    assert_eq!(
        bootstrap_mean(&diffs, 7),
        bootstrap_mean(&diffs, 7),
        "seeded"
    );
}
