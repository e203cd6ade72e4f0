import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Work done in order on one thread of its own, beside the caller's: how a
/// sink overlaps its encoding with the render. The thread starts with the
/// first piece of work; a thread that cannot be started (a cgroup's
/// `pids.max`, `ulimit -u`, no memory for its stack) leaves the work to the
/// caller, at once: it is done either way, and never waits for a thread
/// that will not come (libdispatch's pool retries a refused thread forever,
/// which hung a GIF render under a small `pids.max`).
///
/// One producer: `async` and `sync` are called from one thread at a time.
public final class SerialWorker: @unchecked Sendable {
    private final class State: @unchecked Sendable {
        let condition = NSCondition()
        var tasks: [() -> Void] = []
        var busy = false
        var stopping = false
    }

    private let state = State()
    private var thread: pthread_t?
    /// The thread could not be started: work runs on the caller.
    public private(set) var inline = false

    public init() {}

    deinit {
        guard let thread else { return }
        state.condition.lock()
        state.stopping = true
        state.condition.broadcast()
        state.condition.unlock()
        pthread_join(thread, nil)
    }

    /// Runs `work` after everything queued before it, on the worker's thread
    /// (on the caller's when there is none).
    public func async(_ work: @escaping () -> Void) {
        guard startIfNeeded() else {
            work()
            return
        }
        state.condition.lock()
        state.tasks.append(work)
        state.condition.broadcast()
        state.condition.unlock()
    }

    /// Waits for everything queued, then runs `work` on the caller's thread
    /// while the worker is idle (nothing else runs meanwhile); its result.
    public func sync<T>(_ work: () throws -> T) rethrows -> T {
        state.condition.lock()
        while state.busy || !state.tasks.isEmpty { state.condition.wait() }
        state.condition.unlock()
        return try work()
    }

    private func startIfNeeded() -> Bool {
        if thread != nil { return true }
        if inline { return false }
        let state = self.state
        guard let t = SystemThread.start({ SerialWorker.serve(state) }) else {
            inline = true
            return false
        }
        thread = t
        return true
    }

    /// The worker thread: runs the tasks in order until told to stop.
    private static func serve(_ state: State) {
        state.condition.lock()
        while true {
            while state.tasks.isEmpty && !state.stopping { state.condition.wait() }
            if state.tasks.isEmpty && state.stopping { break }
            let task = state.tasks.removeFirst()
            state.busy = true
            state.condition.unlock()
            task()
            state.condition.lock()
            state.busy = false
            state.condition.broadcast()
        }
        state.condition.unlock()
    }
}
