#!/usr/bin/env bash
# Installs what a program needs to link cuzk, from a cargo release directory:
#
#   <libdir>/libcuzk.so.<major>.<minor>.<patch>   the shared library (soname libcuzk.so.<major>)
#   <libdir>/libcuzk.so.<major>, libcuzk.so       links to it
#   <libdir>/libcuzk.a                            the static library, isolated (see below)
#   <includedir>/cuzk.h
#   <pcdir>/cuzk.pc, cuzk-static.pc               pkg-config files (cgo: `#cgo pkg-config: cuzk`)
#
#   scripts/install-lib.sh [--dev] <cargo release dir> <libdir> <includedir> <pcdir>
#
# --dev (`make go-lib`): the in-repository flow. The header is not copied (<includedir> is the
# repository's include/). The libraries are copies all the same, taken when they changed: the
# feature builds share cargo's target directory, whose release/ files are whichever build ran
# last, and what go/lib links must stay what it was made from.
# DESTDIR, if set, is prepended to every path written but not to the paths inside the .pc files.
#
# The static library: cargo's libcuzk.a defines, besides cuzk_*, every symbol of the Rust
# runtime and of blst it carries; filecoin-ffi's libfilcrypto.a defines the same names (from
# its own, possibly different, versions), and a program linking both would get one copy of each,
# chosen silently by link order. So the installed libcuzk.a is cargo's archive linked into one
# relocatable object (ld -r) in which every symbol but cuzk_* is made local (objcopy), the way
# the shared library hides them: it links beside libfilcrypto.a with no symbol in common, each
# library using its own runtime and blst. (The LLVM bitcode sections rustc embeds are dropped:
# they only serve cross-language LTO, and an older LLVM's binutils plugin cannot read them.)
# The partial link dissolves COMDAT groups (--force-group-allocation): left in, the group
# `DW.ref.rust_eh_personality`, which libfilcrypto.a's objects carry too, was deduplicated by
# name in the final link while its symbol was local on our side, so one library's unwind tables
# pointed at a discarded personality slot and the first Rust backtrace through them crashed
# (docs/linking.md, "Section groups").
set -euo pipefail
dev=0
if [ "${1:-}" = "--dev" ]; then dev=1; shift; fi
[ $# -eq 4 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
release="$1" libdir="$2" includedir="$3" pcdir="$4"
# This script's own path, taken before the cd: the archive is remade when the recipe is newer.
recipe="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$0")/.."
version="$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)"
major="${version%%.*}"
# `cargo rustc --release --lib --crate-type staticlib -- --print native-static-libs` on
# x86_64-unknown-linux-gnu (the C libraries the Rust runtime needs when linked statically).
native_static_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"
dest="${DESTDIR:-}"
say() { echo "install-lib: $*" >&2; }

for f in libcuzk.so libcuzk.a; do
  [ -f "$release/$f" ] || { say "no $release/$f: run cargo build --release first"; exit 1; }
done
soname="$(readelf -d "$release/libcuzk.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
[ "$soname" = "libcuzk.so.$major" ] || { say "$release/libcuzk.so has soname '$soname', not libcuzk.so.$major"; exit 1; }

mkdir -p "$dest$libdir" "$dest$pcdir"
if [ "$dev" = 1 ]; then
  so="$dest$libdir/libcuzk.so.$major"
  if [ -L "$so" ] || ! cmp -s "$release/libcuzk.so" "$so"; then
    rm -f "$so"
    install -m 0755 "$release/libcuzk.so" "$so"
  fi
else
  mkdir -p "$dest$includedir"
  install -m 0755 "$release/libcuzk.so" "$dest$libdir/libcuzk.so.$version"
  ln -sfn "libcuzk.so.$version" "$dest$libdir/libcuzk.so.$major"
  install -m 0644 include/cuzk.h "$dest$includedir/cuzk.h"
fi
ln -sfn "libcuzk.so.$major" "$dest$libdir/libcuzk.so"

# The isolated static library, rebuilt unless it was made by this recipe from this very archive
# (cargo's release/libcuzk.a is a link to the build's own file: its device, inode, size and
# time name that build, whichever feature set ran last; a time comparison could not tell a
# switch back to an older build). Recorded beside it in --dev, always rebuilt by an install.
archive="$dest$libdir/libcuzk.a"
stamp="$dest$libdir/.libcuzk.a.source"
source_id="$(stat -L -c '%d %i %s %Y' "$release/libcuzk.a") $(stat -c '%Y' "$recipe")"
if [ "$dev" = 0 ] || [ -L "$archive" ] || [ ! -f "$archive" ] ||
  [ "$(cat "$stamp" 2>/dev/null)" != "$source_id" ]; then
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  ld -r --force-group-allocation --whole-archive "$release/libcuzk.a" -o "$tmp/all.o"
  objcopy --wildcard --keep-global-symbol='cuzk_*' \
    --remove-section=.llvmbc --remove-section=.llvmcmd "$tmp/all.o" "$tmp/cuzk.o"
  rm -f "$tmp/libcuzk.a"
  ar rcs "$tmp/libcuzk.a" "$tmp/cuzk.o"
  rm -f "$archive"
  install -m 0644 "$tmp/libcuzk.a" "$archive"
  say "$archive: $(du -h "$archive" | cut -f1), only cuzk_* global"
  if [ "$dev" = 1 ]; then echo "$source_id" >"$stamp"; fi
fi

pc() { # name description libs
  cat >"$dest$pcdir/$1.pc" <<PC
libdir=$libdir
includedir=$includedir

Name: $1
Description: $2
Version: $version
Libs: $3
Cflags: -I\${includedir}
PC
}
pc cuzk "cuzk, an embedded Groth16 prover for Filecoin (shared library)" \
  "-L\${libdir} -lcuzk -Wl,-rpath,\${libdir}"
pc cuzk-static "cuzk, an embedded Groth16 prover for Filecoin (static library)" \
  "\${libdir}/libcuzk.a $native_static_libs"
say "$dest$libdir: libcuzk.so.$major$([ "$dev" = 1 ] || echo ", libcuzk.so.$version"), libcuzk.a; $dest$pcdir: cuzk.pc, cuzk-static.pc"
