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
# cust finds libcuda through a CUDA root with lib64/; Debian's toolkit keeps it in the multiarch
# directory, so a link under the cache stands in for the root (see cuda-deps).
CUDA_LIBRARY_PATH ?= $(CUZK_CACHE)/cuda-root
export CUZK_CACHE FIL_PROOFS_PARAMETER_CACHE CUDA_LIBRARY_PATH
CARGO ?= cargo
CUZK := $(TARGET)/release/cuzk
BENCH ?=
BENCH_GROUPS := prover params proofs engine

.PHONY: deps cuda-deps build fixtures demo test lint rust-test c-test leak-test go-lib go-test cuda-test emu-test link-test gpu-bundle bench

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

## Links go/lib to the library cargo built last (shared by default; see go/cuzk/cgo.go for
## static).
define link_go_lib
	@mkdir -p go/lib
	ln -sf $(TARGET)/release/libcuzk.so go/lib/libcuzk.so
	ln -sf $(TARGET)/release/libcuzk.a go/lib/libcuzk.a
endef
go-lib: build
	$(link_go_lib)

go-test: fixtures go-lib
	cd go && go vet ./... && GOEXPERIMENT=cgocheck2 go test -count=1 -timeout 30m ./...

## cuzk's shared library and another Rust static library with its own runtime and blst (a
## stand-in for filecoin-ffi's libfilcrypto.a, which cannot be fetched here) in one Go binary.
link-test: go-lib
	$(CARGO) build --release --manifest-path tests/link/fakefilcrypto/Cargo.toml \
	  --target-dir $(TARGET)/fakefilcrypto
	cd go && CGO_LDFLAGS="-L$(TARGET)/fakefilcrypto/release" GOEXPERIMENT=cgocheck2 \
	  go test -count=1 -tags linkcheck ./internal/linkcheck/

## nvcc and libcuda (Debian's nvidia-cuda-toolkit) for builds with the `cuda` feature.
cuda-deps: deps
	@scripts/install-deps.sh --cuda
	@mkdir -p "$(CUDA_LIBRARY_PATH)"
	@test -e "$(CUDA_LIBRARY_PATH)/lib64" || ln -sfn "$$(dirname "$$(find /usr/lib /usr/local/cuda*/lib64 -name 'libcuda.so*' 2>/dev/null | head -1)")" "$(CUDA_LIBRARY_PATH)/lib64"

# supraseal-c2's build compiles with $CXX as nvcc's host compiler (nvcc 11.8 needs gcc <= 11)
# and emits no sm_90 code by itself.
CUDA_ENV = $(if $(shell command -v g++-11),CXX=g++-11) NVCC_APPEND_FLAGS='-gencode arch=compute_90,code=sm_90'

## The CUDA build: compiles the kernels, lints, and tests it on this machine (with no GPU the
## engine must fall back to the CPU; the fallback test asserts it). Runs last so the CPU build
## that the C and Go tests linked is not disturbed before they ran.
cuda-test: cuda-deps
	$(CUDA_ENV) $(CARGO) clippy --release --features supraseal --all-targets -- -D warnings
	$(CUDA_ENV) $(CARGO) test --release --features cuda --lib --test gpu_fallback
	$(CUDA_ENV) $(CARGO) build --release --features cuda --bin cuzk
	$(CUZK) gpu devices

## The CUDA backend's own code over the host emulation of the device (feature `gpu-emulator`,
## no CUDA needed): lints, the emulator tests, the fallback test with (emulated) devices
## present, scripts/gpu-check.sh itself from a bundle of a `gpu-emulator` cuzk at CI sizes (made
## unable to start by itself, so the script must run it through the bundle's own loader and
## libraries, as on a GPU machine whose libraries are too old), and the Go demo
## through the C ABI's default engine, which must prove every kind on the emulated GPUs. Runs
## after the Go tests and before cuda-test, which rebuilds cuzk with CUDA.
EMU_OUT := $(CUZK_CACHE)/emu-check
EMU_BUNDLE := $(CUZK_CACHE)/emu-bundle
emu-test: fixtures
	$(CARGO) clippy --release --features gpu-emulator --all-targets -- -D warnings
	$(CARGO) test --release --features gpu-emulator --test gpu_emulated --test gpu_fallback
	$(CARGO) build --release --features gpu-emulator --bin cuzk
	scripts/make-gpu-bundle.sh $(CUZK) "$(EMU_BUNDLE)"
	@# As on a machine where the bundled binary cannot start: point its ELF interpreter at a
	@# loader that does not exist (same length), so gpu-check.sh must fall back to cuzk-portable.
	LC_ALL=C sed -i 's|/lib64/ld-linux-x86-64.so.2|/lib64/ld-linux-x86-64.so.X|' "$(EMU_BUNDLE)/cuzk"
	! "$(EMU_BUNDLE)/cuzk" --help >/dev/null 2>&1
	rm -rf "$(EMU_OUT)"
	MAX_LG=16 BENCH_MAX_LG=22 STREAM_JOBS=1 CHECK_TIMEOUT=900 BENCH_TIMEOUT=600 BUDGET=2400 \
	  "$(EMU_BUNDLE)/gpu-check.sh" "$(EMU_OUT)" || { tail -40 "$(EMU_OUT)/gpu-check.log"; exit 1; }
	@grep -q "^=== cuzk: $(EMU_BUNDLE)/cuzk-portable" "$(EMU_OUT)/gpu-check.log" || { echo "emu-test: gpu-check.sh did not run the bundle's cuzk-portable"; exit 1; }
	$(CARGO) build --release --features gpu-emulator --lib
	$(link_go_lib)
	cd go && go run ./cmd/cuzk-demo >"$(EMU_OUT)/demo.log" 2>&1 || { tail -40 "$(EMU_OUT)/demo.log"; exit 1; }
	@grep -v '^\[' "$(EMU_OUT)/demo.log" | sed -n '1,8p'
	@grep -q '"backend": "cuda:0,1"' "$(EMU_OUT)/demo.log" || { echo "emu-test: the Go demo did not prove on the emulated GPUs"; exit 1; }

## One stripped cuzk binary with the CUDA backend and supraseal-c2 (the baseline), the loader
## and system libraries it links, and scripts/gpu-check.sh, for a GPU machine.
gpu-bundle: cuda-deps
	$(CUDA_ENV) $(CARGO) build --release --features supraseal --bin cuzk
	scripts/make-gpu-bundle.sh $(CUZK) gpu-bundle

## Everything CI runs.
test: lint rust-test c-test leak-test go-test link-test emu-test cuda-test

## Benchmarks: `make bench` runs every group, `make bench BENCH=prover` one of them.
bench: deps
	@for group in $(if $(BENCH),$(BENCH),$(BENCH_GROUPS)); do \
	  $(CARGO) bench --bench $$group || exit 1; \
	done
