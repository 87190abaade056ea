#!/usr/bin/env bash
# GPU checks and benchmarks for a machine with an NVIDIA GPU and a driver (no cargo, no network
# needed). Build the bundle here with `make gpu-bundle`, carry gpu-bundle/ there and run:
#
#   gpu-bundle/gpu-check.sh [out-dir]
#
# It generates its own 2 KiB parameters and test data, checks GPU proofs against CPU proofs
# byte for byte (random circuits 2^10..2^22, every 2 KiB kind, device errors), runs the `gpu`
# benchmark group and writes everything to one log: $OUT/gpu-check.log (default ./gpu-out).
# Budget: about 8 minutes on a 16-core host with an H200.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cuzk="${CUZK_BIN:-$here/cuzk}"
out="${1:-${OUT:-$PWD/gpu-out}}"
mkdir -p "$out"
log="$out/gpu-check.log"
export CUZK_CACHE="${CUZK_CACHE:-$out/cache}"
export FIL_PROOFS_PARAMETER_CACHE="$CUZK_CACHE/params"
export RUST_LOG="${RUST_LOG:-info,cuzk::gpu=debug}"
mkdir -p "$FIL_PROOFS_PARAMETER_CACHE"
status=0
step() {
  echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$log"
  "$@" >>"$log" 2>&1 || { echo "=== FAILED: $*" | tee -a "$log"; status=1; }
}
: >"$log"
step nvidia-smi
step "$cuzk" gpu devices
step "$cuzk" params generate all-2k
step "$cuzk" testdata generate --dir "$CUZK_CACHE/testdata-2k"
step timeout 240 "$cuzk" gpu check --max-lg "${MAX_LG:-22}" --testdata "$CUZK_CACHE/testdata-2k"
step timeout 200 "$cuzk" gpu bench --max-lg "${BENCH_MAX_LG:-26}" --testdata "$CUZK_CACHE/testdata-2k"
grep -E "^(CHECK|BENCH)" "$log" | tee "$out/summary.txt"
echo "gpu-check: $( [ $status -eq 0 ] && echo ok || echo FAILED ) (log: $log)"
exit $status
