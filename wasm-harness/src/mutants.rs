//! `rollfs-sim mutants`: every `mutant-*` feature of rollfs-core must be caught.
//!
//! The list is read from core/Cargo.toml at run time, so a mutant added to the core is
//! picked up without touching the harness. Each mutant guest is built once (cached under
//! the build's OUT_DIR) and explored with a fixed budget until the first violation.

use crate::explore::{explore, Explorer, Options, Source};
use crate::guest::{build_guest, GuestModule};
use std::path::Path;
use std::sync::Arc;

/// The `mutant-*` features declared in core/Cargo.toml, in file order.
pub fn list() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/Cargo.toml");
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut in_features = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('[') {
            in_features = l == "[features]";
            continue;
        }
        if in_features {
            if let Some((name, _)) = l.split_once('=') {
                let name = name.trim();
                if name.starts_with("mutant-") {
                    out.push(name.to_string());
                }
            }
        }
    }
    out
}

/// Outcome for one mutant.
pub struct MutantResult {
    pub name: String,
    pub caught: bool,
    pub note: String,
    pub states: u64,
}

/// Builds and explores one mutant. Sources are tried in order: regression workloads
/// (cheap, targeted), then ACE and random cases, until a violation or the budget.
pub fn check(name: &str, opts: &Options, cases_per_source: u64) -> MutantResult {
    let built = build_guest(&[format!("rollfs-core/{name}")]).and_then(|p| GuestModule::load(&p));
    let module = match built {
        Ok(m) => Arc::new(m),
        Err(e) => {
            return MutantResult { name: name.into(), caught: false, note: format!("build failed: {e}"), states: 0 }
        }
    };
    let ex = match Explorer::new(module, opts.clone()) {
        Ok(ex) => ex,
        // A mutant that breaks format is caught by definition (nothing works).
        Err(e) => {
            return MutantResult { name: name.into(), caught: true, note: format!("format fails: {e}"), states: 0 }
        }
    };
    if name.starts_with("mutant-eio-") {
        return check_eio(name, &ex);
    }
    let mut states = 0;
    for src in [Source::Regression, Source::Full, Source::Ace, Source::Random] {
        let n = if src == Source::Regression { u64::MAX } else { cases_per_source };
        let s = explore(&ex, src, Some(n), None, true, &mut |_| {});
        states += s.states;
        if let Some(v) = s.violations.first() {
            let state = v.state.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
            return MutantResult {
                name: name.into(),
                caught: true,
                note: format!(
                    "{} at {} state {}: {}",
                    v.kind,
                    v.case,
                    state,
                    v.detail.chars().take(160).collect::<String>()
                ),
                states,
            };
        }
    }
    MutantResult { name: name.into(), caught: false, note: "no violation found".into(), states }
}

/// A `mutant-eio-*` mutant breaks what a failed I/O must do, which crash states do not
/// show: the I/O-error sweep (a sample of the standard workloads' points) must.
fn check_eio(name: &str, ex: &Explorer) -> MutantResult {
    let cases = crate::eio::standard_cases(4, 4);
    let sum = crate::eio::sweep(ex, &cases, Some(12), false, &mut |_| {});
    let caught = sum
        .violations
        .first()
        .map(|v| format!("eio sweep: {} in {}: {}", v.kind, v.case, v.detail.chars().take(160).collect::<String>()));
    MutantResult {
        name: name.into(),
        caught: caught.is_some(),
        note: caught.unwrap_or_else(|| format!("no violation in {} I/O-error points", sum.points)),
        states: sum.points,
    }
}
