#if canImport(Glibc)
import Glibc
#endif

/// Seconds on the monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`): it
/// never jumps with the wall clock, so every timeout, deadline, latency and
/// progress figure of the tool and the studio is measured on it.
public func monotonic() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// CPU seconds the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`), for
/// reporting what one stage of work cost whatever else the machine runs.
public func threadCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// CPU seconds the whole process has used (`CLOCK_PROCESS_CPUTIME_ID`).
public func processCPUTime() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Sleeps the calling thread for `seconds` (whole, even when a signal
/// arrives; `Signals.sleep` is the sleep a stop signal ends).
public func pause(seconds: Double) {
    guard seconds > 0 else { return }
    var left = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
    var rest = timespec()
    while nanosleep(&left, &rest) != 0 && errno == EINTR { left = rest }
}

/// The local time of day (hours, minutes, seconds) on the wall clock: for
/// telling a person when something happened, never for measuring.
public func localTimeOfDay() -> (hour: Int, minute: Int, second: Int) {
    var t = time(nil)
    var tmv = tm()
    localtime_r(&t, &tmv)
    return (Int(tmv.tm_hour), Int(tmv.tm_min), Int(tmv.tm_sec))
}

/// The clock a component measures time on, injected: the tool and the
/// windows read the monotonic clock, tests a manual one (they never sleep
/// on wall time).
public protocol TimeSource: Sendable {
    /// Seconds; only differences mean anything.
    func now() -> Double
}

/// `monotonic()`: the clock of the real tool and studio.
public struct MonotonicClock: TimeSource {
    public init() {}
    public func now() -> Double { monotonic() }
}

/// A clock moved by hand (tests: nothing sleeps on wall time).
public final class ManualClock: TimeSource, @unchecked Sendable {
    public var t = 100.0
    public init() {}
    public func now() -> Double { t }
}
