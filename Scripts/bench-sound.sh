#!/usr/bin/env bash
# Sound analysis benchmark: builds wobble-sound-bench in release and times
# onsets + beats + tempo of 30 s of synthetic audio (steady drums, drums
# that change tempo 120 -> 96 BPM, a soft pad, a syncopated groove, white
# noise), median and best of 5 runs each.
# Goal: <= 150 ms per 30 s on 2 cores (the analysis runs on one thread).
# Usage: Scripts/bench-sound.sh [--seconds S] [--runs N]
# Env: SCRATCH (build folder, default .build-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${SCRATCH:-.build-bench}
swift build -c release --scratch-path "$scratch" --product wobble-sound-bench >&2
exec "$scratch/release/wobble-sound-bench" bench "$@"
