#!/usr/bin/env bash
# Fuzzes the Lua API: random calls to every API function and handle
# operation with random argument types and values (NaN, ±inf, huge numbers,
# nested tables, functions, coroutines, stale handles after reset()), each
# required to fail cleanly (a Lua error string, never a crash or hang).
# The path family gives hostile paths (.. chains, absolute paths, links out
# of the folder, dangling and looping links, empty, NUL bytes, very long
# names, non-UTF-8, /dev/*, /proc/self/..., FIFOs) to image, output,
# enableMotion, require, dofile and loadfile, in the host and rendered by
# the built tool, with canary files outside the scene's folder that must
# stay byte-for-byte intact.
# Usage: Scripts/fuzz-lua.sh [CASES [SEED [SCENES]]]
#   (default 100000 API calls, 100000 path calls, seed 2, 2000 rendered scenes)
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh
export WOBBLE_FUZZ_CASES="${1:-100000}" WOBBLE_FUZZ_SEED="${2:-2}"
export WOBBLE_FUZZ_PATH_CASES="${1:-100000}" WOBBLE_FUZZ_PATH_SCENES="${3:-2000}"
# -enable-testing: the fuzz tests use @testable imports.
swift build -c release -Xswiftc -enable-testing --build-tests --scratch-path .build-fuzz >&2
exec swift test -c release -Xswiftc -enable-testing --skip-build --scratch-path .build-fuzz --disable-swift-testing \
  --filter 'WobbleScriptTests.FuzzTests|WobbleScriptTests.PathFuzzTests|WobbleRunTests.PathFuzzE2ETests'
