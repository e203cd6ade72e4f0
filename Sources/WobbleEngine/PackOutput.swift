import Foundation
import Synchronization
import WobbleCore
import WobbleSystem

/// What a pack says while it runs, from any worker: one line per row that
/// failed (`wobble-run: pack.csv:4: …`) and its warnings, the `--json`
/// object of each row as it ends, and on a terminal a progress line with
/// the pack's rows done and its time left (the rows per second so far).
final class PackOutput: Sendable {
    private struct Progress {
        var total = 0
        var done = 0
        var failed = 0
        var enabled = false
        var start = 0.0
        var lastPrint = -Double.infinity
        var shown = false
    }
    private let state = Mutex(Progress())
    private let clock = MonotonicClock()

    func startProgress(total: Int, enabled: Bool) {
        let now = self.clock.now()
        state.withLock { $0 = Progress(total: total, enabled: enabled, start: now) }
    }

    /// A line on stderr (above the progress line).
    func line(_ text: String) {
        state.withLock { p in
            clear(&p)
            printError(text)
        }
    }

    private func clear(_ p: inout Progress) {
        if p.shown {
            Messages.writeStderr("\r\u{1B}[K")
            p.shown = false
        }
    }

    func endProgress() {
        state.withLock { clear(&$0) }
    }

    /// A row (or shard) ended: its lines, its object, the progress.
    func finished(item: PackRun.Item, outcome: PackRun.Outcome, json: Bool) {
        let now = clock.now()
        state.withLock { p in
            clear(&p)
            if outcome.status == .failed, let e = outcome.error {
                printError("wobble-run: \(item.row.name): \(e)")
            }
            for w in outcome.report?.warnings ?? [] { printError("wobble-run: warning: \(item.row.name): \(w)") }
            if json { try? Messages.writeStdout(PackOutput.object(item, outcome) + "\n") }
            if outcome.status != .interrupted { p.done += 1 }
            if outcome.status == .failed { p.failed += 1 }
            guard p.enabled, now - p.lastPrint > 0.2 || p.done == p.total else { return }
            p.lastPrint = now
            let t = now - p.start
            let rate = t > 0 ? Double(p.done) / t : 0
            let left = rate > 0 ? Double(p.total - p.done) / rate : 0
            let failed = p.failed > 0 ? ", \(p.failed) failed" : ""
            Messages.writeStderr(String(format: "pack: %d/%d rows%@  %.1f clips/min  %@ left", p.done, p.total, failed, rate * 60,
                                                       ProgressReporter.clock(left)))
            p.shown = true
        }
    }

    /// The `--json` object of one row: where it is, its output, what
    /// became of it, and what the render reports (or, for a row skipped,
    /// what the journal remembers).
    static func object(_ item: PackRun.Item, _ outcome: PackRun.Outcome) -> String {
        func d(_ v: Double?) -> String {
            guard let v, v.isFinite else { return "null" }
            return NumberText.plain((v * 1000).rounded() / 1000)
        }
        func n(_ v: Int?) -> String { v.map(String.init) ?? "null" }
        let r = outcome.report
        let key = (try? item.plan.get())?.key ?? item.row.fields["output"]
        var fields = [
            "\"type\":\"row\"", "\"row\":\(item.row.index)", "\"line\":\(item.row.line)",
            "\"output\":\(key.map { RunReport.quote(RunReport.name($0).text, display: false) } ?? "null")",
            "\"status\":\"\(outcome.status.rawValue)\"",
        ]
        if let s = item.shard { fields.append("\"shard\":\"\(s.k)/\(s.count)\",\"shard_frames\":\"\(s.frames.lowerBound)-\(s.frames.upperBound)\"") }
        let ok = outcome.status == .written || outcome.status == .skipped || outcome.status == .shard
        fields += [
            "\"bytes\":\(ok ? n(outcome.entry?.output.size ?? r?.bytes) : "null")",
            "\"frames\":\(n(r?.frames ?? outcome.entry?.frames))",
            "\"duration\":\(d(r?.duration ?? outcome.entry?.duration))",
            "\"width\":\(n(r?.width))", "\"height\":\(n(r?.height))",
            "\"seconds\":\(d(outcome.seconds))",
            "\"warnings\":[\((r?.warnings ?? []).map { RunReport.quote($0) }.joined(separator: ","))]",
            "\"error\":\(outcome.error.map { RunReport.quote($0) } ?? "null")",
        ]
        return "{" + fields.joined(separator: ",") + "}"
    }
}
