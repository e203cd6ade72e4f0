#!/usr/bin/env bash
# Fuzz the image loader: mutate valid PNG and JPEG files (bit flips,
# truncations, insertions, deletions, splices, header dimensions, chunk and
# segment lengths, chunk data with fixed CRCs) and decode each with
# ImageIO. Zero crashes and hangs are expected; every failure must be a
# MediaError. The test suite runs a short version of the same campaign
# (Tests/WobbleMediaTests/ImageFuzzTests.swift).
#
# Usage: Scripts/fuzz-images.sh [CASES [SEED]]
#   CASES  number of mutated files (default $WOBBLE_FUZZ_CASES, else 20000)
#   SEED   generator seed (default $WOBBLE_FUZZ_SEED, else random); a run is
#          reproducible from its seed
# Prints: cases, how many decoded, how many were rejected (by reason), the
# slowest case. On a crash or hang the offending file is kept as
# fuzz-crash-<seed>.bin in the current folder.
set -euo pipefail
cases="${1:-${WOBBLE_FUZZ_CASES:-20000}}"
seed="${2:-${WOBBLE_FUZZ_SEED:-$(( (RANDOM << 15) | RANDOM ))}}"
here="$(pwd)"
cd "$(dirname "$0")/.."
scratch="${WOBBLE_FUZZ_SCRATCH:-.build-fuzz}"
flags=(-c release -Xswiftc -enable-testing --scratch-path "$scratch")

last="$(mktemp -t wobble-fuzz-case.XXXXXX)"
log="$(mktemp -t wobble-fuzz-log.XXXXXX)"
trap 'rm -f "$last" "$log"' EXIT

echo "fuzz-images: building (release)…" >&2
swift build "${flags[@]}" --build-tests >&2

limit=$(( 300 + cases / 20 ))   # seconds for the whole run: a hang fails it
echo "fuzz-images: $cases cases, seed $seed" >&2
status=0
WOBBLE_FUZZ_CASES="$cases" WOBBLE_FUZZ_SEED="$seed" WOBBLE_FUZZ_LAST="$last" \
    timeout "$limit" swift test "${flags[@]}" --skip-build \
    --filter 'WobbleMediaTests.ImageFuzzTests' >"$log" 2>&1 || status=$?

grep -E '^fuzz:' "$log" || true
if [ "$status" -ne 0 ]; then
    grep -E 'error|Fatal|signal|crash' "$log" | head -20 >&2 || true
    cp "$last" "$here/fuzz-crash-$seed.bin"
    echo "fuzz-images: FAILED (status $status); last case kept as fuzz-crash-$seed.bin" >&2
    exit 1
fi
echo "fuzz-images: no crash, no hang" >&2
