import Foundation
import WobbleCore
import WobbleMedia
import WobbleScript
import WobbleSystem

/// A take: the events performed after the end of the scripted clip, and
/// how they are written as Lua after the scene's own text.
public struct Take: Sendable {
    /// Offsets after the script's end, whole milliseconds, and the action.
    public var events: [(milliseconds: Int, action: PerformedEvent.Action)] = []

    public init() {}

    /// The event as the session applies it (anchored at the script's end).
    public static func performed(milliseconds: Int, action: PerformedEvent.Action) -> PerformedEvent {
        PerformedEvent(time: Double(milliseconds) / 1000, anchor: .end, action: action)
    }

    /// Image pixels with one decimal, g with three: the values written are
    /// the values applied.
    public static func rounded(_ a: PerformedEvent.Action) -> PerformedEvent.Action {
        func r(_ v: Double, _ s: Double) -> Double { (v * s).rounded() / s }
        switch a {
        case .touch(let p, let q): return .touch(from: Point(r(p.x, 10), r(p.y, 10)), to: Point(r(q.x, 10), r(q.y, 10)))
        case .shake(let ax, let ay): return .shake(ax: r(ax, 1000), ay: r(ay, 1000))
        }
    }

    static func number(_ v: Double, decimals: Int) -> String { LuaLiteral.number(v, decimals: decimals) }

    /// A looping scene's clip as the take sees it: the time its script
    /// ends and the loop's period (whole frames: `frames / fps`).
    public struct Loop: Sendable {
        public var scriptEnd: Double
        public var period: Double
        public var fps: Double
        public init(scriptEnd: Double, period: Double, fps: Double) {
            self.scriptEnd = scriptEnd
            self.period = period
            self.fps = fps
        }

        /// The seconds after the script's end at which a take `recorded`
        /// seconds long ends: the clip is then a whole number of periods
        /// (two at least), the end placed a quarter frame before the last
        /// period's end so that its frame count is exact.
        public func end(recorded: Double, lastEvent: Double) -> Double {
            let covered = scriptEnd + max(recorded, lastEvent)
            let k = max(2, (covered / period - 1e-9).rounded(.up))
            return k * period - 0.25 / fps - scriptEnd
        }
    }

    /// The Lua block appended to the scene: `wait`, `touch`, `shake` at the
    /// performed times and a final `untilStill` (with `maxSeconds` when
    /// given: a model that never rests), or for a looping scene the `wait`
    /// that ends the take on a whole number of periods (`loopEnd` seconds
    /// after the script's end).
    public func block(maxSeconds: Double? = nil, loopEnd: Double? = nil, sceneName: String, output: String? = nil) -> String {
        // The name as messages show it: valid UTF-8, and no newline that
        // would end the comment.
        var out = "\n-- Take recorded with `wobble-run edit \(ScenePaths.shown(sceneName))`: what was performed\n"
        out += "-- after the scripted clip, to the millisecond.\n"
        if let output {
            out += "-- The take renders to its own file, never over the scene's output.\n"
            out += "output(\(LuaLiteral.string(output)))\n"
        }
        if events.contains(where: { if case .shake = $0.action { return true } else { return false } }) {
            out += "enableMotion()\n"
        }
        var at = 0
        for e in events {
            if e.milliseconds > at {
                out += "wait(\(Take.number(Double(e.milliseconds - at) / 1000, decimals: 3)))\n"
                at = e.milliseconds
            }
            switch e.action {
            case .touch(let p, let q):
                out += "touch(\([p.x, p.y, q.x, q.y].map { Take.number($0, decimals: 1) }.joined(separator: ", ")))\n"
            case .shake(let ax, let ay):
                out += "shake(\(Take.number(ax, decimals: 3)), \(Take.number(ay, decimals: 3)))\n"
            }
        }
        if let loopEnd {
            out += "-- The scene loops: the take ends on a whole number of its periods.\n"
            out += "wait(\(Take.number(max(0, loopEnd - Double(at) / 1000), decimals: 6)))\n"
        } else {
            out += maxSeconds.map { "untilStill(\(Take.number($0, decimals: 3)))\n" } ?? "untilStill()\n"
        }
        return out
    }

    /// `<scene>-take-N.lua` beside the scene, N the first free number
    /// (nothing there, not even a dangling link). The scene's path is a
    /// `PathBytes` string: so is this one, with the scene's exact bytes.
    public static func freePath(scenePath: String) -> String {
        ScenePaths.firstFree(beside: scenePath, tag: "take", ext: "lua")
    }

    /// Writes the take beside the scene, atomically: the scene's text as it
    /// is on disk now (or `sceneText`: the scene with the studio's unsaved
    /// edits), then the block. The take is run once (on the virtual
    /// clock) before it is written; a model that never rests gets
    /// `untilStill(maxSeconds)` with the recorded length. Returns the path.
    /// `control` stops the check runs (at the script's next count hook):
    /// then it throws `Interrupted`, and neither the take nor the hidden
    /// file it is checked from is left.
    package func write(scenePath: String, sceneText: [UInt8]? = nil, recordedSeconds: Double, loop: Loop? = nil,
                       options: SessionOptions, control: RunControl = RunControl()) throws -> String {
        let text: [UInt8]
        do {
            text = try sceneText ?? Posix.readFile(scenePath)
        } catch let e as PosixError {
            throw SessionError("cannot read the scene '\(scenePath)' for the take: \(Posix.reason(e.code))")
        }
        let name = ScenePaths.name(scenePath)
        let separator: [UInt8] = text.last == UInt8(ascii: "\n") || text.isEmpty ? [] : [UInt8(ascii: "\n")]
        let path = Take.freePath(scenePath: scenePath)
        let loopEnd = loop?.end(recorded: recordedSeconds, lastEvent: Double(events.last?.milliseconds ?? 0) / 1000)
        var block = self.block(loopEnd: loopEnd, sceneName: name)
        var maxSeconds: Double?
        // Run the take once before writing it (from a hidden file beside
        // the scene, so its relative paths resolve as the take's will).
        var run = try Take.check(text + separator + Array(block.utf8), beside: scenePath, options: options, control: control)
        try control.check()
        if let problem = run.problem {
            guard problem.contains("never comes to rest"), loopEnd == nil else {
                throw SessionError("the take does not run: \(Take.naming(problem, hidden: run.hidden, as: path))")
            }
            let last = Double(events.last?.milliseconds ?? 0) / 1000
            maxSeconds = max(1, recordedSeconds - last)
            block = self.block(maxSeconds: maxSeconds, sceneName: name)
            run = try Take.check(text + separator + Array(block.utf8), beside: scenePath, options: options, control: control)
            try control.check()
            if let again = run.problem {
                throw SessionError("the take does not run: \(Take.naming(again, hidden: run.hidden, as: path))")
            }
        }
        // A scene that names its output: the take names its own.
        if let output = run.output {
            block = self.block(maxSeconds: maxSeconds, loopEnd: loopEnd, sceneName: name, output: Take.outputName(take: path, sceneOutput: output))
        }
        try control.check()
        try AtomicFile.write(text + separator + Array(block.utf8), to: path, name: .fresh)
        return path
    }

    /// The output a take at `take` writes when its scene writes
    /// `sceneOutput`: `<scene>-take-N.<ext>` with the scene's extension,
    /// `<scene>-take-N_frames/` for a folder or a pattern of frames.
    public static func outputName(take: String, sceneOutput: String) -> String {
        let base = ScenePaths.baseName(take)
        let ext = ScenePaths.fileExtension(sceneOutput)
        if sceneOutput.hasSuffix("/") || sceneOutput.contains("%") || ext.isEmpty { return base + "_frames/" }
        return base + "." + ext
    }


    /// Runs `bytes` as a scene beside `scenePath` (a hidden file, removed
    /// afterwards); the first error line, or nil.
    /// Throws when the file to check cannot be written beside the scene
    /// (then the take could not be written either), naming the system's
    /// reason (a read-only folder, a name too long).
    static func check(_ bytes: [UInt8], beside scenePath: String, options: SessionOptions, control: RunControl) throws -> (problem: String?, output: String?, hidden: String) {
        // (A short name: never longer than the take's own.)
        let hidden = ScenePaths.join(ScenePaths.folder(scenePath), ".\(ScenePaths.baseName(scenePath).prefix(64))-take-check-\(ThisProcess.id).lua")
        do {
            // A name of our own: whatever was planted there (a link, a
            // hard link to another file) is replaced, never written through.
            try AtomicFile.write(bytes, to: hidden, name: .madeUp)
        } catch {
            try? Posix.unlink(AT_FDCWD, hidden, shown: hidden)
            throw SessionError("cannot write beside \(ScenePaths.shown(scenePath)): \(error)")
        }
        defer { try? Posix.unlink(AT_FDCWD, hidden, shown: hidden) }
        let r = check(hidden, options: options, control: control)
        return (r.problem, r.output, hidden)
    }

    /// A problem found running the hidden copy, naming the take's own file
    /// instead (the user never sees the hidden one).
    static func naming(_ problem: String, hidden: String, as take: String) -> String {
        problem.replacingOccurrences(of: hidden, with: take)
            .replacingOccurrences(of: ScenePaths.name(hidden), with: ScenePaths.name(take))
    }

    /// Runs the take at `path` on the virtual clock; the first error line
    /// (nil when it ran) and the output its script names.
    static func check(_ path: String, options: SessionOptions, control: RunControl) -> (problem: String?, output: String?) {
        var o = options
        o.scenePath = path
        let runner = SceneRunner(options: o) { try ImageIO.load(path: $0) }
        do {
            let r = try runner.run(missingScene: { SessionError("scene '\(ScenePaths.shown($0))': no such file") }) { so in
                so.shouldAbort = { control.stopped }
            }
            return (nil, r.outputPath)
        } catch let e as ScriptError {
            return (e.message, nil)
        } catch {
            return ("\(error)", nil)
        }
    }
}

/// A take written in the background, in-process: `Take.write` (its check
/// runs of the scene included) on a worker thread, so the window goes on
/// answering. `cancel` stops the check at its script's next count hook;
/// neither the take nor the hidden file it is checked from is left.
package final class TakeJob: Sendable {
    /// How the write ended.
    package struct Outcome: Sendable, Equatable {
        /// The take's file; nil when it was not written.
        package var path: String?
        /// Why it was not (the error's text, or the reason it was cancelled).
        package var error: String?
        /// Stopped by `cancel`.
        package var cancelled = false
    }

    private let job: BackgroundJob<Outcome>
    /// The take being written.
    package let take: Take

    /// Starts writing `take` after `sceneText` (nil: the scene file) beside `scenePath`.
    package init(take: Take, scenePath: String, sceneText: [UInt8]?, recordedSeconds: Double, loop: Take.Loop?,
                 options: SessionOptions) {
        self.take = take
        job = BackgroundJob { control in
            do {
                let path = try take.write(scenePath: scenePath, sceneText: sceneText, recordedSeconds: recordedSeconds, loop: loop,
                                          options: options, control: control)
                return Outcome(path: path)
            } catch is Interrupted {
                return Outcome(error: control.reason ?? "stopped", cancelled: true)
            } catch {
                // A check stopped in its script reads as a problem of the take: it was cancelled.
                if control.stopped { return Outcome(error: control.reason ?? "stopped", cancelled: true) }
                return Outcome(error: "\(error)")
            }
        }
    }

    /// How it ended; nil while it runs.
    package var outcome: Outcome? { job.outcome }

    /// Asks the write to stop (any thread); `reason` is its error.
    package func cancel(_ reason: String? = nil) { job.cancel(reason) }

    /// Waits up to `seconds` for the write to end; true when it has.
    package func wait(seconds: Double) -> Bool { job.wait(seconds: seconds) }
}
