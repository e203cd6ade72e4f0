#!/usr/bin/env bash
# Renderer benchmark: builds wobble-render-bench in release and runs it.
# Prints the median ms per frame of the GLES wobble (1280x720, 4 regions, each
# a tenth of the image) mid-cycle and at cycle boundaries (every region with a
# new amplitude every frame: only uniforms change), of a plain full-image copy
# through the same FBO and read-back, the ratios (goal: <= 1.5 on llvmpipe,
# both), the same regions pinned (pin = "bottom"; goal: pin / bulge <= 1.1),
# a looping spring scene (loop(): the steady state in closed form), the first
# frame of new shapes (their geometry computed once per shape) and the CPU
# reference.
# Usage: Scripts/bench-render.sh [--frames N] [--width W] [--height H] [--dump DIR]
# Env: SCRATCH (build folder, default .build-bench), WOBBLE_EGL_PLATFORM.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${SCRATCH:-.build-bench}
swift build -c release --scratch-path "$scratch" --product wobble-render-bench >&2
exec "$scratch/release/wobble-render-bench" "$@"
