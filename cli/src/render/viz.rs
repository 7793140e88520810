//! The task graph as Graphviz dot or Mermaid, filled with the status colours of [`palette`].

use super::palette;
use runlog_core::projections::board::BoardRow;
use runlog_core::projections::Board;
use runlog_core::RunState;
use std::fmt::Write;

fn fill(row: &BoardRow) -> String {
    palette::of_row(row).map_or_else(|| "#ffffff".to_owned(), |c| c.hex())
}

fn quote(s: &str) -> String {
    s.replace('"', "'")
}

/// Graphviz dot: dependencies as arrows, groups as dashed lines to their children.
pub fn dot(run: &str, state: &RunState, board: &Board) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "digraph \"{}\" {{\n  rankdir=LR;\n  node [shape=box, style=filled, fontname=\"Helvetica\"];",
        quote(run)
    );
    for row in &board.rows {
        let _ = writeln!(
            out,
            "  \"{}\" [label=\"{}\\n{}\", fillcolor=\"{}\"];",
            quote(row.id.as_str()),
            quote(row.id.as_str()),
            row.status.name(),
            fill(row)
        );
    }
    for t in state.tasks_in_order() {
        for dep in &t.spec.after {
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\";",
                quote(dep.as_str()),
                quote(t.spec.id.as_str())
            );
        }
        if let Some(p) = &t.spec.parent {
            let _ = writeln!(
                out,
                "  \"{}\" -> \"{}\" [style=dashed, arrowhead=none];",
                quote(p.as_str()),
                quote(t.spec.id.as_str())
            );
        }
    }
    out.push_str("}\n");
    out
}

/// Mermaid: the same graph for Markdown renderers.
pub fn mermaid(state: &RunState, board: &Board) -> String {
    let node = |id: &str| id.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    let mut out = String::from("graph LR\n");
    for row in &board.rows {
        let _ = writeln!(
            out,
            "  {}[\"{}<br/>{}\"]",
            node(row.id.as_str()),
            quote(row.id.as_str()),
            row.status.name()
        );
        let _ = writeln!(out, "  style {} fill:{}", node(row.id.as_str()), fill(row));
    }
    for t in state.tasks_in_order() {
        for dep in &t.spec.after {
            let _ = writeln!(
                out,
                "  {} --> {}",
                node(dep.as_str()),
                node(t.spec.id.as_str())
            );
        }
        if let Some(p) = &t.spec.parent {
            let _ = writeln!(
                out,
                "  {} -.- {}",
                node(p.as_str()),
                node(t.spec.id.as_str())
            );
        }
    }
    out
}
