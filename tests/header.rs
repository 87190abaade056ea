//! The committed C headers must be exactly what cbindgen generates from the current source:
//! `include/cuzk.h` (for C) and `go/cuzk/cuzk.h` (the Go module's copy, which cgo includes).

fn check(rel: &str) {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/cuzk.h"));
    let path = format!("{}/{rel}", env!("CARGO_MANIFEST_DIR"));
    let committed = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert!(
        committed == generated,
        "{rel} is stale: build outside CI (`cargo build`) to regenerate it, then commit it"
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
