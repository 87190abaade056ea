# cuzk: the two commands a fresh machine needs are `make demo` and `make test`.
#
# Caches that survive between runs (and between fresh clones, e.g. in CI):
#   CUZK_CACHE                 default ~/.cache/cuzk (test data in $(CUZK_CACHE)/testdata-2k)
#   FIL_PROOFS_PARAMETER_CACHE default $(CUZK_CACHE)/params  (INSECURE test parameters live here;
#                              point it at /var/tmp/filecoin-proof-parameters for real ones)
#   CARGO_TARGET_DIR           default ./target

CUZK_CACHE ?= $(HOME)/.cache/cuzk
FIL_PROOFS_PARAMETER_CACHE ?= $(CUZK_CACHE)/params
TARGET := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
export CUZK_CACHE FIL_PROOFS_PARAMETER_CACHE
CARGO ?= cargo
CUZK := $(TARGET)/release/cuzk
BENCH ?=
BENCH_GROUPS := prover params proofs engine

.PHONY: deps build fixtures demo test lint rust-test c-test leak-test go-lib go-test bench

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release

## Parameters (fast random test parameters) and 2 KiB test data, generated once and cached.
fixtures: build
	@mkdir -p "$(FIL_PROOFS_PARAMETER_CACHE)"
	$(CUZK) params generate all-2k
	$(CUZK) testdata generate

## The main job: every proof kind through the Go package, with a table and the engine status.
demo: fixtures go-lib
	cd go && go run ./cmd/cuzk-demo

## Formatting and lints.
lint: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --all-targets -- -D warnings
	@test -z "$$(gofmt -l go)" || { gofmt -l go; echo "gofmt: files above are not formatted"; exit 1; }

rust-test: deps
	$(CARGO) test --release

## The C smoke test against include/cuzk.h and the shared library; exported symbols check.
c-test: fixtures
	$(CC) -Wall -Wextra -Werror -std=c11 -Iinclude tests/c/smoke.c -L$(TARGET)/release -lcuzk \
	  -Wl,-rpath,$(TARGET)/release -o $(TARGET)/release/cuzk-smoke
	$(TARGET)/release/cuzk-smoke $(CUZK_CACHE)/testdata-2k
	scripts/check-exports.sh $(TARGET)/release/libcuzk.so

## The C smoke test under valgrind: no definite leak, no memory error.
leak-test: c-test
	valgrind --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
	  --error-exitcode=3 $(TARGET)/release/cuzk-smoke $(CUZK_CACHE)/testdata-2k

## Links go/lib to the library cargo built (shared by default; see go/cuzk/cgo.go for static).
go-lib: build
	@mkdir -p go/lib
	ln -sf $(TARGET)/release/libcuzk.so go/lib/libcuzk.so
	ln -sf $(TARGET)/release/libcuzk.a go/lib/libcuzk.a

go-test: fixtures go-lib
	cd go && go vet ./... && GOEXPERIMENT=cgocheck2 go test -count=1 -timeout 30m ./...

## Everything CI runs.
test: lint rust-test c-test leak-test go-test

## Benchmarks: `make bench` runs every group, `make bench BENCH=prover` one of them.
bench: deps
	@for group in $(if $(BENCH),$(BENCH),$(BENCH_GROUPS)); do \
	  $(CARGO) bench --bench $$group || exit 1; \
	done
