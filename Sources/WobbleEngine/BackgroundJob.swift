import Dispatch
import Synchronization
import WobbleSystem

/// Work for a front end, in-process on a worker thread: the work gets a
/// run control (cancel it from any thread: the frame loop and the script's
/// count hook stop at their next check), reports its frames through it,
/// and ends with an outcome. The progress and the outcome are read from
/// any thread. What an export (`ExportJob`) and a take's write (`TakeJob`)
/// run on.
package final class BackgroundJob<Outcome: Sendable>: Sendable {
    /// What the worker and the caller share.
    private final class Shared: Sendable {
        let state = Mutex<(done: Int, total: Int, outcome: Outcome?)>((0, 0, nil))
        let finished = DispatchSemaphore(value: 0)
    }
    private let shared = Shared()
    /// The control the work polls.
    package let control: RunControl

    /// Starts `work` on a worker thread.
    package init(_ work: @escaping @Sendable (RunControl) -> Outcome) {
        let shared = self.shared
        let control = RunControl(progress: { done, total in shared.state.withLock { $0.done = done; $0.total = total } })
        self.control = control
        let run = { @Sendable in
            let outcome = work(control)
            shared.state.withLock { $0.outcome = outcome }
            shared.finished.signal()
        }
        // No thread to be had: the work runs here, before init returns.
        if !SystemThread.detach(run) { run() }
    }

    /// Frames written so far, of how many (0 of 0 before the first).
    package var progress: (done: Int, total: Int) { shared.state.withLock { ($0.done, $0.total) } }

    /// How it ended; nil while it runs.
    package var outcome: Outcome? { shared.state.withLock { $0.outcome } }

    /// Asks the work to stop (any thread); `reason` is what the control says.
    package func cancel(_ reason: String? = nil) { control.cancel(reason) }

    /// Waits up to `seconds` for the work to end; true when it has.
    package func wait(seconds: Double) -> Bool {
        if outcome != nil { return true }
        guard shared.finished.wait(timeout: .now() + seconds) == .success else { return false }
        shared.finished.signal()
        return true
    }
}
