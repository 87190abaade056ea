#!/usr/bin/env bash
# `make interop-test`: the real filecoin-ffi (v1.36.1, built once by build-filecoin-ffi.sh and
# cached) and cuzk's go/ffi in one Go test binary (go/internal/interop, a module of its own),
# under GOEXPERIMENT=cgocheck2. Needs `make go-lib` and the fixtures (parameters and the
# aggregation SRS in FIL_PROOFS_PARAMETER_CACHE).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
export PKG_CONFIG_PATH="$repo/go/lib${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export GOEXPERIMENT=cgocheck2
ffi="$(scripts/build-filecoin-ffi.sh)"
ln -sfn "$ffi" go/internal/interop/filecoin-ffi
cd go/internal/interop
go vet -tags nofvm ./...
log="${INTEROP_LOG:-${TMPDIR:-/tmp}/cuzk-interop.log}"
start=$(date +%s)
if ! go test -tags nofvm -count=1 -timeout 60m -v . >"$log" 2>&1; then
  grep -E '^(=== RUN|--- |\s+interop_test.go|FAIL|ok|panic)' "$log" | tail -60
  echo "interop-test: FAILED (full log: $log)" >&2
  exit 1
fi
# The summary: each test's verdict and what it checked.
grep -E '^(--- |\s+interop_test.go:[0-9]+: (seal proof|PoRep|WindowPoSt|WinningPoSt|SnapDeals))' "$log"
echo "interop-test: passed in $(( $(date +%s) - start )) s (full log: $log)"
