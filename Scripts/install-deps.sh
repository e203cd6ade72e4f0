#!/usr/bin/env bash
# Installs the Debian packages wobble-run needs to build, test and render.
# Does nothing when they are all present already. Needs root (or sudo).
# Usage: Scripts/install-deps.sh [--bench]   (--bench adds what the tests and
# benchmarks run: ffmpeg, imagemagick, and Xvfb + xdotool + x11-apps for the
# studio's window tests, luacheck, man-db for the install tests, chromium and
# python3-venv for the browser studio's tests, slurm-wlm + munge for the
# pack's job-array test)
set -euo pipefail

packages=(
  pkg-config
  liblua5.4-dev               # the scene scripts
  libegl-dev libgles-dev      # EGL + OpenGL ES headers and loaders
  libegl-mesa0 libgl1-mesa-dri # Mesa: llvmpipe through EGL "surfaceless"
  libpng-dev                  # PNG in and out
  libturbojpeg0-dev           # JPEG in (TurboJPEG API)
  libgif-dev                  # GIF out
  libimagequant-dev           # GIF palettes
  libwebp-dev                 # animated WebP out (WebPAnimEncoder, libwebpmux)
  liblcms2-dev                # colour: ICC profiles to sRGB on load (Little CMS)
  zlib1g-dev                  # PNG iCCP profiles (zlib-compressed)
  libopencv-dev               # cutouts: GrabCut and inpainting (opencv_core, imgproc, photo)
  libsdl2-dev                 # the studio window (wobble-run edit)
  libcivetweb-dev             # the browser studio's HTTP + WebSocket server (wobble-run serve)
)
if [[ "${1:-}" == "--bench" || "${WOBBLE_INSTALL_BENCH:-}" == 1 ]]; then
  packages+=(ffmpeg imagemagick xvfb xdotool x11-apps)
  # Reading WebP/APNG back in the tests (Pillow), img2webp for the benchmark.
  packages+=(python3-pil python3-numpy webp)
  # The install and .deb tests: luacheck, man + col, strip, dpkg-deb.
  packages+=(lua-check man-db bsdextrautils binutils dpkg)
  # The concurrency tests slow renames down with strace's fault injection.
  packages+=(strace)
  # The browser studio's tests: Debian's chromium (headless, WebGL2 on
  # SwiftShader) and a python venv for Playwright (Scripts/install-browser-tests.sh).
  packages+=(chromium python3-venv)
  # A single-node Slurm for the pack's job-array test (Scripts/slurm-pack.sh).
  packages+=(slurm-wlm munge)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
