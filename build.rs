//! Build script: generates the C header `include/cuzk.h` from `src/ffi/` with cbindgen, and
//! gives the shared library its soname.
//!
//! The header is always written to `$OUT_DIR/cuzk.h`. Only `make header` (which sets
//! `CUZK_WRITE_HEADER=1`) copies it to `include/cuzk.h` and to `go/cuzk/cuzk.h` (the Go
//! module's own copy, which cgo includes, so the module builds as a dependency without this
//! repository around it). No other build touches the committed copies, so `tests/header.rs`
//! fails, locally as in CI, whenever either differs from what the source generates.
//!
//! The cdylib is linked with `-soname libcuzk.so.<major>` (the crate's major version): programs
//! linked against it record that name, and `make install` installs
//! `libcuzk.so.<major>.<minor>.<patch>` with the `libcuzk.so.<major>` and `libcuzk.so` links.

use std::path::{Path, PathBuf};

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let ffi_dir = crate_dir.join("src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-env-changed=CUZK_WRITE_HEADER");
    println!("cargo:rerun-if-changed=include/cuzk.h");
    println!("cargo:rerun-if-changed=go/cuzk/cuzk.h");

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
    }
    // cbindgen follows `pub mod` declarations from mod.rs into every file of src/ffi; handing it
    // the files too declared every function twice in the header.
    builder = builder.with_src(ffi_dir.join("mod.rs"));
    let generated = out_dir.join("cuzk.h");
    builder
        .generate()
        .expect("cbindgen could not generate the header")
        .write_to_file(&generated);

    if std::env::var_os("CUZK_WRITE_HEADER").is_some_and(|v| v == "1") {
        copy_if_changed(&generated, &crate_dir.join("include/cuzk.h"));
        copy_if_changed(&generated, &crate_dir.join("go/cuzk/cuzk.h"));
    }

    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("set by cargo");
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcuzk.so.{major}");
    }

    if std::env::var_os("CARGO_FEATURE_CUDA").is_some() {
        build_cuda(&crate_dir);
    }
}

/// Compiles `cuda/*.cu` with nvcc for sm_80 and sm_90 (plus compute_90 PTX for newer GPUs)
/// against sppark's headers, and links the result with the static CUDA runtime.
fn build_cuda(crate_dir: &Path) {
    let sppark = std::env::var("DEP_SPPARK_ROOT").expect("the sppark crate exports its root");
    let blst = std::env::var("DEP_BLST_C_SRC").expect("the blst crate exports its C sources");
    println!("cargo:rerun-if-changed=cuda");
    println!("cargo:rerun-if-env-changed=CUZK_NVCC_CCBIN");

    let mut nvcc = cc::Build::new();
    nvcc.cuda(true)
        .debug(false)
        .opt_level(3)
        .include(&sppark)
        .include(&blst)
        .define("FEATURE_BLS12_381", None)
        .define("TAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE", None)
        .flag("-std=c++17")
        .flag("-Xcompiler")
        .flag("-Wno-unused-function")
        // cuda/groth16.cu views a Rust-owned stream through sppark's stream_t layout.
        .flag("-Xcompiler")
        .flag("-fno-strict-aliasing")
        .flag("-gencode")
        .flag("arch=compute_80,code=sm_80")
        .flag("-gencode")
        .flag("arch=compute_90,code=sm_90")
        .flag("-gencode")
        .flag("arch=compute_90,code=compute_90");
    // blst's assembly exports the ADX (mulx) variants when built for a CPU with ADX; sppark's
    // host code must call the same ones.
    if blst_uses_adx() {
        nvcc.define("__ADX__", None);
    }
    // With supraseal-c2 linked too, its translation unit defines sppark's one non-template
    // kernel (the MSM digit sort); ours must only declare it.
    if std::env::var_os("CARGO_FEATURE_SUPRASEAL").is_some() {
        nvcc.define("__MSM_SORT_DONT_IMPLEMENT__", None);
    }
    // nvcc 11.8 refuses gcc newer than 11: use the compiler named by CUZK_NVCC_CCBIN, else
    // g++-11 when installed (Debian's nvidia-cuda-toolkit pulls it in).
    let ccbin = std::env::var("CUZK_NVCC_CCBIN").ok().or_else(|| {
        let found = std::process::Command::new("g++-11")
            .arg("--version")
            .output();
        found
            .is_ok_and(|o| o.status.success())
            .then(|| "g++-11".to_string())
    });
    if let Some(ccbin) = ccbin {
        nvcc.ccbin(false).flag("-ccbin").flag(&ccbin);
    }
    nvcc.file(crate_dir.join("cuda/groth16.cu"))
        .compile("cuzk_cuda");
}

/// Whether blst was built with ADX instructions (its build script decides from the host CPU
/// unless the `portable` feature is on, which cuzk does not enable).
fn blst_uses_adx() -> bool {
    let target_x86 = std::env::var("CARGO_CFG_TARGET_ARCH").is_ok_and(|a| a == "x86_64");
    #[cfg(target_arch = "x86_64")]
    let host_adx = std::is_x86_feature_detected!("adx");
    #[cfg(not(target_arch = "x86_64"))]
    let host_adx = false;
    target_x86 && host_adx
}

fn copy_if_changed(from: &Path, to: &Path) {
    let new = std::fs::read(from).expect("generated header is readable");
    if std::fs::read(to).ok().as_deref() != Some(new.as_slice()) {
        let dir = to.parent().expect("has a parent");
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        std::fs::write(to, new).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    }
}
