# cuzk: the two commands a fresh machine needs are `make demo` and `make test`.
#
# Caches that survive between runs (and between fresh clones, e.g. in CI):
#   CUZK_CACHE                 default ~/.cache/cuzk
#   FIL_PROOFS_PARAMETER_CACHE default $(CUZK_CACHE)/params  (INSECURE test parameters live here;
#                              point it at /var/tmp/filecoin-proof-parameters for real ones)

CUZK_CACHE ?= $(HOME)/.cache/cuzk
FIL_PROOFS_PARAMETER_CACHE ?= $(CUZK_CACHE)/params
export FIL_PROOFS_PARAMETER_CACHE
CARGO ?= cargo
BENCH ?=
BENCH_GROUPS := prover params proofs engine

.PHONY: deps build demo test lint bench header

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release

## The main job: prove with the CPU backend, verify, print timings.
demo: build
	@mkdir -p "$(FIL_PROOFS_PARAMETER_CACHE)"
	$(CARGO) run --release --quiet --bin cuzk -- demo --dir "$(FIL_PROOFS_PARAMETER_CACHE)"

## Formatting and lints (part of `make test`).
lint: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --all-targets -- -D warnings

## Everything CI runs.
test: lint
	@mkdir -p "$(FIL_PROOFS_PARAMETER_CACHE)"
	$(CARGO) test --release

## Benchmarks: `make bench` runs every group, `make bench BENCH=prover` one of them.
bench: deps
	@for group in $(if $(BENCH),$(BENCH),$(BENCH_GROUPS)); do \
	  $(CARGO) bench --bench $$group || exit 1; \
	done
