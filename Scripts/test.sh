#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds, runs every test.
# Usage: Scripts/test.sh [extra swift test arguments]
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh --bench   # ffmpeg: video-output tests
swift build --build-tests
swift test --skip-build --parallel --num-workers 2 "$@"
