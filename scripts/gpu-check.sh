#!/usr/bin/env bash
# GPU checks and benchmarks for a machine with an NVIDIA GPU and a driver (no cargo, no network
# needed). Build the bundle here with `make gpu-bundle`, carry gpu-bundle/ there and run:
#
#   gpu-bundle/gpu-check.sh [out-dir]
#
# It generates its own 2 KiB parameters and test data, checks GPU proofs against CPU proofs
# byte for byte (random circuits 2^10..2^22, every 2 KiB kind, device errors), runs the `gpu`
# benchmark group, then injects a sticky device error (CPU fallback must take over), and
# writes everything to one log: $OUT/gpu-check.log (default ./gpu-out).
# Budget: about 8 minutes on a 16-core host with an H200.
#
# CI runs it too, on a `cuzk` built with the `gpu-emulator` feature instead of `cuda` (`make
# emu-test`: the same checks over a host emulation of the device, smaller sizes), so the
# script, the CLI and the checks are known to work before a GPU session spends its minutes.
# Sizes and time caps: MAX_LG, BENCH_MAX_LG, STREAM_JOBS, CHECK_TIMEOUT, BENCH_TIMEOUT,
# STICKY_TIMEOUT, and BUDGET: seconds for the whole script (default 540, inside a 10-minute
# device call), by which each capped step is cut short if earlier ones ran long, keeping a
# minimum for the steps after it.
#
# Nothing but the log and the summary goes to the out-dir (a device call brings back a few
# small files): parameters and test data live in $CUZK_CACHE (default /tmp/cuzk-gpu-check).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cuzk="${CUZK_BIN:-$here/cuzk}"
out="${1:-${OUT:-$PWD/gpu-out}}"
mkdir -p "$out"
log="$out/gpu-check.log"
export CUZK_CACHE="${CUZK_CACHE:-${TMPDIR:-/tmp}/cuzk-gpu-check}"
export FIL_PROOFS_PARAMETER_CACHE="$CUZK_CACHE/params"
export RUST_LOG="${RUST_LOG:-info,cuzk::gpu=debug}"
mkdir -p "$FIL_PROOFS_PARAMETER_CACHE"
status=0
deadline=$(($(date +%s) + ${BUDGET:-540}))
# cap SECONDS RESERVE: SECONDS, or less so that RESERVE seconds are left for later steps
# when this one runs to its cap (at least 30).
cap() {
  local left=$((deadline - $(date +%s) - $2))
  if [ "$left" -lt "$1" ]; then echo $((left > 30 ? left : 30)); else echo "$1"; fi
}
step() {
  echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$log"
  "$@" >>"$log" 2>&1 || { echo "=== FAILED: $*" | tee -a "$log"; status=1; }
}
: >"$log"
# The binary was built on another system; where this one's libraries are too old for it
# (GLIBC_2.34 not found, say), run it through the loader and libraries packed beside it.
if [ -x "$here/cuzk-portable" ] && [ -z "${CUZK_BIN:-}" ] && ! why="$("$cuzk" --help 2>&1 >/dev/null)"; then
  echo "=== cuzk does not start with this system's libraries: $why" | tee -a "$log"
  cuzk="$here/cuzk-portable"
fi
echo "=== cuzk: $cuzk" | tee -a "$log"
# nvidia-smi is absent where the script checks a build with the `gpu-emulator` feature (CI).
if command -v nvidia-smi >/dev/null; then step nvidia-smi; fi
step "$cuzk" gpu devices
step "$cuzk" params generate all-2k
step "$cuzk" testdata generate --dir "$CUZK_CACHE/testdata-2k"
step timeout "$(cap "${CHECK_TIMEOUT:-240}" 180)" "$cuzk" gpu check --max-lg "${MAX_LG:-22}" --testdata "$CUZK_CACHE/testdata-2k"
step timeout "$(cap "${BENCH_TIMEOUT:-200}" 60)" "$cuzk" gpu bench --max-lg "${BENCH_MAX_LG:-26}" --stream-jobs "${STREAM_JOBS:-8}" \
  --testdata "$CUZK_CACHE/testdata-2k"
# Last, in a process of its own: it breaks the device's context for the rest of that process.
step timeout "$(cap "${STICKY_TIMEOUT:-120}" 0)" "$cuzk" gpu check-sticky --testdata "$CUZK_CACHE/testdata-2k"
grep -E "^(CHECK|BENCH|NOTE)" "$log" | tee "$out/summary.txt"
echo "gpu-check: $( [ $status -eq 0 ] && echo ok || echo FAILED ) (log: $log)"
exit $status
