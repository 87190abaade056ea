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
# Builds with a non-default feature set (`gpu-emulator`, `cuda`, `supraseal`) share TARGET with
# the default build: cargo keeps each feature set's own artefacts apart (by hash) and builds the
# dependencies once, where a target directory of their own cost a fresh machine a second full
# dependency build (8 to 12 minutes on 2 cores). cuzk itself is recompiled at each switch of
# feature set (about 1.5 minutes: its libcuzk.so/.a/.rlib carry no hash in their names, and cargo
# sees another build's files there). What cargo copies to $(TARGET)/release (cuzk, libcuzk.so,
# libcuzk.a) is whichever feature set it built last, so nothing here links or ships those files
# unless the default build ran just before: `build` (and so `fixtures`, `go-lib`,
# `install`) runs it, and go/lib holds copies taken right after it (install-lib.sh --dev), which
# no feature build changes. Run the make targets one at a time (no -j across feature builds).
BENCH ?=
BENCH_GROUPS := prover params proofs engine synth msm

.PHONY: deps cuda-deps build header fixtures demo test lint rust-test c-test leak-test go-lib go-test fuzz-test fuzz cuda-test emu-test default-lib-test link-test interop-test gpu-bundle bench install

# cgo finds cuzk through pkg-config (go/cuzk/link_*.go); `make go-lib` writes the .pc files for
# the library cargo built here to go/lib. The Go targets below run with GO_ENV.
GO_LIB := $(CURDIR)/go/lib
GO_ENV := PKG_CONFIG_PATH=$(GO_LIB)$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
# `make install`: lib/libcuzk.so.<version> (+ .so.<major>, .so links), lib/libcuzk.a,
# include/cuzk.h, lib/pkgconfig/cuzk.pc and cuzk-static.pc under $(DESTDIR)$(PREFIX).
PREFIX ?= /usr/local
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

deps:
	@scripts/install-deps.sh

build: deps
	$(CARGO) build --release

## Regenerates the committed C headers (include/cuzk.h, go/cuzk/cuzk.h) from src/ffi; no other
## target writes them, so tests/header.rs fails whenever they are stale.
header: deps
	CUZK_WRITE_HEADER=1 $(CARGO) build --release

## Parameters (fast random test parameters) and 2 KiB test data, generated once and cached.
fixtures: build
	@mkdir -p "$(FIL_PROOFS_PARAMETER_CACHE)"
	$(CUZK) params generate all-2k
	$(CUZK) testdata generate

## The main job: every proof kind through the Go package, with a table and the engine status.
demo: fixtures go-lib
	cd go && $(GO_ENV) go run ./cmd/cuzk-demo

## Formatting and lints.
lint: deps
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --release --all-targets -- -D warnings
	@test -z "$$(gofmt -l go)" || { gofmt -l go; echo "gofmt: files above are not formatted"; exit 1; }

rust-test: deps
	$(CARGO) test --release

## The C smoke test against include/cuzk.h, linked through pkg-config with the shared library
## and with the static one; exported symbols and soname check.
c-test: fixtures go-lib
	$(CC) -Wall -Wextra -Werror -std=c11 tests/c/smoke.c $$($(GO_ENV) pkg-config --cflags --libs cuzk) \
	  -o $(TARGET)/release/cuzk-smoke
	$(TARGET)/release/cuzk-smoke $(CUZK_CACHE)/testdata-2k
	$(CC) -Wall -Wextra -Werror -std=c11 tests/c/smoke.c $$($(GO_ENV) pkg-config --cflags --libs cuzk-static) \
	  -o $(TARGET)/release/cuzk-smoke-static
	$(TARGET)/release/cuzk-smoke-static $(CUZK_CACHE)/testdata-2k
	scripts/check-exports.sh $(TARGET)/release/libcuzk.so $(GO_LIB)/libcuzk.a

## The C smoke test under valgrind: no definite leak, no memory error. Beside it the Go package
## through cgo (go/cmd/cuzk-leakcheck: a proof, its verification, error paths, cancel,
## status, plan, challenges, close): no definite leak and no invalid access outside the Go
## runtime's own (async preemption is turned off; tests/go-runtime.supp names what is left).
## valgrind runs all of a program's threads on one core, so the smoke test's two halves (its
## own engine; the default engine's one-shot proof) and the Go check run side by side, three
## processes (on the 2-core CI machine about 5 minutes, where the smoke test alone took 8); each
## one's output follows, then the verdict.
LEAK_LOG := $(TARGET)/leak-test
VALGRIND := valgrind --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --error-exitcode=3
leak-test: c-test
	cd go && $(GO_ENV) go build -o $(TARGET)/release/cuzk-leakcheck ./cmd/cuzk-leakcheck
	@$(VALGRIND) $(TARGET)/release/cuzk-smoke $(CUZK_CACHE)/testdata-2k engine >$(LEAK_LOG)-c-engine.log 2>&1 & e=$$!; \
	$(VALGRIND) $(TARGET)/release/cuzk-smoke $(CUZK_CACHE)/testdata-2k default >$(LEAK_LOG)-c-default.log 2>&1 & d=$$!; \
	GODEBUG=asyncpreemptoff=1 $(VALGRIND) --undef-value-errors=no --suppressions=tests/go-runtime.supp \
	  $(TARGET)/release/cuzk-leakcheck >$(LEAK_LOG)-go.log 2>&1; go_rc=$$?; \
	wait $$e; e_rc=$$?; wait $$d; d_rc=$$?; \
	echo "== valgrind: C smoke test, own engine (exit $$e_rc)"; cat $(LEAK_LOG)-c-engine.log; \
	echo "== valgrind: C smoke test, default engine (exit $$d_rc)"; cat $(LEAK_LOG)-c-default.log; \
	echo "== valgrind: Go leak check (exit $$go_rc)"; cat $(LEAK_LOG)-go.log; \
	test $$e_rc = 0 && test $$d_rc = 0 && test $$go_rc = 0

## go/lib: libcuzk.so.N linked to the library cargo built last, the isolated libcuzk.a made
## from cargo's, and cuzk.pc / cuzk-static.pc pointing there (see scripts/install-lib.sh).
define link_go_lib
	scripts/install-lib.sh --dev $(TARGET)/release $(GO_LIB) $(CURDIR)/include $(GO_LIB)
endef
go-lib: build
	$(link_go_lib)

go-test: fixtures go-lib
	cd go && $(GO_ENV) go vet ./... && $(GO_ENV) GOEXPERIMENT=cgocheck2 go test -race -count=1 -timeout 30m ./...

## Go fuzz targets (go/cuzk/fuzz_test.go), one per entry point that takes bytes: each fuzzed
## for FUZZTIME and the executions printed (scripts/fuzz.sh). `go test` (go-test) replays their
## seeds and every failing input Go kept under go/cuzk/testdata/fuzz. `make fuzz` runs each
## target for FUZZ_LONG.
FUZZTIME ?= 10s
FUZZ_LONG ?= 10m
fuzz-test: fixtures go-lib
	$(GO_ENV) FUZZTIME=$(FUZZTIME) scripts/fuzz.sh
fuzz: fixtures go-lib
	$(GO_ENV) FUZZTIME=$(FUZZ_LONG) scripts/fuzz.sh

## Installs the libraries, the header and the pkg-config files under $(DESTDIR)$(PREFIX).
install: build
	scripts/install-lib.sh $(TARGET)/release $(LIBDIR) $(INCLUDEDIR) $(PKGCONFIGDIR)

## The two ways a node links cuzk beside the real filecoin-ffi (v1.36.1 built from source by
## scripts/build-filecoin-ffi.sh, CPU only, without the FVM; cached): one Go test binary
## (go/internal/linkcheck, its own module) with libfilcrypto.a and cuzk's shared library, then
## with cuzk's static library; each must run filcrypto's Rust and blst code and cuzk's. Also
## builds a consumer module against `make install`'s output and a copy of the Go module, as a
## node would.
LINK_DIR := $(TARGET)/link-test
link-test: fixtures go-lib
	scripts/link-test.sh "$(TARGET)" "$(LINK_DIR)"

## filecoin-ffi and cuzk in one Go binary (go/internal/interop, its own module, cgocheck2):
## 2 KiB sectors sealed by filecoin-ffi are proved by cuzk's go/ffi and verified by filecoin-ffi,
## and the reverse, for PoRep V1, V1_1, SyntheticPoRep and NI-PoRep, SnarkPack aggregation,
## WinningPoSt, WindowPoSt V1 and V1_1 over three partitions with a faulty sector, SnapDeals, the
## path-based and challenge functions; every verify function agrees with filecoin-ffi's on
## valid, tampered, truncated and mismatched inputs.
interop-test: fixtures go-lib
	scripts/interop-test.sh

## nvcc and libcuda (Debian's nvidia-cuda-toolkit) for builds with the `cuda` feature.
cuda-deps: deps
	@scripts/install-deps.sh --cuda
	@mkdir -p "$(CUDA_LIBRARY_PATH)"
	@test -e "$(CUDA_LIBRARY_PATH)/lib64" || ln -sfn "$$(dirname "$$(find /usr/lib /usr/local/cuda*/lib64 -name 'libcuda.so*' 2>/dev/null | head -1)")" "$(CUDA_LIBRARY_PATH)/lib64"

# supraseal-c2's build compiles with $CXX as nvcc's host compiler (nvcc 11.8 needs gcc <= 11)
# and emits no sm_90 code by itself.
CUDA_ENV = $(if $(shell command -v g++-11),CXX=g++-11) NVCC_APPEND_FLAGS='-gencode arch=compute_90,code=sm_90'

## The CUDA build: compiles the kernels, lints, and tests it on this
## machine (with no GPU the engine must fall back to the CPU; the fallback test asserts it).
## The library's unit tests are not run again here: none is specific to a GPU feature (rust-test
## runs them), and their build would compile cuzk once more (about 2 minutes).
cuda-test: cuda-deps
	$(CUDA_ENV) $(CARGO) clippy --release --features supraseal --all-targets -- -D warnings
	$(CUDA_ENV) $(CARGO) test --release --features cuda --test gpu_fallback
	$(CUDA_ENV) $(CARGO) build --release --features cuda --bin cuzk
	$(CUZK) gpu devices

## The CUDA backend's own code over the host emulation of the device (feature `gpu-emulator`,
## no CUDA needed): lints, the emulator tests, the fallback test with
## (emulated) devices present, scripts/gpu-check.sh itself from a bundle of a `gpu-emulator`
## cuzk at CI sizes (the proof check without porep-synth, the same circuit as porep-v1_1, and the
## proof stream on WinningPoSt: a 2 KiB PoRep costs about 35 s a proof on each backend here;
## made unable to start by itself, so the script must run it through the
## bundle's own loader and libraries, as on a GPU machine whose libraries are too old), and the
## Go demo through the C ABI's default engine, linked through its own pkg-config directory
## (EMU_GO_LIB, never go/lib), which must prove every kind on the emulated GPUs.
EMU_OUT := $(CUZK_CACHE)/emu-check
EMU_BUNDLE := $(CUZK_CACHE)/emu-bundle
EMU_GO_LIB := $(TARGET)/emu-go-lib
# Go's build cache did not see the change of PKG_CONFIG_PATH: with the shared cache, the demo
# built here reused go/cuzk as compiled for go/lib, ran with go/lib's RUNPATH and proved on the
# CPU (found 2026-12-01). A Go cache of its own keeps the two apart.
EMU_GO_ENV := PKG_CONFIG_PATH=$(EMU_GO_LIB) GOCACHE=$(TARGET)/emu-go-cache
emu-test: export CUZK_ALLOW_EMULATED_GPUS = 1
emu-test: fixtures
	$(CARGO) clippy --release --features gpu-emulator --all-targets -- -D warnings
	$(CARGO) test --release --features gpu-emulator --test gpu_emulated --test gpu_emulated_msm_state --test gpu_emulated_device_memory --test gpu_emulated_pair_streaming --test gpu_emulated_circuit_switch --test gpu_fallback
	env -u CUZK_ALLOW_EMULATED_GPUS $(CARGO) test --release --features gpu-emulator --test gpu_emulator_opt_in
	$(CARGO) build --release --features gpu-emulator --bin cuzk
	scripts/make-gpu-bundle.sh $(CUZK) "$(EMU_BUNDLE)"
	@# As on a machine where the bundled binary cannot start: point its ELF interpreter at a
	@# loader that does not exist (same length), so gpu-check.sh must fall back to cuzk-portable.
	LC_ALL=C sed -i 's|/lib64/ld-linux-x86-64.so.2|/lib64/ld-linux-x86-64.so.X|' "$(EMU_BUNDLE)/cuzk"
	! "$(EMU_BUNDLE)/cuzk" --help >/dev/null 2>&1
	rm -rf "$(EMU_OUT)"
	MAX_LG=16 BENCH_MAX_LG=18 KERNEL_CHECK_MAX_LG=18 PARTITION_LG=13 PARTITION_RUNS=1 PARTITION_TIMEOUT=300 STREAM_JOBS=1 STREAM=winning CHECK_KINDS=porep-v1_1,winning,window,snap KERNEL_CHECK_TIMEOUT=600 KERNEL_TIMEOUT=600 CHECK_TIMEOUT=900 BENCH_TIMEOUT=600 BUDGET=2400 \
	  "$(EMU_BUNDLE)/gpu-check.sh" "$(EMU_OUT)" || { tail -40 "$(EMU_OUT)/gpu-check.log"; exit 1; }
	@grep -q "^=== cuzk: $(EMU_BUNDLE)/cuzk-portable" "$(EMU_OUT)/gpu-check.log" || { echo "emu-test: gpu-check.sh did not run the bundle's cuzk-portable"; exit 1; }
	@grep -q "^BENCH gpu/partition-n13 " "$(EMU_OUT)/summary.txt" && grep -q "^BENCH gpu/partition-n13-pipelined .*memory_waits=0" "$(EMU_OUT)/summary.txt" && grep "^BENCH gpu/partition-n13-as-24gib " "$(EMU_OUT)/summary.txt" | grep -q "locked_bytes=[1-9]" && grep -q "^BENCH gpu/partition-n13-as-80gib-pipelined .*memory_waits=0 .*locked_bytes=[1-9]" "$(EMU_OUT)/summary.txt" || { echo "emu-test: the synthetic partition did not run resident, pipelined two at once (all resident, and as an 80 GiB GPU keeps them), and streamed from locked memory"; exit 1; }
	$(CARGO) build --release --features gpu-emulator --lib
	scripts/install-lib.sh --dev $(TARGET)/release $(EMU_GO_LIB) $(CURDIR)/include $(EMU_GO_LIB)
	cd go && $(EMU_GO_ENV) go run ./cmd/cuzk-demo >"$(EMU_OUT)/demo.log" 2>&1 || { tail -40 "$(EMU_OUT)/demo.log"; exit 1; }
	@grep -v '^\[' "$(EMU_OUT)/demo.log" | sed -n '1,8p'
	@grep -q '"backend": "emulated-cuda:0,1,2"' "$(EMU_OUT)/demo.log" || { grep -m1 '"backend"' "$(EMU_OUT)/demo.log"; echo "emu-test: the Go demo did not prove on the emulated GPUs"; exit 1; }

## Last in `make test`, after every feature build (which share TARGET with the default build):
## what a node would link and run after the tests is still the default build. go/lib is not
## remade here: the copy `go-lib` took before the feature builds ran must still be the default
## library. cuzk is rebuilt, which must select the default binary again (cargo copies a fresh
## build's files back to target/release). Both run with emulation allowed, so that an emulator
## build would show itself, and must open their default engine on the CPU (the default build
## has no GPU backend; an emulator build would say "emulated-cuda", a CUDA one "cuda").
default-lib-test: deps
	@test -e $(GO_LIB)/libcuzk.so || $(MAKE) go-lib
	@backend="$$(cd go && CUZK_ALLOW_EMULATED_GPUS=1 $(GO_ENV) go run ./cmd/cuzk-backend)" && echo "go/lib default engine backend: $$backend" && \
	  test "$$backend" = cpu || { echo "default-lib-test: go/lib is not the default build"; exit 1; }
	$(CARGO) build --release --bin cuzk
	@CUZK_ALLOW_EMULATED_GPUS=1 $(CUZK) gpu devices 2>&1 | tee $(TARGET)/default-lib-test.log
	@grep -q "^GPU backend built: none" $(TARGET)/default-lib-test.log || { echo "default-lib-test: $(CUZK) is not the default build"; exit 1; }

## For a GPU machine: the production cuzk (feature `cuda`), which every check runs, and one
## linked with supraseal-c2 (the baseline, for `gpu bench --part proofs`), both stripped, the
## loader and system libraries they link, and scripts/gpu-check.sh; under the 64 MiB a device
## run carries.
gpu-bundle: cuda-deps
	$(CUDA_ENV) $(CARGO) build --release --features supraseal --bin cuzk
	cp $(CUZK) $(TARGET)/cuzk-supraseal
	$(CUDA_ENV) $(CARGO) build --release --features cuda --bin cuzk
	scripts/make-gpu-bundle.sh $(CUZK) gpu-bundle $(TARGET)/cuzk-supraseal

## Everything CI runs.
test: lint rust-test c-test leak-test go-test fuzz-test link-test interop-test emu-test cuda-test default-lib-test

## Benchmarks: `make bench` runs every group, `make bench BENCH=prover` one of them.
bench: deps
	@for group in $(if $(BENCH),$(BENCH),$(BENCH_GROUPS)); do \
	  $(CARGO) bench --bench $$group || exit 1; \
	done
