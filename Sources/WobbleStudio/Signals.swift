import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT, SIGTERM and SIGHUP end the studio like closing the window (a take
/// being recorded is written), with status 128 + the signal number. The
/// signal only sets a flag that the window's loop polls (at least every
/// 50 ms).
enum StudioSignals {
    private static let received = Atomic<Int32>(0)
    /// Kept alive for the process's life; appended to only by `install()`,
    /// once, on the main thread, and never read.
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// The signal that asked the studio to stop, or nil.
    static var signal: Int32? {
        let s = received.load(ordering: .relaxed)
        return s == 0 ? nil : s
    }

    static func install() {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            var old = sigaction()
            if sig == SIGHUP, sigaction(SIGHUP, nil, &old) == 0,
               unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == 1 {
                continue   // SIG_IGN (nohup): keep ignoring it
            }
            Glibc.signal(sig, SIG_IGN)
            let src = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            src.setEventHandler { received.store(sig, ordering: .relaxed) }
            src.resume()
            sources.append(src)
        }
    }
}
