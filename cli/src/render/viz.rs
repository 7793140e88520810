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
            super::status_word(row, false),
            fill(row)
        );
    }
    for (from, to, edge) in edges(state) {
        let style = match edge {
            Edge::After => "",
            Edge::Parent => " [style=dashed, arrowhead=none]",
        };
        let _ = writeln!(out, "  \"{}\" -> \"{}\"{style};", quote(from), quote(to));
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
            super::status_word(row, false)
        );
        let _ = writeln!(out, "  style {} fill:{}", node(row.id.as_str()), fill(row));
    }
    for (from, to, edge) in edges(state) {
        let arrow = match edge {
            Edge::After => "-->",
            Edge::Parent => "-.-",
        };
        let _ = writeln!(out, "  {} {arrow} {}", node(from), node(to));
    }
    out
}

/// How two tasks are linked in the graph.
enum Edge {
    /// The second waits for the first.
    After,
    /// The first is the second's group.
    Parent,
}

/// Every link of the plan, in plan order: each task's dependencies, then its group.
fn edges(state: &RunState) -> impl Iterator<Item = (&str, &str, Edge)> {
    state.tasks_in_order().flat_map(|t| {
        let to = t.spec.id.as_str();
        t.spec
            .after
            .iter()
            .map(move |dep| (dep.as_str(), to, Edge::After))
            .chain(
                t.spec
                    .parent
                    .iter()
                    .map(move |p| (p.as_str(), to, Edge::Parent)),
            )
    })
}
