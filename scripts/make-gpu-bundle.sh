#!/usr/bin/env bash
# Packs cuzk for a GPU machine we cannot build on: the stripped production binary (`cuzk`,
# feature `cuda`), optionally a second one linked with supraseal-c2 for the baseline comparison
# (`cuzk-supraseal`, feature `supraseal`), gpu-check.sh, and lib/ with this machine's dynamic
# loader and the system libraries the binaries link (libc, libm, libstdc++, libgcc_s, ...), but
# never the driver's libcuda. gpu-check.sh runs the binaries as they are; where that machine's
# libraries are too old for them (a missing GLIBC_2.34 or GLIBCXX_3.4.30 version, say), it runs
# them through lib/'s loader instead (cuzk-portable, cuzk-supraseal-portable).
#
#   scripts/make-gpu-bundle.sh BINARY DIR [SUPRASEAL_BINARY]
set -euo pipefail
bin="$1" dir="$2" supraseal_bin="${3:-}"
rm -rf "$dir"
mkdir -p "$dir/lib"
cp "$(dirname "$0")/gpu-check.sh" "$dir/"
# pack SOURCE NAME: the stripped binary as NAME, the libraries it links into lib/, and
# NAME-portable, which runs it through lib/'s loader.
pack() {
  cp "$1" "$dir/$2"
  strip "$dir/$2"
  # ldd's "name => /path (addr)" lines and the loader's own "/path (addr)" line.
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
    while read -r lib; do
      case "$(basename "$lib")" in
        libcuda.so*) ;; # the driver's own, matched to the kernel module: always the machine's
        *) cp -L "$lib" "$dir/lib/" ;;
      esac
    done
  local loader
  loader="$(basename "$(ls "$dir"/lib/ld-linux-*.so.* | head -1)")"
  cat >"$dir/$2-portable" <<EOF
#!/usr/bin/env bash
# $2 through the loader and libraries it was built with (see make-gpu-bundle.sh).
here="\$(cd "\$(dirname "\$0")" && pwd)"
exec "\$here/lib/$loader" --library-path "\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" "\$here/$2" "\$@"
EOF
  chmod +x "$dir/$2-portable"
  # Both ways must start here, where the libraries certainly fit.
  "$dir/$2" --help >/dev/null
  "$dir/$2-portable" --help >/dev/null
}
pack "$bin" cuzk
if [ -n "$supraseal_bin" ]; then pack "$supraseal_bin" cuzk-supraseal; fi
# A device run carries at most 64 MiB.
size_kib="$(du -sk "$dir" | cut -f1)"
if [ "$size_kib" -gt $((64 * 1024)) ]; then
  echo "make-gpu-bundle: $dir is $size_kib KiB, over the 64 MiB a device run carries" >&2
  exit 1
fi
du -sh "$dir" && ls -la "$dir" "$dir/lib"
