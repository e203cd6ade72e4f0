#!/usr/bin/env bash
# Fuzzes the Lua API: random calls to every API function and handle
# operation with random argument types and values (NaN, ±inf, huge numbers,
# nested tables, functions, coroutines, stale handles after reset()), each
# required to fail cleanly (a Lua error string, never a crash or hang).
# Usage: Scripts/fuzz-lua.sh [CASES [SEED]]   (default 100000 calls, seed 2)
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
export WOBBLE_FUZZ_CASES="${1:-100000}" WOBBLE_FUZZ_SEED="${2:-2}"
swift build -c release --build-tests --scratch-path .build-fuzz >&2
exec swift test -c release --skip-build --scratch-path .build-fuzz --disable-swift-testing --filter 'WobbleScriptTests.FuzzTests'
