internal import CWobbleSys
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// The one child-process spawner: the video encoder and every probe (such
// as `ffmpeg -encoders`) start their child here, never through Foundation's
// `Process` (which starts threads, cannot set PDEATHSIG and has no
// deadline).

/// A child process started with `wobble_spawn`: in its own process group,
/// killed when the thread that started it exits.
public final class ChildProcess: @unchecked Sendable {
    public enum Status: Equatable, Sendable {
        case running
        case exited(Int32)
        case signalled(Int32)

        /// The status `waitpid` reported.
        init(waitStatus raw: Int32) {
            self = raw & 0x7f == 0 ? .exited((raw >> 8) & 0xff) : .signalled(raw & 0x7f)
        }
    }

    public let pid: Int32
    private let lock = NSLock()
    private var status = Status.running

    /// Starts `executable` with `arguments` (exact bytes, see `PathBytes`)
    /// and the given descriptors as its 0, 1, 2 (and `extra` as its 3).
    public init(_ executable: String, _ arguments: [String], stdin: Int32, stdout: Int32, stderr: Int32, extra: Int32 = -1) throws {
        guard var cStrings = CArguments([executable] + arguments) else { throw PosixError("exec", executable, EINVAL) }
        defer { cStrings.free() }
        let pid = cStrings.pointers.withUnsafeBufferPointer { argv in
            wobble_spawn(argv[0], argv.baseAddress, environ, stdin, stdout, stderr, extra)
        }
        guard pid > 0 else { throw PosixError("exec", executable, errno) }
        self.pid = pid
    }

    /// Waits for the child to end (once; later calls return the status).
    @discardableResult
    public func wait() -> Status {
        lock.lock()
        defer { lock.unlock() }
        if status != .running { return status }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 {
            if errno != EINTR { status = .exited(-1); return status }
        }
        status = Status(waitStatus: raw)
        return status
    }

    /// Whether the child ended within `timeout` seconds (it is reaped);
    /// it is looked at once at least (a timeout of 0 only looks).
    public func waitExited(timeout: Double) -> Bool {
        let deadline = monotonic() + timeout
        while true {
            lock.lock()
            if status != .running { lock.unlock(); return true }
            var raw: Int32 = 0
            let r = waitpid(pid, &raw, WNOHANG)
            if r == pid { status = Status(waitStatus: raw) }
            let ended = status != .running || (r < 0 && errno == ECHILD)
            lock.unlock()
            if ended { return true }
            if monotonic() >= deadline { return false }
            usleep(10_000)
        }
    }

    /// Stops the child cleanly: SIGTERM (its own handler removes what it
    /// was writing), then SIGKILL to its process group when it has not
    /// ended within `grace` seconds. Returns how it ended.
    @discardableResult
    public func terminate(grace: Double) -> Status {
        lock.lock()
        if status == .running { _ = Glibc.kill(pid, SIGTERM) }
        lock.unlock()
        if !waitExited(timeout: grace) { kill() }
        return wait()
    }

    /// SIGKILL to its process group (what it started too), unless it
    /// already ended.
    public func kill() {
        lock.lock()
        defer { lock.unlock() }
        if status == .running {
            _ = Glibc.kill(-pid, SIGKILL)
            _ = Glibc.kill(pid, SIGKILL)
        }
    }
}


extension ChildProcess {
    /// The first executable regular file `name` on `PATH`, or nil.
    public static func findExecutable(_ name: String) -> String? {
        let path = environmentValue("PATH") ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") where !dir.isEmpty {
            let candidate = "\(dir)/\(name)"
            if Posix.kind(candidate) == .regular, PathBytes.withCString(candidate, { access($0, X_OK) }) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// What `output` returns: how the child ended and what it wrote on stdout.
    public struct Output: Sendable {
        public var status: Status
        public var stdout: [UInt8]
    }

    /// Why `output` returned no output.
    public enum Failure: Error, Equatable, Sendable {
        /// It could not be started (no pipe, no process: too few processes
        /// or descriptors allowed, or not executable).
        case notStarted
        /// It ran past the timeout.
        case timedOut
        /// A stop signal arrived (`Signals`).
        case interrupted
    }

    /// `--timeout S`: no wait for a child's answer (a probe such as
    /// `ffmpeg -encoders`) lasts longer than S seconds; nil: each wait's
    /// own limit. Set once, before any child starts.
    public static var answerLimit: Double? {
        get { answerLimitValue.withLock { $0 } }
        set { answerLimitValue.withLock { $0 = newValue } }
    }
    private static let answerLimitValue = Mutex<Double?>(nil)

    /// How long to wait for an answer whose own limit is `own` seconds:
    /// `own`, or `--timeout`'s when that is shorter, with how a message
    /// says it (`10 s`, `2 s (--timeout)`).
    public static func answerTimeout(_ own: Double) -> (seconds: Double, shown: String) {
        if let t = answerLimit, t < own { return (t, "\(String(format: "%g", t)) s (--timeout)") }
        return (own, "\(String(format: "%g", own)) s")
    }

    /// Runs `executable` with `arguments` to its end, stdin and stderr on
    /// /dev/null, and returns what it wrote on stdout (at most `limit`
    /// bytes are kept). When it cannot start, runs past `timeout` seconds
    /// or a stop signal arrives, it is killed (with its process group) and
    /// reaped, nothing is left running, and the `Failure` says which.
    public static func output(_ executable: String, _ arguments: [String], timeout: Double,
                              limit: Int = 16 << 20) -> Result<Output, Failure> {
        var out: [UInt8] = []
        let r = stream(executable, arguments, timeout: timeout) { chunk in
            if out.count < limit { out += chunk.prefix(min(chunk.count, limit - out.count)) }
        }
        return r.map { Output(status: $0, stdout: out) }
    }

    /// Runs `executable` like `output`, but hands what it writes on stdout
    /// to `consume` as it comes (pieces of up to 64 kB), keeping none of
    /// it: memory does not grow with the output. When `consume` throws,
    /// the child is killed and reaped and the error is thrown on. The
    /// child's stderr goes to `stderr` (a descriptor this process keeps
    /// owning), else to /dev/null.
    public static func stream(_ executable: String, _ arguments: [String], timeout: Double, stderr: Int32? = nil,
                              consume: (UnsafeRawBufferPointer) throws -> Void) rethrows -> Result<Status, Failure> {
        guard let null = try? Posix.open("/dev/null", O_RDWR) else { return .failure(.notStarted) }
        defer { Glibc.close(null) }
        guard let pipe = try? Posix.pipe(shown: executable) else { return .failure(.notStarted) }
        let child: ChildProcess
        do {
            child = try ChildProcess(executable, arguments, stdin: null, stdout: pipe.write, stderr: stderr ?? null)
        } catch {
            Glibc.close(pipe.read)
            Glibc.close(pipe.write)
            return .failure(.notStarted)
        }
        Glibc.close(pipe.write)
        defer { Glibc.close(pipe.read) }
        let deadline = monotonic() + timeout
        var buffer = [UInt8](repeating: 0, count: 65536)
        var ended = false
        while !ended {
            let left = deadline - monotonic()
            if left <= 0 || Signals.received != nil { break }
            var p = pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)
            // Short steps: a stop signal is seen within 50 ms.
            let r = poll(&p, 1, Int32(min(left, 0.05) * 1000) + 1)
            if r < 0 && errno != EINTR { break }
            guard r > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { Glibc.read(pipe.read, $0.baseAddress, $0.count) }
            if n < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            if n <= 0 { ended = true; break }
            do {
                try buffer.withUnsafeBytes { try consume(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            } catch {
                child.kill()
                child.wait()
                throw error
            }
        }
        if ended, child.waitExited(timeout: max(0, deadline - monotonic())) {
            return .success(child.wait())
        }
        child.kill()
        child.wait()
        return .failure(Signals.received != nil ? .interrupted : .timedOut)
    }
}

/// The value of the environment variable `name`, its exact bytes kept.
private func environmentValue(_ name: String) -> String? {
    guard let v = getenv(name) else { return nil }
    return PathBytes.string(UnsafeBufferPointer(start: UnsafeRawPointer(v).assumingMemoryBound(to: UInt8.self), count: strlen(v)))
}
