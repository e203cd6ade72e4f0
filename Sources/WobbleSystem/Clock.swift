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
