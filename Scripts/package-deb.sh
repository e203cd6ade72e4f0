#!/usr/bin/env bash
# Builds two Debian packages (dpkg-deb) from the files of Scripts/install.sh
# under /usr:
#   wobble-run_<version>_<arch>.deb     the headless tool (render nodes,
#       containers): Depends: on the runtime libraries its binary links, no
#       SDL, X11 or Wayland; ffmpeg (video output) is Recommends.
#   wobble-studio_<version>_<arch>.deb  the studio window (`wobble-run
#       edit`): /usr/bin/wobble-studio; Depends: on wobble-run of the same
#       version and the libraries the studio links (SDL2, which brings X11
#       and Wayland).
# Prints the two paths, the render node's first.
#
# Usage: Scripts/package-deb.sh [--binary PATH] [--studio PATH] [--out DIR]
#                                [--compression TYPE]
#   --binary PATH  package this wobble-run (default: build the release binary)
#   --studio PATH  package this wobble-studio (default: the one beside --binary,
#                  or build it)
#   --out DIR      where the .debs go (default: the current directory)
#   --compression TYPE  xz (default: the smallest), zstd, gzip or none (the
#                  fastest: the test suite uses it; about 70 MB per package)
# Install: apt-get install ./wobble-run_*.deb [./wobble-studio_*.deb]
#   (or dpkg -i, then apt-get -f install)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
binary="" studio="" out="$PWD" compression=xz
while [[ $# -gt 0 ]]; do
  case "$1" in
    --binary) binary="${2:?--binary needs a path}"; shift 2 ;;
    --studio) studio="${2:?--studio needs a path}"; shift 2 ;;
    --out) out="${2:?--out needs a folder}"; shift 2 ;;
    --compression)
      compression="${2:?--compression needs xz, zstd, gzip or none}"; shift 2
      case "$compression" in
        xz|zstd|gzip|none) ;;
        *) echo "package-deb.sh: --compression: '$compression' is not xz, zstd, gzip or none" >&2; exit 2 ;;
      esac ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package-deb.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
if [[ -z "$binary" ]]; then
  (cd "$here" && swift build -c release --static-swift-stdlib --product wobble-run >&2)
  binary="$(cd "$here" && swift build -c release --static-swift-stdlib --show-bin-path)/wobble-run"
fi
if [[ -z "$studio" ]]; then
  studio="$(dirname -- "$binary")/wobble-studio"
  if [[ ! -x "$studio" ]]; then
    (cd "$here" && swift build -c release --static-swift-stdlib --product wobble-studio >&2)
    studio="$(cd "$here" && swift build -c release --static-swift-stdlib --show-bin-path)/wobble-studio"
  fi
fi
version="$("$binary" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"
stage="$(mktemp -d)"
trap 'rm -rf -- "$stage"' EXIT
"$here/Scripts/install.sh" --prefix /usr --destdir "$stage/root" --binary "$binary" --studio "$studio"
# The studio's package holds its executable; the rest is the render node's.
mkdir -p "$stage/studio/usr/bin"
mv -- "$stage/root/usr/bin/wobble-studio" "$stage/studio/usr/bin/wobble-studio"

# runtime_depends BINARY: the packages that own the shared libraries BINARY
# itself links (its NEEDED entries, as dpkg-shlibdeps reads them; their own
# dependencies come with those packages), found with ldd + dpkg -S.
runtime_depends() {
  local needed
  needed="$(objdump -p "$1" | awk '/NEEDED/{print $2}')"
  ldd "$1" | awk '/=> \//{print $1, $3}' | while read -r name lib; do
      grep -qxF -- "$name" <<<"$needed" || continue
      dpkg -S "$(realpath "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null || true
    done | cut -d: -f1 | sort -u | grep -v -- '-dev$' | paste -sd, | sed 's/,/, /g'
}
# (OpenCV comes in this way: libopencv-core406, -imgproc406, -photo406, the
# three libraries the cutouts link; see docs/DECISIONS.md, "Cutouts".)
# The GLES backend loads Mesa's drivers at run time (not linked: add them).
depends="$(runtime_depends "$binary"), libegl-mesa0, libgl1-mesa-dri"
# The studio: wobble-run of this version, and what the studio links beyond it.
studio_depends="wobble-run (= $version)"
for p in $(runtime_depends "$studio" | tr -d ,); do
  grep -qw -- "$p" <<<"$depends" || studio_depends="$studio_depends, $p"
done

# copyright ROOT PACKAGE: ROOT/usr/share/doc/PACKAGE/copyright (Debian's
# machine-readable format): wobble-run's licence, GPL-3.0-or-later (it
# links libimagequant, GPL-3.0-or-later), and the licence of each library
# the binaries link (docs/DECISIONS.md, "Licence").
copyright() {
  local root="$1" package="$2"
  mkdir -p "$root/usr/share/doc/$package"
  cat > "$root/usr/share/doc/$package/copyright" <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: wobble-run
Comment: wobble-run links these libraries (Debian packages; each under its
 own licence, all compatible with GPL-3.0-or-later):
 libimagequant (libimagequant0): GPL-3.0-or-later;
 Lua 5.4 (liblua5.4-0): Expat;
 libpng (libpng16-16): libpng; zlib (zlib1g): Zlib;
 libjpeg-turbo (libturbojpeg0): IJG, BSD-3-Clause and Zlib;
 giflib (libgif7): MIT;
 libwebp and libwebpmux (libwebp7, libwebpmux3): BSD-3-Clause;
 Little CMS (liblcms2-2): MIT;
 civetweb (libcivetweb1), the browser studio's server: MIT;
 OpenCV's core, imgproc and photo (libopencv-core406,
 libopencv-imgproc406, libopencv-photo406): Apache-2.0;
 libglvnd's EGL and GLESv2 (libegl1, libgles2) and Mesa (libegl-mesa0,
 libgl1-mesa-dri): MIT;
 the GNU C library (libc6): LGPL-2.1-or-later; the GCC runtime and the
 C++ library (libgcc-s1, libstdc++6): GPL-3.0-or-later with the GCC
 Runtime Library Exception;
 the Swift runtime and Foundation (static): Apache-2.0 with the Runtime
 Library Exception, ICU's data: the Unicode licence;
 the studio only: SDL2 (libsdl2-2.0-0): Zlib; Xlib (libx11-6): MIT/X11.
 ffmpeg is run as a separate program, not linked.
 The full texts are in /usr/share/common-licenses and in each library's
 /usr/share/doc/PACKAGE/copyright.

Files: *
Copyright: the wobble-run developers
License: GPL-3+
 This program is free software: you can redistribute it and/or modify it
 under the terms of the GNU General Public License as published by the
 Free Software Foundation, either version 3 of the License, or (at your
 option) any later version.
 .
 This program is distributed in the hope that it will be useful, but
 WITHOUT ANY WARRANTY; without even the implied warranty of
 MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE. See the GNU General
 Public License for more details.
 .
 On Debian systems, the complete text of the GNU General Public License
 version 3 can be found in "/usr/share/common-licenses/GPL-3".
COPYRIGHT
}

# control ROOT PACKAGE DEPENDS RECOMMENDS DESCRIPTION...: ROOT/DEBIAN/control.
control() {
  local root="$1" package="$2" deps="$3" recommends="$4"
  shift 4
  mkdir -p "$root/DEBIAN" "$root/usr/share/doc/$package"
  cp "$here/README.md" "$root/usr/share/doc/$package/README.md"
  copyright "$root" "$package"
  {
    echo "Package: $package"
    echo "Version: $version"
    echo "Architecture: $arch"
    echo "Maintainer: wobble-run developers <wobble-run@localhost>"
    echo "Installed-Size: $(du -sk "$root" | cut -f1)"
    echo "Depends: $deps"
    [[ -z "$recommends" ]] || echo "Recommends: $recommends"
    echo "Section: graphics"
    echo "Priority: optional"
    printf '%s\n' "$@"
  } > "$root/DEBIAN/control"
}
control "$stage/root" wobble-run "$depends" ffmpeg \
  "Description: turn a still image into a jelly animation" \
  " A Lua scene script marks soft regions on an image and choreographs" \
  " touches and shakes over virtual time; the frames are written as an" \
  " animated GIF, PNG frames or a video (through ffmpeg). Renders with" \
  " OpenGL ES through EGL (Mesa's llvmpipe needs no GPU) or on the CPU." \
  " This package is headless: it needs no window system (the studio" \
  " window is the package wobble-studio)."
control "$stage/studio" wobble-studio "$studio_depends" "" \
  "Description: the wobble-run studio window (wobble-run edit)" \
  " A window (SDL2 on X11 or Wayland) that plays a wobble-run scene in real" \
  " time, reloads it when it changes, and lets you drag its regions, poke" \
  " them and record takes. Run it as 'wobble-run edit SCENE.lua'."
mkdir -p "$out"
deb="$out/wobble-run_${version}_${arch}.deb"
studio_deb="$out/wobble-studio_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"$compression" --build "$stage/root" "$deb" >&2
dpkg-deb --root-owner-group -Z"$compression" --build "$stage/studio" "$studio_deb" >&2
echo "$deb"
echo "$studio_deb"
