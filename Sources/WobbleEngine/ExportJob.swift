import Dispatch
import Synchronization
import WobbleCore
import WobbleScript
import WobbleSystem

/// One export in the background, in-process: the scene rendered to its
/// own output (or fitted to a platform with `RenderOptions.preset`) by the
/// same `Runner` and `PresetRun` the command line calls, on a worker
/// thread. `cancel` stops it at the next frame or script check; the sink
/// removes the file it was writing (nothing half-written is left). The
/// progress and the outcome are read from any thread.
package final class ExportJob: Sendable {
    /// How an export ended.
    package struct Outcome: Sendable, Equatable {
        /// The file written; nil when nothing was.
        package var output: String?
        /// Its size in bytes.
        package var bytes: Int?
        package var width: Int?
        package var height: Int?
        /// One play, in seconds (for a preset: as the platform's player plays it).
        package var seconds: Double?
        package var frames: Int?
        /// What the command line would print after `wrote`: `wrote s.gif: 9 frames, …`.
        package var summary: String?
        /// The run's warnings (without `warning: `).
        package var warnings: [String] = []
        /// The error's first line; nil when the export worked.
        package var error: String?
        /// Stopped by `cancel` (or a read past its deadline: `error` says which).
        package var cancelled = false
    }

    /// What the worker and the caller share.
    private final class Shared: Sendable {
        let state = Mutex<(done: Int, total: Int, outcome: Outcome?)>((0, 0, nil))
        let finished = DispatchSemaphore(value: 0)
    }
    private let shared = Shared()
    private let control: RunControl
    /// What the export renders.
    package let options: RenderOptions

    /// Starts rendering `options` (its `control` is replaced by the job's;
    /// `quiet`: nothing on stderr) on a worker thread.
    package init(options: RenderOptions) {
        let shared = self.shared
        let control = RunControl(progress: { done, total in shared.state.withLock { $0.done = done; $0.total = total } })
        var o = options
        o.control = control
        o.quiet = true
        o.check = false
        self.options = o
        self.control = control
        let work = { @Sendable [o] in
            let outcome = ExportJob.render(o)
            shared.state.withLock { $0.outcome = outcome }
            shared.finished.signal()
        }
        // No thread to be had: the export runs here, before init returns.
        if !SystemThread.detach(work) { work() }
    }

    /// Frames written so far, of how many (0 of 0 while the script runs).
    package var progress: (done: Int, total: Int) { shared.state.withLock { ($0.done, $0.total) } }

    /// How it ended; nil while it runs.
    package var outcome: Outcome? { shared.state.withLock { $0.outcome } }

    /// Asks the export to stop (any thread); `reason` is its error line.
    package func cancel(_ reason: String? = nil) { control.cancel(reason) }

    /// Waits up to `seconds` for the export to end; true when it has.
    package func wait(seconds: Double) -> Bool {
        if outcome != nil { return true }
        guard shared.finished.wait(timeout: .now() + seconds) == .success else { return false }
        shared.finished.signal()
        return true
    }

    /// Runs the render (or the preset's search) on this thread.
    static func render(_ o: RenderOptions) -> Outcome {
        let report = RunReport(json: false)
        report.printsWarnings = false
        var out = Outcome()
        do {
            let s: Runner.Summary
            if let p = o.preset {
                s = try PresetRun(options: o, preset: p).run(report: report)
            } else {
                s = try Runner(options: o).run(report: report)
            }
            out.output = report.output ?? s.output
            out.summary = Runner.describe(s)
        } catch is Interrupted {
            out.cancelled = true
            out.error = o.control.reason ?? "stopped"
        } catch let e as ScriptError where e.kind == .interrupted {
            out.cancelled = true
            out.error = o.control.reason ?? "stopped"
        } catch {
            out.error = Messages.firstLineAndDetails("\(error)").0
        }
        out.bytes = report.bytes
        out.width = report.width
        out.height = report.height
        out.seconds = report.duration
        out.frames = report.frames
        out.warnings = report.warnings
        return out
    }
}
