import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The running process itself: its id, how it ends, and replacing it with
/// another program.
public enum ThisProcess {
    /// The process id.
    public static var id: Int32 { getpid() }

    /// The processors this process may use (its affinity mask, which a
    /// batch scheduler narrows to the cores it granted, and a cgroup's CPU
    /// quota, as Foundation reads them), at least 1. Read once, when
    /// first asked (Foundation reads files in /proc and /sys for it: not
    /// something to do per frame).
    public static let cores: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)

    /// Sends `signal` to this process (`kill(getpid(), signal)`): for a
    /// test hook that stops the process at a chosen moment as a signal
    /// from outside would.
    public static func send(_ signal: Int32) {
        kill(getpid(), signal)
    }

    /// Ends the process with `status` (stdio flushed, `atexit` handlers run).
    public static func exit(_ status: Int32) -> Never {
        Glibc.exit(status)
    }

    /// Ends the process with `status` at once (`_exit`): nothing more runs,
    /// for last words from a signal watchdog or a stuck display, where other
    /// threads may be blocked for good.
    public static func exitNow(_ status: Int32) -> Never {
        Glibc._exit(status)
    }

    /// Flushes every stdio stream (what C libraries printed), before
    /// output of our own or before another program takes over.
    public static func flushOutput() {
        fflush(nil)
    }

    /// Replaces this process with the program at `path`, given `arguments`
    /// (the first is its name) as their exact bytes (`execv`). Returns only
    /// when it could not: the reason (EINVAL for an argument with a NUL).
    public static func replace(with path: String, arguments: [String]) -> PosixError {
        guard var argv = CArguments(arguments) else { return PosixError("exec", path, EINVAL) }
        defer { argv.free() }
        guard PathBytes.withCString(path, { execv($0, argv.pointers) }) != nil else { return PosixError("exec", path, EINVAL) }
        return PosixError("exec", path, errno)
    }
}

/// An `argv` for exec and spawn: each argument's exact bytes, NUL-ended,
/// then a null pointer. Nil when an argument holds a NUL byte.
struct CArguments {
    private(set) var pointers: [UnsafeMutablePointer<CChar>?] = []

    init?(_ arguments: [String]) {
        for s in arguments {
            let b = PathBytes.bytes(s)
            guard !b.contains(0), let raw = malloc(b.count + 1) else {
                free()
                return nil
            }
            let p = raw.assumingMemoryBound(to: CChar.self)
            for (i, c) in b.enumerated() { p[i] = CChar(bitPattern: c) }
            p[b.count] = 0
            pointers.append(p)
        }
        pointers.append(nil)
    }

    /// Frees the strings (once the call that reads them has returned).
    mutating func free() {
        for p in pointers { Glibc.free(p) }
        pointers = []
    }
}
