//! The module map in docs/DESIGN.md (*Crate layout and module map*) and in lib.rs's header
//! name every module in core/src, and nothing that is not there: a new contributor finds
//! where each mechanism lives from either.

use std::collections::BTreeSet;
use std::path::Path;

fn modules_in_tree() -> BTreeSet<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter_map(|n| n.strip_suffix(".rs").map(str::to_string))
        .filter(|n| n != "lib")
        .collect()
}

/// The first column of a markdown table whose header is `| module | owns |`, backticks and
/// link brackets removed.
fn table_modules(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim_start_matches("//!").trim();
        if line.starts_with("| module | owns |") {
            inside = true;
            continue;
        }
        if inside {
            if !line.starts_with('|') {
                break;
            }
            let cell = line.split('|').nth(1).unwrap().trim();
            let name: String = cell.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && !cell.starts_with("---") {
                out.insert(name);
            }
        }
    }
    out
}

#[test]
fn design_and_lib_module_maps_match_core_src() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tree = modules_in_tree();
    let design = table_modules(&std::fs::read_to_string(root.join("../docs/DESIGN.md")).unwrap());
    let lib = table_modules(&std::fs::read_to_string(root.join("src/lib.rs")).unwrap());
    assert!(tree.len() > 20, "core/src read: {tree:?}");
    for (name, map) in [("docs/DESIGN.md", &design), ("core/src/lib.rs", &lib)] {
        let missing: Vec<_> = tree.difference(map).collect();
        let stale: Vec<_> = map.difference(&tree).collect();
        assert!(
            missing.is_empty() && stale.is_empty(),
            "{name}'s module map: missing {missing:?}, naming no file {stale:?}"
        );
    }
}
