#!/usr/bin/env bash
# `make fuzz-test` / `make fuzz`: runs each Go fuzz target of go/cuzk (go/cuzk/fuzz_test.go)
# for FUZZTIME (default 10s; `make fuzz` uses 10m) and prints the executions each one ran.
# A failing input is kept by Go under go/cuzk/testdata/fuzz/<target>/ and replayed by every
# later `go test`: commit it with the fix as a regression case. Needs `make go-lib` and the
# fixtures; FUZZ_TARGETS limits the run to some targets (a regular expression).
#
# Go 1.26's fuzz coordinator can end a time-limited run with a bare "context deadline
# exceeded" and no failing input (golang/go#75804, fixed in Go 1.27): a run that fails that
# way and wrote no input counts as ended, after the target's seeds and kept inputs are
# replayed once more without fuzzing.
set -euo pipefail
cd "$(dirname "$0")/../go"
fuzztime="${FUZZTIME:-10s}"
parallel="${FUZZ_PARALLEL:-1}"
targets="$(go test -list "${FUZZ_TARGETS:-^Fuzz}" ./cuzk | grep '^Fuzz')"
log_dir="${FUZZ_LOG_DIR:-${TMPDIR:-/tmp}/cuzk-fuzz}"
mkdir -p "$log_dir"
kept_inputs() { if [ -d "$1" ]; then find "$1" -type f | wc -l; else echo 0; fi; }
printf '%-24s %12s %10s\n' target execs time
for target in $targets; do
  log="$log_dir/$target.log"
  start=$(date +%s)
  corpus="cuzk/testdata/fuzz/$target"
  before="$(kept_inputs "$corpus")"
  if ! go test -count=1 -run '^$' -fuzz "^$target\$" -fuzztime "$fuzztime" -parallel "$parallel" ./cuzk >"$log" 2>&1; then
    after="$(kept_inputs "$corpus")"
    if [ "$after" = "$before" ] && grep -q '^    context deadline exceeded$' "$log" &&
      ! grep -q 'Failing input written' "$log" &&
      go test -count=1 -run "^$target\$" ./cuzk >>"$log" 2>&1; then
      echo "fuzz: $target ended with Go's deadline race (golang/go#75804), no failing input; replay passed" >&2
    else
      tail -40 "$log"
      echo "fuzz: $target failed (log: $log); the failing input is under go/$corpus: fix the bug and commit it as a regression case" >&2
      exit 1
    fi
  fi
  execs="$(grep -o 'execs: [0-9]*' "$log" | tail -1 | awk '{print $2}')"
  printf '%-24s %12s %9ss\n' "$target" "${execs:-0}" "$(( $(date +%s) - start ))"
done
