#!/usr/bin/env bash
# The whole test suite: installs what it needs, builds, runs every test.
# Usage: Scripts/test.sh [extra swift test arguments, e.g. --filter E2ETests]
set -euo pipefail
cd "$(dirname "$0")/.."
Scripts/install-deps.sh --bench   # ffmpeg (video output tests), ImageMagick (test images),
                                  # Xvfb + xdotool (the studio tests start their own Xvfb
                                  # on a free display number and stop it at the end)
# Playwright for Python in .build/browser-tests/venv (driving Debian's
# chromium); with WOBBLE_BROWSER_TESTS=1 a missing browser fails the browser
# tests instead of skipping them.
WOBBLE_PLAYWRIGHT_PYTHON="$(Scripts/install-browser-tests.sh)"
export WOBBLE_PLAYWRIGHT_PYTHON WOBBLE_BROWSER_TESTS=1
swift build --build-tests
# The release binaries (static Swift standard library), built once: the
# install and .deb tests (InstallTests) install and package them.
swift build -c release --static-swift-stdlib --product wobble-run
swift build -c release --static-swift-stdlib --product wobble-studio
WOBBLE_RELEASE_BINARY="$(swift build -c release --static-swift-stdlib --show-bin-path)/wobble-run"
export WOBBLE_RELEASE_BINARY
# The end-to-end tests run these release binaries too (what ships, and
# several times faster than the debug build at rendering and encoding);
# the in-process tests use the debug libraries. Plain `swift test` runs
# the debug binaries.
if [[ -z "${WOBBLE_RUN_EXECUTABLE:-}" ]]; then
  export WOBBLE_RUN_EXECUTABLE="$WOBBLE_RELEASE_BINARY"
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
# All tests are XCTest; Swift Testing would only add a "0 tests" line.
swift test --skip-build --disable-swift-testing "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One plain closing line: "tests: N passed, N failed, N skipped".
summary=$(grep -E "Executed [0-9]+ tests?, with" "$log" | tail -n 1 || true)
if [[ -n "$summary" ]]; then
  total=$(sed -E 's/.*Executed ([0-9]+) tests?.*/\1/' <<<"$summary")
  failed=$(sed -E 's/.* ([0-9]+) failures?.*/\1/' <<<"$summary")
  skipped=0
  if [[ "$summary" =~ ([0-9]+)\ tests?\ skipped ]]; then skipped=${BASH_REMATCH[1]}; fi
  echo "tests: $((total - failed - skipped)) passed, $failed failed, $skipped skipped"
fi
exit "$status"
