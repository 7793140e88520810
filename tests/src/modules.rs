//! The import graph of a crate's modules, read from its source files: which module uses which
//! (`crate::a::b`, `super::x`, grouped `use crate::{a, b::c}`), and the circles in it.
//!
//! A module is a file (`a.rs`, `a/mod.rs`, `a/b.rs`; `lib.rs` or `main.rs` is the root). An
//! import circle is two modules under the same parent each of which (or something below it)
//! uses the other (or something below it): the seam between them then means nothing. A parent
//! naming its children (`mod x; pub use x::Y;`) is how modules are made, not an import, and
//! neither is a child using its parent. What follows `#[cfg(test)]` in a file (its test
//! module) is left out: tests may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path below the crate root: `["commands", "run"]`; the root is empty.
pub type ModPath = Vec<String>;

/// Every module of the crate whose source directory is `src`, with the modules it uses.
pub fn graph(src: &Path) -> std::io::Result<BTreeMap<ModPath, BTreeSet<ModPath>>> {
    let mut files = Vec::new();
    collect(src, src, &mut files)?;
    let known: BTreeSet<ModPath> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut graph = BTreeMap::new();
    for (module, text) in &files {
        let used: Vec<ModPath> = references(module, text)
            .into_iter()
            .filter_map(|path| resolve(&known, &path))
            .filter(|target| target != module)
            .collect();
        // `lib.rs` and `main.rs` are both the root.
        graph
            .entry(module.clone())
            .or_insert_with(BTreeSet::new)
            .extend(used);
    }
    Ok(graph)
}

fn collect(src: &Path, dir: &Path, out: &mut Vec<(ModPath, String)>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::path);
    for entry in entries {
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(src) else {
            continue;
        };
        if path.is_dir() {
            // Binaries in `src/bin` are crates of their own.
            if rel != Path::new("bin") {
                collect(src, &path, out)?;
            }
            continue;
        }
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let mut module: ModPath = rel
            .with_extension("")
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            module.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            module.pop();
        }
        out.push((module, std::fs::read_to_string(&path)?));
    }
    Ok(())
}

/// A file's code before its test module: up to its first `#[cfg(test)]` at the start of a
/// line. One indented (inside a function, an impl) is still the file's code.
pub fn before_tests(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("#[cfg(test)]") {
            return text.get(..at).unwrap_or(text);
        }
        at += line.len();
    }
    text
}

/// The paths a module's code names through `crate::` and `super::`, made absolute.
fn references(module: &[String], text: &str) -> Vec<ModPath> {
    let code: String = before_tests(text)
        .lines()
        .map(|l| l.split("//").next().unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    for (start, _) in code.match_indices("crate::") {
        if preceded_by_ident(&code, start) {
            continue;
        }
        expand(
            code.get(start + "crate::".len()..).unwrap_or_default(),
            Vec::new(),
            &mut out,
        );
    }
    for (start, _) in code.match_indices("super::") {
        if preceded_by_ident(&code, start) {
            continue;
        }
        let mut base: ModPath = module.to_vec();
        let mut rest = code.get(start..).unwrap_or_default();
        while let Some(after) = rest.strip_prefix("super::") {
            base.pop();
            rest = after;
        }
        expand(rest, base, &mut out);
    }
    out
}

fn preceded_by_ident(code: &str, at: usize) -> bool {
    code.get(..at)
        .and_then(|before| before.chars().last())
        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':')
}

/// Reads a path after `crate::` or `super::` (`a::b::C`, or a group `{a::b, c::{d, e}}`) and
/// adds each full path, prefixed by `base`.
fn expand(text: &str, base: ModPath, out: &mut Vec<ModPath>) {
    let mut path = base;
    let mut rest = text;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            for item in split_group(group) {
                expand(item.trim(), path.clone(), out);
            }
            return;
        }
        let ident: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if ident.is_empty() {
            break;
        }
        rest = rest.get(ident.len()..).unwrap_or_default();
        path.push(ident);
        match rest.strip_prefix("::") {
            Some(after) => rest = after,
            None => break,
        }
    }
    out.push(path);
}

/// The items of a `{...}` group (up to its closing brace), split at top-level commas.
fn split_group(text: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(text.get(start..i).unwrap_or_default());
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(text.get(start..i).unwrap_or_default());
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// The longest prefix of `path` that is a module; `None` for `self`-like paths into nothing.
fn resolve(known: &BTreeSet<ModPath>, path: &[String]) -> Option<ModPath> {
    (0..=path.len())
        .rev()
        .map(|n| path.get(..n).unwrap_or_default().to_vec())
        .find(|prefix| known.contains(prefix))
}

/// The circles of the graph: for each parent, its children that use each other, each circle as
/// the list of its modules (`a -> b -> a`).
pub fn circles(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    // Edges between siblings: u uses v, lifted to the children of their deepest common
    // ancestor that hold each (none when one holds the other).
    let mut siblings: BTreeMap<ModPath, BTreeSet<ModPath>> = BTreeMap::new();
    for (user, used) in graph {
        for target in used {
            let common = user.iter().zip(target).take_while(|(a, b)| a == b).count();
            let (Some(a), Some(b)) = (user.get(..=common), target.get(..=common)) else {
                continue;
            };
            siblings.entry(a.to_vec()).or_default().insert(b.to_vec());
        }
    }
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for start in siblings.keys() {
        if let Some(circle) = circle_from(&siblings, start) {
            let key: BTreeSet<ModPath> = circle.iter().cloned().collect();
            if seen.insert(key) {
                found.push(circle);
            }
        }
    }
    found
}

/// A circle through `start`, found depth first.
fn circle_from(
    edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
    start: &ModPath,
) -> Option<Vec<ModPath>> {
    let mut stack = vec![(start.clone(), vec![start.clone()])];
    let mut visited = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in edges.get(&at).into_iter().flatten() {
            if next == start {
                let mut circle = path.clone();
                circle.push(start.clone());
                return Some(circle);
            }
            if visited.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

/// A module path as code names it.
pub fn name(path: &[String]) -> String {
    if path.is_empty() {
        "crate".into()
    } else {
        path.join("::")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    #[test]
    fn two_modules_that_use_each_other_are_a_circle() {
        let dir = tree(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            ("a.rs", "use crate::b::Thing;\n"),
            ("b/mod.rs", "mod c;\n"),
            ("b/c.rs", "pub fn f() { crate::a::g() }\n"),
        ]);
        let found = circles(&graph(dir.path()).unwrap());
        let names: Vec<Vec<String>> = found
            .iter()
            .map(|c| c.iter().map(|m| name(m)).collect())
            .collect();
        assert_eq!(names, vec![vec!["a", "b", "a"]]);
    }

    #[test]
    fn parents_children_groups_and_tests_are_no_circle() {
        let dir = tree(&[
            ("lib.rs", "mod a;\nmod b;\npub use a::X;\n"),
            ("a/mod.rs", "mod x;\npub use x::X;\nuse crate::{b::{self, Y}, a::x::Z};\n"),
            ("a/x.rs", "use super::super::b::Y;\nuse super::Q;\n"),
            (
                "b.rs",
                "// crate::a::X in a comment\npub struct Y;\n#[cfg(test)]\nmod tests { use crate::a::X; }\n",
            ),
        ]);
        let g = graph(dir.path()).unwrap();
        assert!(g[&vec!["a".to_owned()]].contains(&vec!["b".to_owned()]));
        assert!(circles(&g).is_empty(), "{:?}", circles(&g));
    }

    #[test]
    fn an_indented_test_attribute_does_not_hide_the_code_after_it() {
        let dir = tree(&[
            ("lib.rs", "mod a;\nmod b;\n"),
            (
                "a.rs",
                "fn f() {\n    #[cfg(test)]\n    let _ = 1;\n}\nuse crate::b::B;\n",
            ),
            ("b.rs", "use crate::a::A;\n"),
        ]);
        assert_eq!(circles(&graph(dir.path()).unwrap()).len(), 1);
    }

    #[test]
    fn a_circle_through_three_modules_is_found() {
        let dir = tree(&[
            ("lib.rs", "mod a; mod b; mod c;\n"),
            ("a.rs", "use crate::{b::B};\n"),
            ("b.rs", "fn f() -> crate::c::C { todo() }\n"),
            ("c.rs", "use super::a;\n"),
        ]);
        assert_eq!(circles(&graph(dir.path()).unwrap()).len(), 1);
    }
}
