//! Build script: generates the C header `include/cuzk.h` from `src/ffi/` with cbindgen.
//!
//! The header is always written to `$OUT_DIR/cuzk.h`; outside CI it is also copied to
//! `include/cuzk.h` so developers commit it. In CI (`CI` set) the committed copy is left alone
//! and `tests/header.rs` fails if it differs from the generated one.

use std::path::{Path, PathBuf};

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let ffi_dir = crate_dir.join("src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-env-changed=CI");

    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml is readable and valid");
    let mut builder = cbindgen::Builder::new().with_config(config);
    let mut sources: Vec<PathBuf> = std::fs::read_dir(&ffi_dir)
        .expect("src/ffi exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    sources.sort();
    for src in &sources {
        println!("cargo:rerun-if-changed={}", src.display());
        builder = builder.with_src(src);
    }
    let generated = out_dir.join("cuzk.h");
    builder
        .generate()
        .expect("cbindgen could not generate the header")
        .write_to_file(&generated);

    if std::env::var_os("CI").is_none() {
        copy_if_changed(&generated, &crate_dir.join("include/cuzk.h"));
    }
}

fn copy_if_changed(from: &Path, to: &Path) {
    let new = std::fs::read(from).expect("generated header is readable");
    if std::fs::read(to).ok().as_deref() != Some(new.as_slice()) {
        std::fs::create_dir_all(to.parent().expect("has a parent")).expect("include/ is creatable");
        std::fs::write(to, new).expect("include/cuzk.h is writable");
    }
}
