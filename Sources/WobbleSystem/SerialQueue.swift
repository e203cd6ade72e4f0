import Dispatch

/// Work run one piece at a time, in order, off the caller's thread: the
/// one way a module outside WobbleSystem gets a serial queue (a live
/// session's runs, the studio's cutout jobs, the browser studio's session
/// and message delivery). Backed by a serial Dispatch queue; kept here so
/// that how such work gets its thread has one home, as `SerialWorker` (a
/// thread of its own, for a sink beside the render) and `SystemThread` do.
public final class SerialQueue: @unchecked Sendable {
    private let queue: DispatchQueue

    /// A queue named `label` (shown in a debugger and crash reports).
    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `work` after everything queued before it, on the queue's thread.
    public func async(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    /// Runs `handler` on the queue every `seconds`, the first time
    /// `seconds` from now, until the returned timer is cancelled (or let go).
    public func repeating(every seconds: Double, _ handler: @escaping @Sendable () -> Void) -> RepeatingTimer {
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + seconds, repeating: seconds)
        source.setEventHandler(handler: handler)
        source.resume()
        return RepeatingTimer(source)
    }

    /// Waits for everything queued, runs `work` on the queue, returns its
    /// result. Never from work running on this queue (it would wait for itself).
    public func sync<T>(_ work: () throws -> T) rethrows -> T {
        try queue.sync(execute: work)
    }
}

/// A repeating timer of a `SerialQueue` (`repeating(every:_:)`): stops at
/// `cancel()` or when it is let go.
public final class RepeatingTimer: @unchecked Sendable {
    private let source: DispatchSourceTimer

    init(_ source: DispatchSourceTimer) { self.source = source }

    /// Stops it: the handler is not called again.
    public func cancel() { source.cancel() }

    deinit { source.cancel() }
}
