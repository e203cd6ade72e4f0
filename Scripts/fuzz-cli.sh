#!/usr/bin/env bash
# Command-line fuzzer: N random option lists with hostile values (default
# 100000) against the built wobble-run; 0 crashes, 0 hangs expected. The
# generator and the classes are in Scripts/fuzz-cli.py.
#
# Usage: Scripts/fuzz-cli.sh [N]
# Env: WOBBLE_RUN (a built binary; default: a release build, made here),
#      SEED (default 1), JOBS (default: the processor count), HANG (seconds
#      before a case counts as a hang, default 30), LOG (flagged cases).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
if [[ -z "${WOBBLE_RUN:-}" ]]; then
  swift build -c release --product wobble-run >&2
  WOBBLE_RUN=$(swift build -c release --show-bin-path)/wobble-run
fi
exec python3 Scripts/fuzz-cli.py --cases "$n" --seed "${SEED:-1}" --jobs "${JOBS:-$(nproc)}" \
  --hang "${HANG:-30}" --binary "$WOBBLE_RUN" ${LOG:+--log "$LOG"}
