#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds, runs every test.
# Usage: Scripts/test.sh [extra swift test arguments, e.g. --filter E2ETests]
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh --bench   # ffmpeg (video output tests), ImageMagick (test images)
swift build --build-tests
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
# All tests are XCTest; Swift Testing would only add a "0 tests" line.
swift test --skip-build --disable-swift-testing "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One plain closing line: "tests: N passed, N failed".
summary=$(grep -E "Executed [0-9]+ tests?, with [0-9]+ failures?" "$log" | tail -n 1)
if [[ -n "$summary" ]]; then
  total=$(sed -E 's/.*Executed ([0-9]+) tests?.*/\1/' <<<"$summary")
  failed=$(sed -E 's/.*with ([0-9]+) failures?.*/\1/' <<<"$summary")
  echo "tests: $((total - failed)) passed, $failed failed"
fi
exit "$status"
