#!/usr/bin/env bash
# GPU checks and benchmarks for a machine with an NVIDIA GPU and a driver (no cargo, no network
# needed). Build the bundle here with `make gpu-bundle`, carry gpu-bundle/ there and run:
#
#   bash gpu-bundle/gpu-check.sh [out-dir]
#
# (through bash, so that a transfer that loses the files' mode bits cannot stop the run; the
# script makes its binaries executable again).
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
# Sizes and time caps: MAX_LG, BENCH_MAX_LG, KERNEL_CHECK_MAX_LG, PARTITION_LG (the synthetic
# partition, 27: a 32 GiB PoRep one), PARTITION_RUNS, PARTITION_AS_GIB, PARTITION_TIMEOUT, STREAM_JOBS, STREAM (the 2
# KiB request the proof stream proves, default porep-v1_1), CHECK_KINDS (the 2 KiB kinds the
# proof check proves on both backends, comma-separated; default all five), CHECK_TIMEOUT,
# BENCH_TIMEOUT, KERNEL_CHECK_TIMEOUT, KERNEL_TIMEOUT, STICKY_TIMEOUT, and BUDGET: seconds for
# the whole script (default 510: a device run of at most 10 minutes with 90 s of slack), by
# which each capped step is cut short if earlier ones ran long, keeping a minimum for the steps
# after it.
#
# Order: the kernel checks and benchmarks and the synthetic partition (no parameters needed) start at once while the
# parameters and test data are generated in the background; then the proof checks, the proof benchmarks
# (supraseal comparison first), the sticky error. summary.txt is rewritten after every step, so
# a run cut short still brings back what it saw; nvidia-smi samples utilisation, memory, power
# and clocks every 500 ms into nvidia-smi.csv.
#
# Nothing but the log, the summary and the samples go to the out-dir (a device call brings back
# a few small files): parameters and test data live in $CUZK_CACHE (default
# /tmp/cuzk-gpu-check).
set -uo pipefail
# A crash while gigabytes are mapped must not spend the run writing a core file.
ulimit -c 0
here="$(cd "$(dirname "$0")" && pwd)"
chmod +x "$here"/cuzk* "$here"/lib/ld-linux* 2>/dev/null || true
cuzk="${CUZK_BIN:-$here/cuzk}"
out="${1:-${OUT:-$PWD/gpu-out}}"
mkdir -p "$out"
log="$out/gpu-check.log"
export CUZK_CACHE="${CUZK_CACHE:-${TMPDIR:-/tmp}/cuzk-gpu-check}"
export FIL_PROOFS_PARAMETER_CACHE="$CUZK_CACHE/params"
export RUST_LOG="${RUST_LOG:-info,cuzk::gpu=debug}"
mkdir -p "$FIL_PROOFS_PARAMETER_CACHE"
status=0
deadline=$(($(date +%s) + ${BUDGET:-510}))
# cap SECONDS RESERVE: SECONDS, or less so that RESERVE seconds are left for later steps
# when this one runs to its cap (at least 30).
cap() {
  local left=$((deadline - $(date +%s) - $2))
  if [ "$left" -lt "$1" ]; then echo $((left > 30 ? left : 30)); else echo "$1"; fi
}
# The summary: CHECK, BENCH and NOTE lines, the steps (with their start times), failed or
# timed-out steps and their errors, and the per-partition GPU timings.
summarize() {
  grep -E "^(CHECK|BENCH|NOTE|=== |Error)|panicked|GPU_TIMING" "$log" >"$out/summary.txt" || true
}
# step COMMAND...: runs it into the log; a nonzero exit fails the run, and an exit by its time
# cap (timeout's 124, or 137 when it had to kill) says so, so a cut is not read as a bug.
step() {
  echo "=== $* ($(date -u +%H:%M:%S))" | tee -a "$log"
  "$@" >>"$log" 2>&1
  local rc=$?
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo "=== TIMED OUT (cut by its time cap, rc $rc): $*" | tee -a "$log"
    status=1
  elif [ $rc -ne 0 ]; then
    echo "=== FAILED (rc $rc): $*" | tee -a "$log"
    status=1
  fi
  summarize
}
# capped SECONDS COMMAND...: the command, killed 15 s after SECONDS if it ignores the TERM.
capped() {
  local seconds=$1
  shift
  timeout -k 15 "$seconds" "$@"
}
: >"$log"
background=()
trap 'kill "${background[@]}" 2>/dev/null' EXIT
# The binary was built on another system; where this one's libraries are too old for it
# (GLIBC_2.34 not found, say), run it through the loader and libraries packed beside it.
if [ -x "$here/cuzk-portable" ] && [ -z "${CUZK_BIN:-}" ] && ! why="$("$cuzk" --help 2>&1 >/dev/null)"; then
  echo "=== cuzk does not start with this system's libraries: $why" | tee -a "$log"
  cuzk="$here/cuzk-portable"
fi
echo "=== cuzk: $cuzk" | tee -a "$log"
# The proof benchmarks compare with supraseal-c2 through the bundle's second binary (linked
# with it); every other step runs the production build above.
bench_cuzk="$cuzk"
if [ -z "${CUZK_BIN:-}" ] && [ -x "$here/cuzk-supraseal" ]; then
  bench_cuzk="$here/cuzk-supraseal"
  if [ -x "$here/cuzk-supraseal-portable" ] && ! "$bench_cuzk" --help >/dev/null 2>&1; then
    bench_cuzk="$here/cuzk-supraseal-portable"
  fi
fi
echo "=== cuzk for gpu bench --part proofs: $bench_cuzk" | tee -a "$log"
# nvidia-smi is absent where the script checks a build with the `gpu-emulator` feature (CI).
if command -v nvidia-smi >/dev/null; then
  step capped 30 nvidia-smi
  step capped 30 nvidia-smi --query-gpu=name,driver_version,pci.bus_id,memory.total,power.limit,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max --format=csv
  nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used,power.draw,clocks.sm --format=csv,nounits \
    -lms 500 >"$out/nvidia-smi.csv" 2>/dev/null &
  background+=($!)
fi
step capped 60 "$cuzk" gpu devices
# Parameters in the background, at the lowest CPU priority, while the kernel checks and
# benchmarks use the GPU (their timings wait on the host's wake-ups); capped so that the
# proof steps keep their time. timeout passes a TERM on to the generator itself.
gen_log="$CUZK_CACHE/generate.log"
timeout -k 15 "$(cap 330 150)" nice -n 19 "$cuzk" params generate all-2k >"$gen_log" 2>&1 &
generator=$!
background+=($generator)
step capped "$(cap "${KERNEL_CHECK_TIMEOUT:-60}" 420)" "$cuzk" gpu check-kernels --max-lg "${KERNEL_CHECK_MAX_LG:-24}"
step capped "$(cap "${KERNEL_TIMEOUT:-75}" 360)" "$cuzk" gpu bench --part kernels --max-lg "${BENCH_MAX_LG:-27}"
# A synthetic partition of 32 GiB PoRep size (2^27, 47 GB of parameters) resident, then with
# the parameters kept as on a 24 GiB GPU and the rest streamed: no parameters needed, so it
# also runs while they are generated.
step capped "$(cap "${PARTITION_TIMEOUT:-180}" 270)" "$cuzk" gpu bench --part partition \
  --partition-lg "${PARTITION_LG:-27}" --partition-runs "${PARTITION_RUNS:-1}" --partition-as-gib "${PARTITION_AS_GIB:-24}"
echo "=== waiting for parameters and test data ($(date -u +%H:%M:%S))" | tee -a "$log"
wait "$generator"
generated=$?
cat "$gen_log" >>"$log"
if [ $generated -ne 0 ]; then
  echo "=== FAILED (rc $generated): parameter generation" | tee -a "$log"
  status=1
fi
summarize
step capped 60 "$cuzk" testdata generate --dir "$CUZK_CACHE/testdata-2k"
step capped "$(cap "${CHECK_TIMEOUT:-240}" 150)" "$cuzk" gpu check --max-lg "${MAX_LG:-22}" --testdata "$CUZK_CACHE/testdata-2k" \
  ${CHECK_KINDS:+--kinds "$CHECK_KINDS"}
step capped "$(cap "${BENCH_TIMEOUT:-150}" 45)" "$bench_cuzk" gpu bench --part proofs --stream-jobs "${STREAM_JOBS:-8}" \
  --stream "${STREAM:-porep-v1_1}" --testdata "$CUZK_CACHE/testdata-2k"
# Last, in a process of its own: it breaks the device's context for the rest of that process.
step capped "$(cap "${STICKY_TIMEOUT:-120}" 0)" "$cuzk" gpu check-sticky --testdata "$CUZK_CACHE/testdata-2k"
cat "$out/summary.txt"
echo "gpu-check: $( [ $status -eq 0 ] && echo ok || echo FAILED ) (log: $log)"
exit $status
