//! The committed C headers must be exactly what cbindgen generates from the current source:
//! `include/cuzk.h` (for C) and `go/cuzk/cuzk.h` (the Go module's copy, which cgo includes).

fn check(rel: &str) {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/cuzk.h"));
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert!(
        committed == generated,
        "{rel} is stale: run `make header` to regenerate it from src/ffi, then commit it"
    );
    assert!(generated.contains("uint32_t cuzk_abi_version(void);"));
}

#[test]
fn committed_header_matches_generated_header() {
    check("include/cuzk.h");
}

#[test]
fn go_module_header_matches_generated_header() {
    check("go/cuzk/cuzk.h");
}

/// Every function is declared once (cbindgen fed the same source twice declared each twice).
#[test]
fn every_function_is_declared_once() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/cuzk.h"));
    let mut seen = std::collections::BTreeSet::new();
    for line in generated.lines().filter(|l| !l.starts_with("//")) {
        if let Some(start) = line.find(" cuzk_") {
            if let Some(len) = line[start + 1..].find('(') {
                let name = &line[start + 1..start + 1 + len];
                assert!(seen.insert(name.to_string()), "{name} is declared twice");
            }
        }
    }
    assert!(seen.len() >= 40, "only {} functions found", seen.len());
}
