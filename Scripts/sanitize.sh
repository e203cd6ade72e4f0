#!/usr/bin/env bash
# The test suite under a sanitizer, in its own build folder (the normal
# .build stays as it is).
#   address: every test under AddressSanitizer (scratch /tmp/asan-build).
#   thread:  the tests where work runs on several threads under
#            ThreadSanitizer (scratch /tmp/tsan-build): the sinks that
#            render and encode at once (GIF encoder queue, PNG encodes on
#            background threads, the video feeder thread), the CPU
#            renderer's parallel region geometry, the commit protocol and
#            its fault injection (signals mid-render, two runs at once), and
#            the end-to-end tests,
#            whose wobble-run is built with the same sanitizer (a report in
#            it makes the tool exit 66, which fails the test).
# Usage: Scripts/sanitize.sh [address|thread] [extra swift test arguments]
# A sanitizer report fails the run; the log keeps every report
# (grep -n 'Sanitizer' in the output).
set -euo pipefail
cd "$(dirname "$0")/.."
kind="${1:-address}"
shift || true
case "$kind" in
  address)
    scratch="${WOBBLE_ASAN_SCRATCH:-/tmp/asan-build}"
    filter=()
    # Leak checking is off: the Swift runtime's caches and Mesa's drivers
    # keep memory to exit on purpose, which LeakSanitizer would report.
    # (Checked: with detect_leaks=1 the reports are XCTest's own test-case
    # objects and a 32-byte weak-reference side table inside Foundation's
    # Process.run, none in wobble-run's code.)
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0:halt_on_error=1:detect_stack_use_after_return=1}"
    export WOBBLE_TEST_SLOWDOWN="${WOBBLE_TEST_SLOWDOWN:-2}"
    ;;
  thread)
    scratch="${WOBBLE_TSAN_SCRATCH:-/tmp/tsan-build}"
    filter=(--filter 'WobbleMediaTests.GIFSinkTests|WobbleMediaTests.PNGSequenceSinkTests|WobbleMediaTests.VideoSinkTests|WobbleMediaTests.CommitRecoveryTests|WobbleRenderTests.CPURendererTests|WobbleRunTests.E2ETests|WobbleRunTests.PolishTests|WobbleRunTests.OutputTrustTests')
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=0:second_deadlock_stack=1}"
    # Frames render several times slower: the interrupt test's latency
    # limit scales with it.
    export WOBBLE_TEST_SLOWDOWN="${WOBBLE_TEST_SLOWDOWN:-4}"
    ;;
  *)
    echo "usage: Scripts/sanitize.sh [address|thread] [swift test arguments]" >&2
    exit 2
    ;;
esac
Scripts/install-deps.sh --bench
swift build --build-tests --sanitize="$kind" --scratch-path "$scratch"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
set +e
swift test --skip-build --sanitize="$kind" --scratch-path "$scratch" --disable-swift-testing "${filter[@]}" "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
reports=$(grep -c -E '^(==[0-9]+==ERROR: AddressSanitizer|WARNING: ThreadSanitizer)' "$log" || true)
summary=$(grep -E "Executed [0-9]+ tests?, with" "$log" | tail -n 1 || true)
echo "sanitize ($kind): ${summary:-no summary}; $reports sanitizer report(s)"
if [[ "$reports" != 0 && "$status" == 0 ]]; then status=1; fi
exit "$status"
