//! The TypeScript declarations of the views the web view reads, generated from the Rust types
//! that serialize them (`ts_rs`), so the page's `// @ts-check` modules are checked against the
//! API's real shapes. `tests/web_types.rs` keeps `js/types.d.ts` equal to them and `.ci/run`
//! type-checks the modules against that file.

use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};
use ts_rs::{Config, TypeVisitor, TS};

/// What the file says first: where it comes from.
const HEADER: &str =
    "// Generated from runlog's Rust views by `tests/web_types.rs` (ts-rs): do not edit.\n\
// Regenerate: RUNLOG_WRITE_TYPES=1 cargo test -p runlog-cli --test web_types\n";

/// Every declaration each root needs, each once, sorted by name.
#[derive(Default)]
struct Declarations {
    seen: HashSet<TypeId>,
    by_name: BTreeMap<String, String>,
    config: Config,
}

impl TypeVisitor for Declarations {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Only named types have a declaration; primitives, arrays and maps are inlined.
        if T::output_path().is_none() || !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        let mut text = T::docs().unwrap_or_default();
        text.push_str("export ");
        text.push_str(&T::decl(&self.config));
        self.by_name.insert(T::ident(&self.config), text);
        T::visit_dependencies(self);
        T::visit_generics(self);
    }
}

/// The declarations file: the board, an event with its words, the audit with its words, a
/// task's model calls, the judges' report, and
/// every type they hold. JSON numbers are `number` (seqs and times stay far below 2^53).
pub fn declarations() -> String {
    let mut all = Declarations {
        config: Config::new().with_large_int("number"),
        ..Declarations::default()
    };
    all.visit::<crate::queries::board::BoardView>();
    all.visit::<crate::queries::events::EventsPage<'static>>();
    all.visit::<crate::queries::audit::AuditView>();
    all.visit::<crate::queries::stages::StagesView>();
    all.visit::<crate::queries::stack::StackView<'static>>();
    all.visit::<crate::queries::recorded::Recorded<'static>>();
    all.visit::<crate::queries::recorded::Executing>();
    all.visit::<crate::queries::recorded::Interrupting>();
    all.visit::<crate::queries::fork::Forked>();
    all.visit::<crate::queries::runs::Row>();
    all.visit::<crate::queries::cost::CostView>();
    all.visit::<crate::queries::verify::Checked>();
    all.visit::<crate::queries::judges::Waiting>();
    all.visit::<crate::queries::experiment::report::ExperimentView>();
    all.visit::<crate::queries::experiment::report::ExperimentRow>();
    all.visit::<crate::queries::diff::DiffView<'static>>();
    all.visit::<crate::render::event::Worded<'static>>();
    all.visit::<crate::render::WordedAudit>();
    all.visit::<crate::queries::calls::CallsView>();
    all.visit::<runlog_core::projections::judges::JudgesReport>();
    all.visit::<runlog_core::projections::timeline::Timeline>();
    let mut out = String::from(HEADER);
    for text in all.by_name.values() {
        out.push('\n');
        out.push_str(text);
        out.push('\n');
    }
    out
}
