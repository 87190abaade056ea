#!/usr/bin/env bash
# Packs a cuzk binary for a GPU machine we cannot build on: the stripped binary, gpu-check.sh,
# and lib/ with this machine's dynamic loader and the system libraries the binary links
# (libc, libm, libstdc++, libgcc_s, ...), but never the driver's libcuda. gpu-check.sh runs the
# binary as it is; where that machine's libraries are too old for it (a missing GLIBC_2.34 or
# GLIBCXX_3.4.30 version, say), it runs it through lib/'s loader instead (cuzk-portable).
#
#   scripts/make-gpu-bundle.sh BINARY DIR
set -euo pipefail
bin="$1" dir="$2"
rm -rf "$dir"
mkdir -p "$dir/lib"
cp "$bin" "$dir/cuzk"
strip "$dir/cuzk"
cp "$(dirname "$0")/gpu-check.sh" "$dir/"
# ldd's "name => /path (addr)" lines and the loader's own "/path (addr)" line.
ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
  while read -r lib; do
    case "$(basename "$lib")" in
      libcuda.so*) ;; # the driver's own, matched to the kernel module: always the machine's
      *) cp -L "$lib" "$dir/lib/" ;;
    esac
  done
loader="$(basename "$(ls "$dir"/lib/ld-linux-*.so.* | head -1)")"
cat >"$dir/cuzk-portable" <<EOF
#!/usr/bin/env bash
# cuzk through the loader and libraries it was built with (see make-gpu-bundle.sh).
here="\$(cd "\$(dirname "\$0")" && pwd)"
exec "\$here/lib/$loader" --library-path "\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" "\$here/cuzk" "\$@"
EOF
chmod +x "$dir/cuzk-portable"
# Both ways must start here, where the libraries certainly fit.
"$dir/cuzk" --help >/dev/null
"$dir/cuzk-portable" --help >/dev/null
du -sh "$dir" && ls -la "$dir" "$dir/lib"
