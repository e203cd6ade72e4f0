#!/usr/bin/env bash
# Selection benchmark (docs/performance.md, "Selection"): on the hand-masked
# set (Tests/WobbleVisionTests/SelectSet: 20 objects in CC0 and public-domain
# photos, outlines made by hand; Scripts/select-masks.py draws them), for each
# object:
#   - the IoU of the first candidate of a Shift+click at the object's middle
#     (the pixel farthest inside it);
#   - NoC@85: the clicks to reach IoU 0.85, simulated the standard way (each
#     next click at the middle of the largest wrong area: a 6-pixel dot of
#     object or background, as the studio's Shift/Alt strokes; see
#     SelectSet.swift for what a click is), at most 20 (never: counted 21);
#   - the object from its box (IoU), as "auto" reads a region: the region's corners on the box
#     ("box"; its curves then cut the box's corners), and 20% of the box's
#     size out on each side ("loose box", as a region drawn around it);
#   - the seconds a click's candidates take (wall, and the process's CPU
#     over them: the work runs side by side on every core), a digest of the
#     candidates (their bytes, in order: two builds that print the same
#     digest for an object give the same candidates in the same order),
#     "studio": the candidates plus what the window does before it shows
#     the first (the first matted, a region fitted around each), and a
#     corrective click's cutout (the mean);
# and the summary: first-candidate IoU median and mean, mean NoC@85, mean box
# IoUs, the candidates' median time (wall and CPU). A release build of the tests (the IoUs
# and clicks are the same in a debug build, which CONFIG=debug uses as built:
# only the times differ).
# Usage: Scripts/bench-select.sh       Env: SCRATCH (build folder, default .build-bench),
#        CONFIG (release, default; debug: the tests as `swift build --build-tests` left them),
#        WOBBLE_SELECT_MAX_CLICKS (default 20: NoC@85's limit; 1 measures the first candidate and the box only),
#        WOBBLE_SELECT_ONLY (labels, comma-separated parts: `coffee/crema,camera/`),
#        WOBBLE_SELECT_TRACE=1 (each corrective click: where it lands, the largest wrong area, the IoU after),
#        WOBBLE_SELECT_DUMP=FOLDER (a PNG of each click's state there: the mask right green, too much
#        red, missed blue, the region yellow, the dots white/black; look at them),
#        WOBBLE_SELECT_BOXES=1 (instead: each box read by GrabCut several ways, ours and plain
#        rectangle mode at 256 px, 512 px and full size: why a box falls short),
#        WOBBLE_SELECT_BOXFIT=1 (instead: each box, tight and 20% out, read the way before this
#        round (GrabCut's two readings) and through candidates, side by side: IoU, CPU seconds,
#        the candidate taken; BoxFitTests),
#        WOBBLE_SELECT_OUTLINE=1 (instead: one magnetic outline per object, 8, 12 and 16 points
#        clicked along its edge 2 px in or out, alternately: IoU and seconds; OutlineSetTests)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${CONFIG:-release}" == debug ]]; then
  run=(swift test --skip-build)
else
  run=(swift test -c release -Xswiftc -enable-testing --scratch-path "${SCRATCH:-.build-bench}")
fi
if [[ -n "${WOBBLE_SELECT_BOXFIT:-}" ]]; then
  WOBBLE_BOXFIT_BENCH=1 "${run[@]}" --filter "BoxFitTests/testBenchmarkTheBoxesBeforeAndAfter" 2>&1 | grep '^bench-boxfit:'
  exit
fi
if [[ -n "${WOBBLE_SELECT_OUTLINE:-}" ]]; then
  WOBBLE_SELECT_BENCH=1 "${run[@]}" --filter "OutlineSetTests/testBenchmarkOneOutlineOverTheWholeSet" 2>&1 | grep '^bench-outline:'
  exit
fi
export WOBBLE_SELECT_BENCH=1
test=testBenchmarkTheWholeSet
[[ -n "${WOBBLE_SELECT_BOXES:-}" ]] && test=testBenchmarkTheBoxReadings
"${run[@]}" --filter "SelectionSetTests/$test" 2>&1 | grep -E '^(bench-select|trace):'
