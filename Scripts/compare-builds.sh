#!/usr/bin/env bash
# Byte-for-byte comparison of two builds' frames (a tool, not a test): run it
# after a change to the renderers that must leave every frame as it was.
#
# Both binaries render the same scenes as PNG frames (--format png) and every
# file is compared with cmp:
#  - each Examples/*/*.lua, 30 frames (--frames A-B with A a tenth of the
#    way into the clip), at the scene's size and downscaled (--width 240);
#  - Examples/cat with --overlay;
#  - small scenes of its own for what the gallery lacks: a pinned region
#    at the image's edge with edges("clamp"), overlapping regions with
#    overlap("first") and edges("mirror") reaching past the edge, the same
#    with overlap("sum"), and a pinned region with --overlay.
# For each case it prints the frames compared and how many distinct frames
# there are (a case whose frames are all alike shows nothing moving).
#
# Usage: BEFORE=/path/to/old/wobble-run AFTER=/path/to/new/wobble-run Scripts/compare-builds.sh
# Env: BACKEND (default gles; the backend of both, or of BEFORE only when
#      BACKEND_AFTER is set), BACKEND_AFTER (AFTER's backend: e.g. BACKEND=cpu
#      on a build where cpu was the reference, against BACKEND_AFTER=gles),
#      FRAMES (frames per case, default 30), KEEP (a folder: the frames are
#      kept there, else deleted). A case whose files differ also prints the
#      lowest and the mean PSNR of its frames (ImageMagick's compare, RGBA).
# Exit status: 0 when every file is the same, 1 on any difference.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BEFORE:?set BEFORE to the wobble-run to compare against}"
: "${AFTER:?set AFTER to the wobble-run to check}"
before=$(realpath "$BEFORE")
after=$(realpath "$AFTER")
backend=${BACKEND:-gles}
backend_after=${BACKEND_AFTER:-$backend}
count=${FRAMES:-30}
if [[ -n "${KEEP:-}" ]]; then
  mkdir -p "$KEEP"
  tmp=$(realpath "$KEEP")
else
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
fi
photo=$PWD/Examples/cat/chelsea.png

# The extra scenes (on the cat photo, 451x300, given with --image).
cat > "$tmp/pin-edge.lua" <<'LUA'
fps(30)
edges("clamp")
addSketch{ lt = {300, -20}, rt = {470, -20}, rb = {460, 120}, lb = {310, 120}, pin = "bottom", strength = 0.2 }
addSketch{ x = -30, y = 200, w = 140, h = 120, pin = "left", strength = 0.2, duration = 0.5 }
prepare()
impulse(1, 1, 0.5)
impulse(2, 0, -1)
wait(1.5)
LUA
cat > "$tmp/first-mirror.lua" <<'LUA'
fps(30)
edges("mirror")
overlap("first")
addSketch{ x = -40, y = -30, w = 260, h = 200, strength = 0.25 }
addSketch{ x = 150, y = 100, w = 200, h = 160, strength = 0.2, duration = 0.4 }
addSketch{ x = 330, y = 180, w = 140, h = 140, strength = 0.3 }
prepare()
impulse(1, 1, 1)
impulse(2, -1, 0.2)
wait(0.3)
impulse(3, 0.3, 1)
wait(1.2)
LUA
sed 's/overlap("first")/overlap("sum")/' "$tmp/first-mirror.lua" > "$tmp/sum-mirror.lua"
sed 's/edges("mirror")/edges("clamp")/' "$tmp/sum-mirror.lua" > "$tmp/sum-clamp.lua"

# Frames to render for a scene: A-B, 30 frames from a tenth of the clip.
range() { # scene args...
  local n
  n=$("$before" "$@" --check --json -q 2>/dev/null | tail -1 | sed -n 's/.*"frames":\([0-9]*\).*/\1/p')
  [[ -n $n ]] || { echo "compare-builds: $1: no frame count" >&2; exit 1; }
  local a=$((n / 10))
  local b=$((a + count - 1))
  ((b < n)) || b=$((n - 1))
  echo "$a-$b"
}

failed=0 cases=0
# One case: name, scene, then options for both binaries.
compare() {
  local name=$1 scene=$2
  shift 2
  local frames
  frames=$(range "$scene" "$@")
  for side in before after; do
    local bin=$before be=$backend
    [[ $side == after ]] && { bin=$after; be=$backend_after; }
    mkdir -p "$tmp/$name/$side"
    "$bin" "$scene" "$@" --frames "$frames" --backend "$be" --format png -q -o "$tmp/$name/$side/"
  done
  local files differ=0 distinct
  files=$(cd "$tmp/$name/before" && ls | wc -l)
  for f in "$tmp/$name/before"/*; do
    if ! cmp -s "$f" "$tmp/$name/after/$(basename "$f")"; then
      differ=$((differ + 1))
    fi
  done
  [[ $files == $(cd "$tmp/$name/after" && ls | wc -l) ]] || differ=$((differ + 1))
  distinct=$(md5sum "$tmp/$name/before"/* | cut -d' ' -f1 | sort -u | wc -l)
  cases=$((cases + 1))
  if ((differ > 0)); then
    failed=1
    local dbs
    dbs=$(for f in "$tmp/$name/before"/*.png; do
            { command compare -metric PSNR "$f" "$tmp/$name/after/$(basename "$f")" null: 2>&1 || true; } | awk '{print ($1 == "inf" ? 99 : $1)}'
          done | sort -g | awk '{s += $1; a[NR] = $1} END {printf "PSNR min %.1f dB, mean %.1f dB", a[1], s / NR}')
    printf "DIFFER %-28s frames %s: %d of %d files differ; %s\n" "$name" "$frames" "$differ" "$files" "$dbs"
  else
    printf "same   %-28s frames %s: %d files, %d distinct\n" "$name" "$frames" "$files" "$distinct"
  fi
}

for scene in Examples/*/*.lua; do
  name=$(basename "$scene" .lua)
  compare "$name" "$scene"
  compare "$name-w240" "$scene" --width 240
done
compare cat-overlay Examples/cat/cat.lua --overlay
for extra in pin-edge first-mirror sum-mirror sum-clamp; do
  compare "$extra" "$tmp/$extra.lua" --image "$photo"
done
compare pin-edge-overlay "$tmp/pin-edge.lua" --image "$photo" --overlay
compare first-mirror-w200 "$tmp/first-mirror.lua" --image "$photo" --width 200

if ((failed)); then
  echo "compare-builds: frames differ (backend $backend, after $backend_after)"
  exit 1
fi
echo "compare-builds: all $cases cases byte-identical (backend $backend, after $backend_after)"
