#!/usr/bin/env bash
# Installs everything cuzk's build, tests and demo need on a fresh Debian machine. Idempotent:
# each step checks first and does nothing when the tool is already there.
#
#   scripts/install-deps.sh            Rust toolchain components, C compiler, make
#   scripts/install-deps.sh --cuda     also Debian's nvidia-cuda-toolkit (non-free)
set -euo pipefail

want_cuda=0
for arg in "$@"; do
  case "$arg" in
    --cuda) want_cuda=1 ;;
    *) echo "usage: $0 [--cuda]" >&2; exit 2 ;;
  esac
done

say() { echo "install-deps: $*" >&2; }
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=0
apt_install() {
  if [ "$apt_updated" -eq 0 ]; then sudo_if_needed apt-get update -qq; apt_updated=1; fi
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

# C toolchain for blst (assembly + C) and make.
for tool in gcc make; do
  command -v "$tool" >/dev/null || { say "installing $tool"; apt_install build-essential; }
done

# pkg-config: cgo finds cuzk through cuzk.pc / cuzk-static.pc; binutils (ld, objcopy, ar,
# readelf) make the isolated static library (scripts/install-lib.sh).
command -v pkg-config >/dev/null || { say "installing pkg-config"; apt_install pkg-config; }
for tool in ld objcopy ar readelf; do
  command -v "$tool" >/dev/null || { say "installing $tool"; apt_install binutils; }
done

# valgrind for the leak test of the C ABI.
command -v valgrind >/dev/null || { say "installing valgrind"; apt_install valgrind; }

# Rust: cargo, rustfmt and clippy (the tests run fmt and clippy).
if ! command -v cargo >/dev/null; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    say "installing Rust from Debian (cargo, rustc)"; apt_install cargo rustc
  fi
fi
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    say "adding $component"
    rustup component add "$component" 2>/dev/null || apt_install "rust-$component" || true
  fi
done

# Go (cgo) for the Go packages; go/go.mod needs Go >= 1.25.
if ! command -v go >/dev/null; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  else
    say "installing Go from Debian (may be older than go/go.mod wants)"; apt_install golang-go
  fi
fi

if [ "$want_cuda" -eq 1 ] && ! command -v nvcc >/dev/null; then
  say "installing nvidia-cuda-toolkit from Debian non-free"
  if ! grep -Rqs "non-free" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    for f in /etc/apt/sources.list.d/debian.sources; do
      [ -f "$f" ] && sudo_if_needed sed -i 's/^Components: main.*/Components: main contrib non-free non-free-firmware/' "$f"
    done
    apt_updated=0
  fi
  apt_install nvidia-cuda-toolkit
fi

say "ok: $(cargo --version), $(gcc --version | head -1), $(go version)"
