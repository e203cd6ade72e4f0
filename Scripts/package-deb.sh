#!/usr/bin/env bash
# Builds the Debian package wobble-run_<version>_<arch>.deb (dpkg-deb): the
# files of Scripts/install.sh under /usr, and Depends: on the runtime
# libraries (not the -dev ones). ffmpeg (video output) is Recommends.
#
# Usage: Scripts/package-deb.sh [--binary PATH] [--out DIR]
#   --binary PATH  package this binary (default: build the release binary)
#   --out DIR      where the .deb goes (default: the current directory)
# Install: dpkg -i wobble-run_*.deb; apt-get -f install   (or: apt-get install ./wobble-run_*.deb)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="" out="$PWD"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-deb.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z "$binary" ]]; then
  (cd "$here" && swift build -c release --static-swift-stdlib --product wobble-run >&2)
  binary="$(cd "$here" && swift build -c release --static-swift-stdlib --show-bin-path)/wobble-run"
fi
version="$("$binary" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"
stage="$(mktemp -d)"
trap 'rm -rf -- "$stage"' EXIT
"$here/Scripts/install.sh" --prefix /usr --destdir "$stage/root" --binary "$binary"

# Runtime libraries: the packages that own the shared libraries the binary
# itself links (its NEEDED entries, as dpkg-shlibdeps reads them; their own
# dependencies come with those packages), found with ldd + dpkg -S.
needed="$(objdump -p "$binary" | awk '/NEEDED/{print $2}')"
depends="$(ldd "$binary" | awk '/=> \//{print $1, $3}' | while read -r name lib; do
    grep -qxF -- "$name" <<<"$needed" || continue
    dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
  done | cut -d: -f1 | sort -u | grep -v -- '-dev$' | paste -sd, | sed 's/,/, /g')"
# The GLES backend loads Mesa's drivers at run time (not linked: add them).
depends="$depends, libegl-mesa0, libgl1-mesa-dri"
mkdir -p "$stage/root/DEBIAN" "$stage/root/usr/share/doc/wobble-run"
cp "$here/README.md" "$stage/root/usr/share/doc/wobble-run/README.md"
size="$(du -sk "$stage/root" | cut -f1)"
cat > "$stage/root/DEBIAN/control" <<CONTROL
Package: wobble-run
Version: $version
Architecture: $arch
Maintainer: wobble-run developers <wobble-run@localhost>
Installed-Size: $size
Depends: $depends
Recommends: ffmpeg
Section: graphics
Priority: optional
Description: turn a still image into a jelly animation
 A Lua scene script marks soft regions on an image and choreographs
 touches and shakes over virtual time; the frames are written as an
 animated GIF, PNG frames or a video (through ffmpeg). Renders with
 OpenGL ES through EGL (Mesa's llvmpipe needs no GPU) or on the CPU.
CONTROL
mkdir -p "$out"
deb="$out/wobble-run_${version}_${arch}.deb"
dpkg-deb --root-owner-group --build "$stage/root" "$deb" >&2
echo "$deb"
