internal import CWobbleSys
#if canImport(Glibc)
import Glibc
#endif

/// The one signal handler of the tool and the studio. SIGINT, SIGTERM,
/// SIGHUP and SIGXCPU (a soft CPU-time limit, as batch schedulers send it)
/// ask the program to stop: a C handler installed with sigaction records
/// the first one and writes it into a self-pipe; no thread and no Dispatch
/// source is needed to see it (under a pids limit none could be created),
/// and the program's loops poll `received`. SIGHUP inherited as ignored (as
/// under `nohup`) stays ignored. SIGXFSZ (a file over `ulimit -f`) is
/// ignored: the write fails with EFBIG and the normal cleanup runs.
public enum Signals {
    /// The signals that ask the program to stop.
    public static let stopping: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGXCPU]

    /// Installs the handler (once; later calls do nothing).
    public static func install() {
        guard !installed else { return }
        installed = true
        signal(SIGXFSZ, SIG_IGN)
        for sig in stopping {
            if sig == SIGHUP {
                var old = sigaction()
                if sigaction(SIGHUP, nil, &old) == 0, unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == 1 {
                    continue   // SIG_IGN (nohup): keep ignoring it
                }
            }
            _ = wobble_signal_catch(sig)
        }
    }

    /// Ignores SIGPIPE: every write is checked, so a reader that went away
    /// (`| head -c 10`, a dead ffmpeg) is an error with one clear line
    /// (EPIPE), not a silent death. Inherited through exec.
    public static func ignoreBrokenPipe() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// Set only by `install`, on the main thread, before any signal.
    nonisolated(unsafe) private static var installed = false

    /// The first stop signal that arrived, or nil.
    public static var received: Int32? {
        let s = wobble_signal_received()
        return s == 0 ? nil : s
    }

    /// Sleeps `seconds`; returns at once with the signal when one arrived
    /// (before or during the sleep).
    public static func sleep(_ seconds: Double) -> Int32? {
        let end = monotonic() + seconds
        while true {
            if let s = received { return s }
            let left = end - monotonic()
            if left <= 0 { return nil }
            var p = pollfd(fd: wobble_signal_fd(), events: Int16(POLLIN), revents: 0)
            // The pipe may have been drained by `escalate`'s watchdog: the
            // flag is checked again at least every 50 ms.
            _ = poll(&p, p.fd >= 0 ? 1 : 0, Int32(min(left, 0.05) * 1000) + 1)
        }
    }

    /// What `escalate` runs; set once, before its watchdog starts.
    nonisolated(unsafe) private static var escalation: ((Int32) -> Void)?

    /// Runs `action` with the signal if the program has not ended `grace`
    /// seconds after the first stop signal, or at once on a second one: a
    /// watchdog blocked on the self-pipe. Where no thread can be created (a
    /// pids limit) there is no watchdog, and the program's own polling of
    /// `received` is what stops it.
    public static func escalate(after grace: Double, _ action: @escaping (Int32) -> Void) {
        guard escalation == nil, wobble_signal_fd() >= 0 else { return }
        escalation = action
        escalationGrace = grace
        var thread = pthread_t()
        _ = pthread_create(&thread, nil, { _ in
            Signals.watchdog()
            return nil
        }, nil)
    }

    nonisolated(unsafe) private static var escalationGrace = 1.0

    private static func watchdog() {
        let fd = wobble_signal_fd()
        var byte: UInt8 = 0
        func next(timeout: Double?) -> Bool {
            let end = timeout.map { monotonic() + $0 }
            while true {
                let ms = end.map { Int32(max(0, $0 - monotonic()) * 1000) } ?? -1
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let r = poll(&p, 1, ms)
                if r > 0, read(fd, &byte, 1) == 1 { return true }
                if r == 0 { return false }
            }
        }
        _ = next(timeout: nil)
        _ = next(timeout: escalationGrace)
        escalation?(received ?? SIGTERM)
    }
}
