#!/usr/bin/env bash
# Fails when the shared library exports any dynamic symbol other than cuzk_*, so cuzk links
# beside filecoin-ffi's libfilcrypto in one binary without duplicate symbols.
set -euo pipefail
lib="$1"
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^cuzk_' || true)
if [ -n "$others" ]; then
  echo "check-exports: $lib exports non-cuzk symbols:" >&2
  echo "$others" | head -20 >&2
  exit 1
fi
echo "check-exports: only cuzk_* symbols exported ($(nm -D --defined-only "$lib" | wc -l) symbols)"
