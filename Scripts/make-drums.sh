#!/usr/bin/env bash
# Synthesises test and gallery audio (16-bit mono 44.1 kHz WAV) from noise
# and sines, with known onset and beat times: its licence is the project's.
#   steady        kick/snare/hats at 120 BPM
#   tempo-change  the same, 120 BPM then 96 BPM
#   swing         120 BPM with triplet-swung hats
#   pad           a soft pad whose chords change at uneven times
#   funk          a syncopated groove at 104 BPM: kick on the beats, snare and
#                 open hat between them (louder), ghost notes
#   noise         white noise (no onsets, no pulse)
# Usage: Scripts/make-drums.sh KIND OUT.wav [--seconds S]
# (Examples/drums/drums.wav: Scripts/make-drums.sh steady Examples/drums/drums.wav --seconds 8)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch=${SCRATCH:-"$root/.build-bench"}
(cd "$root" && swift build -c release --scratch-path "$scratch" --product wobble-sound-bench >&2)
exec "$scratch/release/wobble-sound-bench" synth "$@"
