import WobbleCore
import WobbleScript
import WobbleSystem

/// One export in the background, in-process: the scene rendered to its
/// own output (or fitted to a platform with `RenderOptions.preset`)
/// through the engine's one entry the command line calls (`RenderEntry`), on a worker
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

    private let job: BackgroundJob<Outcome>
    /// What the export renders.
    package let options: RenderOptions

    /// Starts rendering `options` (its `control` is replaced by the job's;
    /// `quiet`: nothing on stderr) on a worker thread.
    package init(options: RenderOptions) {
        var o = options
        o.quiet = true
        o.check = false
        self.options = o
        job = BackgroundJob { [o] control in
            var o = o
            o.control = control
            return ExportJob.render(o)
        }
    }

    /// Frames written so far, of how many (0 of 0 while the script runs).
    package var progress: (done: Int, total: Int) { job.progress }

    /// How it ended; nil while it runs.
    package var outcome: Outcome? { job.outcome }

    /// Asks the export to stop (any thread); `reason` is its error line.
    package func cancel(_ reason: String? = nil) { job.cancel(reason) }

    /// Waits up to `seconds` for the export to end; true when it has.
    package func wait(seconds: Double) -> Bool { job.wait(seconds: seconds) }

    /// Runs the render (or the preset's search) on this thread, through `RenderEntry`.
    static func render(_ o: RenderOptions) -> Outcome {
        let report = RunReport(json: false)
        report.printsWarnings = false
        var out = Outcome()
        do {
            let s = try RenderEntry.render(o, report: report)
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
