#!/usr/bin/env bash
# Fails when a cuzk library defines any global symbol other than cuzk_*, so cuzk links beside
# filecoin-ffi's libfilcrypto.a in one binary without a symbol in common; checks the shared
# library's soname (libcuzk.so.<major>) too.
#
#   scripts/check-exports.sh <libcuzk.so | libcuzk.a (as scripts/install-lib.sh makes it)>...
set -euo pipefail
cd "$(dirname "$0")/.."
major="$(sed -n 's/^version = "\([0-9]*\)\..*"/\1/p' Cargo.toml | head -1)"
for lib in "$@"; do
  case "$lib" in
    *.a) symbols=$(nm -g --defined-only "$lib" | awk 'NF == 3 {print $3}') ;;
    *)
      symbols=$(nm -D --defined-only "$lib" | awk '{print $3}')
      soname="$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
      if [ "$soname" != "libcuzk.so.$major" ]; then
        echo "check-exports: $lib has soname '$soname', want libcuzk.so.$major" >&2
        exit 1
      fi
      echo "check-exports: $lib: soname $soname"
      ;;
  esac
  others=$(echo "$symbols" | grep -v '^cuzk_' || true)
  if [ -n "$others" ]; then
    echo "check-exports: $lib defines non-cuzk global symbols:" >&2
    echo "$others" | head -20 >&2
    exit 1
  fi
  echo "check-exports: $lib: only cuzk_* symbols global ($(echo "$symbols" | grep -c .) symbols)"
done
