//! The committed C header must be exactly what cbindgen generates from the current source.

#[test]
fn committed_header_matches_generated_header() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/cuzk.h"));
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/cuzk.h");
    let committed = std::fs::read_to_string(path).expect("include/cuzk.h is committed");
    assert!(
        committed == generated,
        "include/cuzk.h is stale: build outside CI (`cargo build`) to regenerate it, then commit it"
    );
    assert!(generated.contains("uint32_t cuzk_abi_version(void);"));
}
