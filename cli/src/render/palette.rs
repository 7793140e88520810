//! Status colours shared by every view (terminal, dot, mermaid), so they cannot drift apart.

use runlog_core::projections::board::BoardRow;
use runlog_core::{Readiness, TaskStatus};

/// A 24-bit colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// The ANSI escape that sets this as the foreground colour.
    pub fn ansi_fg(self) -> String {
        format!("\x1b[38;2;{};{};{}m", self.0, self.1, self.2)
    }

    /// Hue in degrees (0–360), for ordering colours on the wheel.
    #[cfg(test)]
    pub fn hue(self) -> f64 {
        let (r, g, b) = (
            f64::from(self.0) / 255.0,
            f64::from(self.1) / 255.0,
            f64::from(self.2) / 255.0,
        );
        let max = r.max(g).max(b);
        let min = r.min(g).min(b);
        let d = max - min;
        if d == 0.0 {
            return 0.0;
        }
        let h = if max == r {
            ((g - b) / d).rem_euclid(6.0)
        } else if max == g {
            (b - r) / d + 2.0
        } else {
            (r - g) / d + 4.0
        };
        h * 60.0
    }
}

/// Yellow: an attempt is running.
pub const IN_PROGRESS: Rgb = Rgb(255, 215, 0);
/// Blue: tests running.
pub const TESTING: Rgb = Rgb(30, 144, 255);
/// Magenta: tests failed.
pub const TEST_FAILED: Rgb = Rgb(255, 0, 255);
/// Chartreuse, the light green between yellow and green: submitted, waiting for the gate.
pub const PENDING_EVAL: Rgb = Rgb(127, 255, 0);
/// Green: done.
pub const DONE: Rgb = Rgb(0, 190, 0);
/// Red: failed.
pub const FAILED: Rgb = Rgb(220, 20, 20);
/// Grey: cancelled.
pub const CANCELLED: Rgb = Rgb(128, 128, 128);
/// Dim red: an open task blocked by a failed or cancelled dependency.
pub const BLOCKED: Rgb = Rgb(139, 0, 0);

/// The colour of a status; `None` for open (the terminal's default colour).
pub fn colour(status: TaskStatus) -> Option<Rgb> {
    match status {
        TaskStatus::Open => None,
        TaskStatus::InProgress => Some(IN_PROGRESS),
        TaskStatus::Testing => Some(TESTING),
        TaskStatus::TestFailed => Some(TEST_FAILED),
        TaskStatus::PendingEval => Some(PENDING_EVAL),
        TaskStatus::Done => Some(DONE),
        TaskStatus::Failed => Some(FAILED),
        TaskStatus::Cancelled => Some(CANCELLED),
    }
}

/// The colours as CSS custom properties (`--st-done: #00be00;` …, `--st-blocked` too), so the
/// web view paints what the terminal and the graphs paint. Open has none: the page's own colour.
pub fn css_properties() -> String {
    let mut css = String::from(":root {\n");
    let named = TaskStatus::ALL
        .iter()
        .filter_map(|s| colour(*s).map(|c| (s.name(), c)))
        .chain([("blocked", BLOCKED)]);
    for (name, c) in named {
        css.push_str(&format!("  --st-{name}: {};\n", c.hex()));
    }
    css.push_str("}\n");
    css
}

/// Whether a board row shows as blocked: an open task whose dependency failed or was cancelled,
/// or whose stage's circuit is open.
pub fn is_blocked(row: &BoardRow) -> bool {
    matches!(
        row.readiness,
        Some(
            Readiness::Blocked { .. }
                | Readiness::CircuitOpen { .. }
                | Readiness::BudgetSpent { .. }
        )
    )
}

/// The colour of a board row: its status's, or dim red when it is blocked.
pub fn of_row(row: &BoardRow) -> Option<Rgb> {
    if is_blocked(row) {
        Some(BLOCKED)
    } else {
        colour(row.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_eval_has_a_distinct_chartreuse_colour_between_yellow_and_green() {
        let pending = colour(TaskStatus::PendingEval).unwrap();
        let in_progress = colour(TaskStatus::InProgress).unwrap();
        let done = colour(TaskStatus::Done).unwrap();
        assert_ne!(pending, in_progress);
        assert_ne!(pending, done);
        assert!(in_progress.hue() < pending.hue() && pending.hue() < done.hue());
        assert_eq!(TaskStatus::PendingEval.name(), "pending-eval");
    }
}
