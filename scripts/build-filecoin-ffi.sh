#!/usr/bin/env bash
# Builds the vendored filecoin-ffi (../shared/vendor/filecoin-ffi, v1.36.1) from source, CPU
# only and without the FVM, into $CUZK_CACHE/filecoin-ffi-<version>, once: the interop tests
# link it and cuzk into one Go binary. Idempotent: a finished build is reused (stamp file).
#
#   scripts/build-filecoin-ffi.sh   prints the directory of the built filecoin-ffi Go module
set -euo pipefail
# Standard output carries the directory and nothing else (callers capture it): everything the
# build and the package install print goes to standard error. On a fresh machine apt-get writes
# its progress to standard output, which once ended up in the captured path.
exec 3>&1 1>&2
cd "$(dirname "$0")/.."
# The version the tests are written against; the vendored source must be this one.
version=v1.36.1
cache="${CUZK_CACHE:-$HOME/.cache/cuzk}"
out="$cache/filecoin-ffi-$version"
stamp="$out/.cuzk-built"
say() { echo "build-filecoin-ffi: $*" >&2; }

if [ -f "$stamp" ]; then
  echo "$out" >&3
  exit 0
fi
# The vendored source: FILECOIN_FFI_SOURCE, else ../shared/vendor beside the checkout, else the
# workplace's /work/shared/vendor (a CI clone may live anywhere).
source_dir=""
for candidate in "${FILECOIN_FFI_SOURCE:-}" "$(cd .. && pwd)/shared/vendor/filecoin-ffi" \
  /work/shared/vendor/filecoin-ffi; do
  if [ -n "$candidate" ] && [ -f "$candidate/version.json" ]; then
    source_dir="$candidate"
    break
  fi
done
[ -n "$source_dir" ] || { say "no filecoin-ffi source (set FILECOIN_FFI_SOURCE)"; exit 1; }
grep -q "\"$version\"" "$source_dir/version.json" ||
  { say "$source_dir is not filecoin-ffi $version"; exit 1; }

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
dpkg -s libhwloc-dev >/dev/null 2>&1 || missing+=(libhwloc-dev)
command -v jq >/dev/null || missing+=(jq)
command -v pkg-config >/dev/null || missing+=(pkg-config)
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

say "building filecoin-ffi $version from source into $out (about 4 minutes on the 2-core CI machine)"
# The Rust build directory survives a failed attempt, so a rerun resumes it.
mkdir -p "$out"
cp -a "$source_dir/." "$out/"
chmod -R u+w "$out"
(
  cd "$out"
  unset CARGO_TARGET_DIR
  # install-filcrypto directly: the Makefile runs `go clean -cache`. The pinned toolchain in
  # rust/rust-toolchain.toml cannot be downloaded here, so the stable one builds it.
  FFI_BUILD_FROM_SOURCE=1 FFI_USE_GPU=0 FFI_DISABLE_FVM=1 FFI_PORTABLE=1 \
    FFI_GIT_COMMIT="${version}" RUSTUP_TOOLCHAIN=stable \
    ./install-filcrypto >&2
)
for f in libfilcrypto.a filcrypto.h filcrypto.pc; do
  [ -f "$out/$f" ] || { say "missing $f after the build"; exit 1; }
done
# Only the library, header and Go sources are used: drop the 2.5 GB Rust build directory.
rm -rf "$out/rust/target"
touch "$stamp"
echo "$out" >&3
