import Dispatch
import Synchronization
import WobbleMedia
#if canImport(Glibc)
import Glibc
#endif

/// SIGINT/SIGTERM/SIGHUP handling (SIGHUP: the terminal or SSH session went
/// away; left alone when inherited as ignored, as under `nohup`): the signal only sets a flag (the render loop and
/// the Lua hook poll it and unwind, removing temporary files); if the main
/// thread has not exited a second later, the handler removes the temporary
/// files itself and exits with 128 + the signal number (SPEC §2, §6).
enum Interrupt {
    private static let received = Atomic<Int32>(0)
    /// Kept alive for the process's life; appended to only by `install()`,
    /// once, on the main thread, and never read.
    nonisolated(unsafe) private static var sources: [DispatchSourceSignal] = []

    /// The signal that asked us to stop, or nil.
    static var signal: Int32? {
        let s = received.load(ordering: .relaxed)
        return s == 0 ? nil : s
    }

    /// Throws `Interrupted` once a signal has arrived.
    static func check() throws {
        if let s = signal { throw Interrupted(signal: s) }
    }

    static func install() {
        for sig in [SIGINT, SIGTERM, SIGHUP] {
            if sig == SIGHUP {
                var old = sigaction()
                if sigaction(SIGHUP, nil, &old) == 0, unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == 1 {
                    continue   // SIG_IGN (nohup): keep ignoring it
                }
            }
            Glibc.signal(sig, SIG_IGN)
            let src = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            src.setEventHandler {
                let (exchanged, _) = received.compareExchange(expected: 0, desired: sig, ordering: .relaxed)
                if !exchanged {
                    // A second signal: stop now (but not in the middle of
                    // moving an output into place). ffmpeg dies with us.
                    CommitWindow.waitUntilClosed(timeout: 30)
                    TemporaryPaths.removeAll()
                    _exit(128 + sig)
                }
                DispatchQueue.global().asyncAfter(deadline: .now() + 1.0) {
                    CommitWindow.waitUntilClosed(timeout: 30)
                    TemporaryPaths.removeAll()
                    _exit(128 + sig)
                }
            }
            src.resume()
            sources.append(src)
        }
    }
}

/// The run was interrupted by `signal`.

