# Sourced by the benchmark scripts (from the repository's root).
# wobble_binary: the wobble-run to measure: $WOBBLE_RUN when it is set (no
# build), else a release build in $SCRATCH (default .build-bench), built now.
wobble_binary() {
  if [[ -n "${WOBBLE_RUN:-}" ]]; then
    realpath "$WOBBLE_RUN"   # the scripts may run it from another folder
    return
  fi
  local scratch=${SCRATCH:-.build-bench}
  swift build -c release --scratch-path "$scratch" --product wobble-run >&2
  echo "$PWD/$scratch/release/wobble-run"
}
