#!/usr/bin/env bash
# `make link-test`: the two ways a node links cuzk beside the real filecoin-ffi, tested.
#
#   scripts/link-test.sh <cargo target dir> <work dir>
#
# Needs `make go-lib` (go/lib: cuzk.pc, cuzk-static.pc) and the fixtures. Builds filecoin-ffi
# v1.36.1 once (scripts/build-filecoin-ffi.sh, cached), then:
#  1. symbols: cargo's libcuzk.a and libfilcrypto.a define many of the same global symbols
#     (the Rust runtime, blst); the libcuzk.a cgo links (go/lib, made by install-lib.sh)
#     defines none of them;
#  2. go/internal/linkcheck's test binary, linked with libfilcrypto.a and cuzk's shared library,
#     then with cuzk's static library (-tags cuzk_static): each runs both libraries' code;
#  3. a node's view: `install-lib.sh` into a prefix, a copy of the Go module alone (no
#     repository around it), a consumer module requiring it, built through pkg-config with the
#     shared and the static library; both binaries run.
set -euo pipefail
cd "$(dirname "$0")/.."
target="$1" work="$2"
repo="$(pwd)"
say() { echo "link-test: $*" >&2; }
fail() { say "FAIL: $*"; exit 1; }
export PKG_CONFIG_PATH="$repo/go/lib${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export GOEXPERIMENT=cgocheck2
rm -rf "$work" && mkdir -p "$work"

ffi="$(scripts/build-filecoin-ffi.sh)"
say "filecoin-ffi: $ffi"

# 1. Symbols in common.
globals() { # the defined global (or weak) symbols of an archive or object
  readelf -sW "$1" | awk 'NF >= 8 && ($5 == "GLOBAL" || $5 == "WEAK") && $7 != "UND" {print $8}' | sort -u
}
globals "$ffi/libfilcrypto.a" >"$work/filcrypto.syms"
globals "$target/release/libcuzk.a" >"$work/cargo-cuzk.syms"
globals go/lib/libcuzk.a >"$work/cuzk.syms"
raw_common=$(comm -12 "$work/filcrypto.syms" "$work/cargo-cuzk.syms" | wc -l)
raw_blst=$(comm -12 "$work/filcrypto.syms" "$work/cargo-cuzk.syms" | grep -c '^blst_' || true)
say "cargo's libcuzk.a and libfilcrypto.a define $raw_common global symbols in common ($raw_blst blst_*)"
common=$(comm -12 "$work/filcrypto.syms" "$work/cuzk.syms")
[ -z "$common" ] || fail "go/lib/libcuzk.a and libfilcrypto.a define the same symbols: $(echo "$common" | head -5 | tr '\n' ' ')"
grep -qv '^cuzk_' "$work/cuzk.syms" && fail "go/lib/libcuzk.a defines non-cuzk globals"
# A COMDAT group in it would be deduplicated by name against libfilcrypto.a's in the final link
# while the group's symbols are local on our side (the personality-slot crash, docs/linking.md).
groups="$(readelf -gW go/lib/libcuzk.a)"
grep -q "There are no section groups" <<<"$groups" ||
  fail "go/lib/libcuzk.a has section groups: $(grep -m3 'COMDAT group' <<<"$groups" | tr '\n' ' ')"
say "go/lib/libcuzk.a: $(wc -l <"$work/cuzk.syms") global symbols, all cuzk_*, none in libfilcrypto.a"

# 2. The linkcheck binary, shared then static.
ln -sfn "$ffi" go/internal/linkcheck/filecoin-ffi
for mode in shared static; do
  tags=nofvm
  [ "$mode" = static ] && tags=nofvm,cuzk_static
  bin="$work/linkcheck-$mode"
  (cd go/internal/linkcheck && go vet -tags "$tags" ./... && go test -c -tags "$tags" -o "$bin" .)
  needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  case "$mode" in
    shared) [[ " $needed" == *" libcuzk.so."* ]] || fail "$bin does not need libcuzk.so.N: $needed" ;;
    static) [[ " $needed" != *"libcuzk"* ]] || fail "$bin needs a shared libcuzk: $needed" ;;
  esac
  say "$mode: $(basename "$bin") needs: $needed"
  # With Rust backtraces on (as operators often set): filecoin-proofs captures one when it
  # builds an error, and that walks the unwind tables of both libraries' objects; a static
  # build whose libcuzk.a kept its section groups crashed there (docs/linking.md).
  (cd go/internal/linkcheck && RUST_BACKTRACE=1 "$bin" -test.count=1 -test.v) >"$work/linkcheck-$mode.log" 2>&1 \
    || { tail -30 "$work/linkcheck-$mode.log"; fail "linkcheck-$mode"; }
  grep -E '^\s+linkcheck_test.go:[0-9]+: (filcrypto|cuzk):' "$work/linkcheck-$mode.log" | sed "s/^ */link-test: $mode: /" >&2
  [ "$(grep -c '^--- PASS' "$work/linkcheck-$mode.log")" = 2 ] || fail "linkcheck-$mode: not both tests passed"
done

# 3. As a node: an installed prefix and the Go module on its own.
prefix="$work/prefix"
scripts/install-lib.sh "$target/release" "$prefix/lib" "$prefix/include" "$prefix/lib/pkgconfig"
mkdir -p "$work/gomod"
(cd go && tar --exclude=./lib --exclude=./internal/linkcheck -cf - .) | (cd "$work/gomod" && tar -xf -)
mkdir -p "$work/consumer"
cp go/go.sum "$work/consumer/go.sum"
cat >"$work/consumer/go.mod" <<MOD
module example.com/node

go 1.25.0

require github.com/cuzk-dev/cuzk/go v0.0.0-00010101000000-000000000000

replace github.com/cuzk-dev/cuzk/go => ../gomod
MOD
cat >"$work/consumer/main.go" <<'GO'
package main

import (
	"fmt"
	"os"

	"github.com/cuzk-dev/cuzk/go/cuzk"
)

func main() {
	e, err := cuzk.Open(cuzk.Config{TOML: "backend = \"cpu\""})
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	defer e.Close()
	s, err := e.Summary()
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Printf("cuzk engine: backend %s\n", s.Backend)
}
GO
for mode in shared static; do
  tags=""
  [ "$mode" = static ] && tags=cuzk_static
  (cd "$work/consumer" && PKG_CONFIG_PATH="$prefix/lib/pkgconfig" go build -mod=mod -tags "$tags" -o "$work/node-$mode" .)
  out=$(env -u LD_LIBRARY_PATH "$work/node-$mode")
  [ "$out" = "cuzk engine: backend cpu" ] || fail "node-$mode: $out"
  say "$mode: a module outside the repository, built through pkg-config: $out"
done
runpath=$(readelf -d "$work/node-shared" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[ "$runpath" = "$prefix/lib" ] || fail "node-shared: RUNPATH '$runpath'"
say "ok"
