#!/usr/bin/env bash
# Cutout benchmark (docs/API.md, "Cutouts"), ratios side by side:
#   1. cutout = "auto" for a 512 px box: `wobble-run cutout` on coffee.png
#      scaled to 1200×800 (decode, GrabCut, PNG out), best of 3;
#   1b. a studio Shift+click: `wobble-run cutout --at` on the crema of the
#      same photo (decode, the click's candidates: GrabCut in each of its
#      squares, the parts, the grouping and its GrabCuts, side by side on
#      every core; the first matted, PNG out), the median of 5, wall and
#      CPU (user + system);
#   2. a moving cutout frame against the same region without a cutout
#      (Examples/cutout with and without `cutout = "auto"`, to a GIF): the
#      CPU time (user + system, less disturbed than wall time by other work
#      on the machine) per frame of 61 moving frames beyond one (setup,
#      GrabCut and plate subtracted), best of 3, per backend;
#   3. memory: the peak RSS of both renders;
#   4. the whole cutout a render makes for "auto" on the 512 px box of part 1
#      (decode, GrabCut, the matte and the plate: its fill), one frame of a
#      scene with that region on the CPU backend, best of 3, side by side
#      with BASE (PARTS=plate runs it alone).
#   Parts 1 and 1b side by side with BASE (another build, e.g. the one before
#   the matte) when it is set; part 1 also says how many grey levels the mask
#   has (a matte: many; a mask scaled up from GrabCut's working size: a few).
# Usage: Scripts/bench-cutout.sh          Env: SCRATCH (build folder, default .build-bench),
#        WOBBLE_RUN (a built binary: no build), BASE (a binary to compare with),
#        BACKENDS (default "gles cpu"), PARTS (default "auto frames plate": "frames" runs 2 and 3 alone)
# Needs ImageMagick (convert) and GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
scratch=${SCRATCH:-.build-bench}
if [[ -n "${WOBBLE_RUN:-}" ]]; then
  bin=$(realpath "$WOBBLE_RUN")
else
  swift build -c release --product wobble-run --scratch-path "$scratch" >&2
  bin="$PWD/$scratch/release/wobble-run"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

parts=${PARTS:-auto frames plate}
backends=${BACKENDS:-gles cpu}

if [[ " $parts " == *" auto "* ]]; then
# 1. "auto" on a 512 px box.
convert Examples/latte/coffee.png -resize 1200x800 "$out/big.png"
builds=("$bin")
[[ -z "${BASE:-}" ]] || builds+=("$(realpath "$BASE")")
for b in "${builds[@]}"; do
  best=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$out/t" "$b" cutout "$out/big.png" --box 340,20,512,512 -o "$out/mask.png"
    t=$(cut -d' ' -f1 "$out/t")
    if [[ -z "$best" ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
  done
  levels=$(convert "$out/mask.png" -format %k info:)
  echo "$b: cutout = \"auto\", 512×512 box of a 1200×800 photo: ${best} s (best of 3; one thread), mask of $levels grey levels"
done

# 1b. A Shift+click on the crema.
for b in "${builds[@]}"; do
  times=() cpus=()
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f "%e %U %S" -o "$out/t" "$b" cutout "$out/big.png" --at 580,290 -o "$out/click.png"
    read -r e u s < "$out/t"
    times+=("$e")
    cpus+=("$(awk "BEGIN{print $u + $s}")")
  done
  median=$(printf "%s\n" "${times[@]}" | sort -g | sed -n 3p)
  cpu=$(printf "%s\n" "${cpus[@]}" | sort -g | sed -n 3p)
  echo "$b: Shift+click (cutout --at) on a 1200×800 photo: ${median} s wall, ${cpu} s CPU (medians of 5: ${times[*]})"
done
fi

if [[ " $parts " == *" plate "* ]]; then
# 4. The cutout a render makes: mask, matte and plate.
[[ -f "$out/big.png" ]] || convert Examples/latte/coffee.png -resize 1200x800 "$out/big.png"
cat > "$out/plate.lua" <<'LUA'
image("big.png")
fps(30)
addSketch{x = 340, y = 20, w = 512, h = 512, cutout = "auto"}
prepare()
wait(0.1)
LUA
builds=("$bin")
[[ -z "${BASE:-}" ]] || builds+=("$(realpath "$BASE")")
for b in "${builds[@]}"; do
  best=""
  for _ in 1 2 3; do
    rm -rf "$out/still"
    /usr/bin/time -f "%e" -o "$out/t" "$b" "$out/plate.lua" -q --backend cpu --frames 1-1 -o "$out/still/" 2>"$out/err"
    t=$(cat "$out/t")
    if [[ -z "$best" ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
  done
  echo "$b: a render's cutout = \"auto\" on the 512×512 box (decode, GrabCut, matte, plate, one CPU frame): ${best} s (best of 3)"
done
fi

[[ " $parts " == *" frames "* ]] || exit 0

# 2 and 3. Moving frames with and without the cutout.
cp Examples/latte/coffee.png "$out/coffee.png"
sed 's|"../latte/coffee.png"|"coffee.png"|' Examples/cutout/cutout.lua > "$out/cutout.lua"
sed 's|, cutout = "auto"||' "$out/cutout.lua" > "$out/patch.lua"
run() { # scene backend frames -> "cpu_s peak_kB" (best of 3)
  local best="" peak=""
  for _ in 1 2 3; do
    /usr/bin/time -f "%U %S %M" -o "$out/t" "$bin" "$out/$1" -q --backend "$2" --frames "$3" -o "$out/clip.gif"
    read -r u s m < "$out/t"
    local t
    t=$(awk "BEGIN{print $u + $s}")
    if [[ -z "$best" ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; fi
    peak=$m
  done
  echo "$best $peak"
}
printf "%-8s %-8s %14s %10s %12s\n" backend scene "ms per frame" ratio "peak RSS"
for backend in $backends; do
  base=""
  for scene in patch.lua cutout.lua; do
    read -r one _ < <(run "$scene" "$backend" 8-8)
    read -r many peak < <(run "$scene" "$backend" 8-68)
    ms=$(awk "BEGIN{printf \"%.1f\", ($many - $one) * 1000 / 60}")
    [[ -n "$base" ]] || base=$ms
    ratio=$(awk "BEGIN{printf \"%.2f×\", $ms / $base}")
    printf "%-8s %-8s %14s %10s %9s MB\n" "$backend" "${scene%.lua}" "$ms" "$ratio" "$((peak / 1024))"
  done
done
