//! How far an evaluator's gate agrees with people: the confusion matrix of the gate's
//! decision against a person's on the same work, accuracy and Cohen's kappa.

use serde::{Deserialize, Serialize};

/// The gate's pass or not against a person's, over the labelled verdicts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS, schemars::JsonSchema))]
pub struct Agreement {
    /// The gate passed and the person approved.
    pub both_pass: u64,
    /// The gate passed and the person rejected or reopened.
    pub gate_pass_person_fail: u64,
    /// The gate did not pass and the person approved.
    pub gate_fail_person_pass: u64,
    /// Neither passed.
    pub both_fail: u64,
    /// The labelled verdicts (the four cells).
    pub n: u64,
    /// The share of them where the gate decided as the person did.
    pub accuracy: Option<f64>,
    /// Cohen's kappa: agreement beyond what the two rates alone would give by chance (1 is
    /// full agreement, 0 chance); none when it is undefined (under two labels, or both sides
    /// always giving one answer).
    pub kappa: Option<f64>,
    /// The verdicts no person looked at.
    pub unlabelled: u64,
}

impl Agreement {
    /// One labelled verdict: whether the gate passed it, and whether the person did.
    pub fn add(&mut self, gate: bool, person: bool) {
        match (gate, person) {
            (true, true) => self.both_pass += 1,
            (true, false) => self.gate_pass_person_fail += 1,
            (false, true) => self.gate_fail_person_pass += 1,
            (false, false) => self.both_fail += 1,
        }
        self.n += 1;
    }

    /// Works out accuracy and kappa from the cells.
    pub fn settle(&mut self) {
        let n = self.n as f64;
        if self.n == 0 {
            return;
        }
        let agree = (self.both_pass + self.both_fail) as f64 / n;
        self.accuracy = Some(agree);
        let gate_pass = (self.both_pass + self.gate_pass_person_fail) as f64 / n;
        let person_pass = (self.both_pass + self.gate_fail_person_pass) as f64 / n;
        let chance = gate_pass * person_pass + (1.0 - gate_pass) * (1.0 - person_pass);
        self.kappa = (self.n >= 2 && (1.0 - chance).abs() > 1e-12)
            .then(|| (agree - chance) / (1.0 - chance));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worked_example() {
        // 20 labels: gate and people agree on 8 passes and 7 fails.
        let mut a = Agreement::default();
        let cells = [
            (true, true, 8),
            (true, false, 3),
            (false, true, 2),
            (false, false, 7),
        ];
        for (g, p, k) in cells {
            (0..k).for_each(|_| a.add(g, p));
        }
        a.settle();
        assert_eq!(a.accuracy, Some(0.75));
        // p_o = 0.75, p_gate = 11/20, p_person = 10/20, p_e = 0.5; kappa = 0.25 / 0.5.
        assert!((a.kappa.unwrap() - 0.5).abs() < 1e-12);
    }

    /// Cohen's kappa straight from two raters' label lists, over any set of labels:
    /// observed agreement, and chance agreement as the sum over labels of the product of
    /// each rater's share of it.
    fn kappa_of_lists(a: &[bool], b: &[bool]) -> Option<f64> {
        let n = a.len() as f64;
        let observed = a.iter().zip(b).filter(|(x, y)| x == y).count() as f64 / n;
        let share = |l: &[bool], v: bool| l.iter().filter(|x| **x == v).count() as f64 / n;
        let chance: f64 = [true, false]
            .iter()
            .map(|v| share(a, *v) * share(b, *v))
            .sum();
        (chance < 1.0 - 1e-12).then(|| (observed - chance) / (1.0 - chance))
    }

    proptest::proptest! {
        #[test]
        fn kappa_and_accuracy_agree_with_the_lists(labels in proptest::collection::vec((proptest::bool::ANY, proptest::bool::ANY), 2..200)) {
            let mut a = Agreement::default();
            for (g, p) in &labels {
                a.add(*g, *p);
            }
            a.settle();
            let gate: Vec<bool> = labels.iter().map(|l| l.0).collect();
            let person: Vec<bool> = labels.iter().map(|l| l.1).collect();
            let agree = labels.iter().filter(|(g, p)| g == p).count() as f64 / labels.len() as f64;
            proptest::prop_assert!((a.accuracy.unwrap() - agree).abs() < 1e-12);
            match (a.kappa, kappa_of_lists(&gate, &person)) {
                (Some(x), Some(y)) => proptest::prop_assert!((x - y).abs() < 1e-9, "{x} {y}"),
                (x, y) => proptest::prop_assert_eq!(x, y),
            }
            proptest::prop_assert_eq!(a.both_pass + a.gate_pass_person_fail + a.gate_fail_person_pass + a.both_fail, labels.len() as u64);
        }
    }

    #[test]
    fn one_sided_labels_have_no_kappa() {
        let mut a = Agreement::default();
        (0..5).for_each(|_| a.add(true, true));
        a.settle();
        assert_eq!(a.accuracy, Some(1.0));
        assert_eq!(a.kappa, None);
    }
}
