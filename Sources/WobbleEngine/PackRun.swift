import Foundation
import Synchronization
import WobbleCore
import WobbleRender
import WobbleScript
import WobbleSystem

/// How a pack runs: what the command line gives `PackRun`.
package struct PackOptions: Sendable {
    package var manifest = ""
    /// Rows rendered at once (nil: one per core).
    package var jobs: Int?
    package var slice = PackSlice.all
    package var json = false
    package var quiet = false
    package var backend: Backend = .auto
    package var timeout: Double?
    /// With `--slice` N > 1: a row whose clip has more frames than this is
    /// split into N frame ranges, one per slice (0: never).
    package var shardFrames = 300
    /// The tool's version (a new version renders every row again).
    package var version = ""
    /// Test hook: the stage at which the process stops itself.
    package var stopAt: PackStop?
    /// Test hook: once the folder is claimed, wait until this file exists
    /// (creating `<path>.claimed` first).
    package var holdUntil: String?
    package init() {}
}

/// A test hook (`--stop-at`): the pack sends itself a signal at a stage —
/// `claimed`, `row-start:R`, `row-written:R` (the output in place, not yet
/// in the journal), `journal:R` (the journal's temporary file written, not
/// yet renamed), `shard-written:R` — `:INT` for SIGINT instead of SIGKILL.
package struct PackStop: Sendable, Equatable {
    package var stage: String
    package var row: Int?
    package var signal: Int32

    package static func parse(_ text: String) throws -> PackStop {
        var parts = text.split(separator: ":").map(String.init)
        var signal = SIGKILL
        if parts.last == "INT" { signal = SIGINT; parts.removeLast() }
        guard let stage = parts.first, ["claimed", "row-start", "row-written", "journal", "shard-written"].contains(stage) else {
            throw UsageError("--stop-at: '\(text)' is not a stage")
        }
        return PackStop(stage: stage, row: parts.count > 1 ? Int(parts[1]) : nil, signal: signal)
    }

    func fire(_ stage: String, row: Int? = nil) {
        guard stage == self.stage, self.row == nil || self.row == row else { return }
        ThisProcess.send(signal)
        if signal == SIGKILL { while true { pause(seconds: 1) } }
    }
}

/// `wobble-run pack MANIFEST`: many clips in one process. Each row of the
/// manifest is a render under the render's rules (the script sandboxed,
/// the output written atomically), run by one of `jobs` workers, each
/// drawing with its own renderer (its own GL context where it renders with
/// GLES). A finished row recorded in the journal is not rendered again; a
/// row that fails is one line naming it and the others go on; every row
/// is attempted.
package final class PackRun {
    package let options: PackOptions
    /// One line on stderr (an error, a warning, a waiting notice).
    private let output = PackOutput()

    package init(options: PackOptions) { self.options = options }

    /// What the pack did.
    package struct Summary {
        package var rows: Int
        package var selected: Int
        package var written: Int
        package var skipped: Int
        package var failed: [String]
        package var seconds: Double
    }

    /// One piece of work: a whole row, or shard `k` of a long row.
    struct Item: Sendable {
        var plan: Result<PackRowPlan, RunError>
        var row: PackRow
        var shard: (k: Int, count: Int, frames: ClosedRange<Int>)?
    }

    /// A row (or shard) done.
    struct Outcome: @unchecked Sendable {
        enum Status: String { case written, skipped, failed, interrupted, shard }
        var status: Status
        var report: RunReport?
        var error: String?
        var seconds: Double
        var entry: PackJournal.Entry?
    }

    package func run() throws -> Summary {
        let o = options
        let clock = MonotonicClock()
        let start = clock.now()
        let manifest = try PackManifest.read(o.manifest)
        let folder = ScenePaths.folder(o.manifest)
        let state: String
        do { state = try PackState.folder(of: folder) } catch let e as PosixError { throw RunError("\(e)") }
        let identity = String(ContentHash.fnv(PathBytes.bytes(PathPolicy.realPath(o.manifest) ?? o.manifest)
                                              + [0] + ((try? Posix.readFile(o.manifest)) ?? [])), radix: 16)
        let claim = try PackState.claim(state, slice: o.slice, identity: identity, stopped: { Signals.received }) { line in
            if !o.quiet { self.output.line("wobble-run: pack: \(line)") }
        }
        defer { withExtendedLifetime(claim) {} }
        o.stopAt?.fire("claimed")
        if let hold = o.holdUntil {
            _ = try? AtomicFile.write([], to: hold + ".claimed")
            while Posix.kind(hold) == nil && Signals.sleep(0.05) == nil {}
        }
        // What a killed run left in the state folder.
        if let fd = try? Posix.open(state, O_RDONLY | O_DIRECTORY, shown: state) {
            TemporaryName.removeLeftovers(in: fd, shown: state)
            Posix.closeQuietly(fd)
        }

        var base = RenderOptions()
        base.backend = o.backend
        base.timeout = o.timeout
        base.quiet = true
        var plans: [Result<PackRowPlan, RunError>] = manifest.rows.map { row in
            Result { try PackRowPlan(row, folder: folder, base: base, version: o.version) }.mapError { $0 as? RunError ?? RunError("\($0)") }
        }
        // Two rows may not write one file: each names the other.
        var byOutput: [String: [Int]] = [:]
        for (i, p) in plans.enumerated() { if case .success(let plan) = p { byOutput[plan.canonical, default: []].append(i) } }
        for (_, rows) in byOutput where rows.count > 1 {
            for i in rows {
                let others = rows.filter { $0 != i }.map { manifest.rows[$0].name }.joined(separator: ", ")
                if case .success(let plan) = plans[i] {
                    plans[i] = .failure(RunError("output '\(PathBytes.display(plan.key, controls: true))' is also the output of \(others) (each row writes its own file)"))
                }
            }
        }
        let journal = PackJournal.load(state)

        // The work of this slice: its rows, and its shard of each long row.
        var items: [Item] = []
        for (i, row) in manifest.rows.enumerated() {
            if o.slice.count > 1, o.shardFrames > 0, case .success(let plan) = plans[i], plan.options.preset == nil,
               plan.options.frames == nil, !journal.isFinished(plan.key, recipe: plan.recipe, outputPath: plan.output),
               let frames = probeFrames(plan), frames > o.shardFrames {
                let n = o.slice.count, k = o.slice.index
                let range = (k * frames / n)...((k + 1) * frames / n - 1)
                items.append(Item(plan: plans[i], row: row, shard: (k, n, range)))
                continue
            }
            if o.slice.contains(row.index) { items.append(Item(plan: plans[i], row: row, shard: nil)) }
        }

        let jobs = max(1, min(o.jobs ?? ThisProcess.cores, max(items.count, 1)))
        let next = Mutex(0)
        let results = Mutex([Int: Outcome]())
        output.startProgress(total: items.count, enabled: !o.quiet && Posix.isTerminal(2))
        Parallel.run(jobs) { _ in
            while Signals.received == nil {
                let i: Int = next.withLock { n in defer { n += 1 }; return n }
                guard i < items.count else { return }
                let outcome = self.perform(items[i], state: state, journal: journal)
                results.withLock { $0[i] = outcome }
                self.output.finished(item: items[i], outcome: outcome, json: o.json)
            }
        }
        output.endProgress()
        if let s = Signals.received { throw Interrupted(signal: s) }
        let done = results.withLock { $0 }
        var summary = Summary(rows: manifest.rows.count, selected: items.count, written: 0, skipped: 0, failed: [], seconds: clock.now() - start)
        for (i, item) in items.enumerated() {
            switch done[i]?.status {
            case .written?, .shard?: summary.written += 1
            case .skipped?: summary.skipped += 1
            default: summary.failed.append(item.row.name)
            }
        }
        if o.json {
            try Messages.writeStdout("{\"type\":\"summary\",\"rows\":\(summary.rows),\"slice\":\"\(o.slice)\",\"selected\":\(summary.selected),\"written\":\(summary.written),\"skipped\":\(summary.skipped),\"failed\":\(summary.failed.count),\"seconds\":\(NumberText.plain((summary.seconds * 1000).rounded() / 1000))}\n")
        }
        return summary
    }

    /// The clip's frame count (the script run on the virtual clock, as
    /// `--check`), or nil when it cannot be told (the render will say why).
    func probeFrames(_ plan: PackRowPlan) -> Int? {
        var look = plan.options
        look.check = true
        look.quiet = true
        look.output = nil
        look.format = .null
        var runner = Runner(options: look)
        runner.announces = false
        return try? runner.run(report: RunReport(json: false)).frames
    }

    /// Renders one item (or finds it finished).
    func perform(_ item: Item, state: String, journal: PackJournal) -> Outcome {
        let clock = MonotonicClock()
        let start = clock.now()
        let plan: PackRowPlan
        switch item.plan {
        case .failure(let e): return Outcome(status: .failed, error: e.message, seconds: 0)
        case .success(let p): plan = p
        }
        if item.shard == nil, journal.isFinished(plan.key, recipe: plan.recipe, outputPath: plan.output) {
            return Outcome(status: .skipped, seconds: clock.now() - start, entry: journal.rows[plan.key])
        }
        options.stopAt?.fire("row-start", row: item.row.index)
        let report = RunReport(json: false)
        report.printsWarnings = false
        let control = RunControl(watchesSignals: true)
        var o = plan.options
        o.control = control
        do {
            try makeFolders(for: plan.output)
            if let shard = item.shard {
                return try performShard(plan, shard: shard, options: o, report: report, state: state, start: start, clock: clock)
            }
            let summary = try RenderEntry.render(o, report: report)
            options.stopAt?.fire("row-written", row: item.row.index)
            let entry = try record(plan, frames: summary.frames, duration: report.duration ?? 0, inputs: report.inputs, state: state)
            return Outcome(status: .written, report: report, seconds: clock.now() - start, entry: entry)
        } catch {
            return failure(error, control: control, report: report, seconds: clock.now() - start)
        }
    }

    /// The outcome of a row that threw `error`.
    func failure(_ error: Error, control: RunControl, report: RunReport, seconds: Double) -> Outcome {
        if error is Interrupted || (error as? ScriptError)?.kind == .interrupted {
            if let reason = control.reason, Signals.received == nil {
                return Outcome(status: .failed, report: report, error: reason, seconds: seconds)
            }
            return Outcome(status: .interrupted, report: report, error: "interrupted", seconds: seconds)
        }
        return Outcome(status: .failed, report: report, error: PackRun.message(error), seconds: seconds)
    }

    /// Records a finished row in the journal.
    func record(_ plan: PackRowPlan, frames: Int, duration: Double, inputs: [String], state: String) throws -> PackJournal.Entry {
        guard let out = ContentHash.of(file: plan.output) else { throw RunError("output '\(plan.output)' cannot be read back") }
        var unique: [String] = []
        for p in inputs.map(ScenePaths.absolute) where !unique.contains(p) { unique.append(p) }
        let hashed = unique.compactMap { p in ContentHash.of(file: p).map { PackJournal.Input(path: p, hash: $0) } }
        let entry = PackJournal.Entry(recipe: plan.recipe, output: out, frames: frames, duration: duration, inputs: hashed)
        let stop = options.stopAt, row = plan.row.index
        try PackJournal.update(state, beforeRename: { stop?.fire("journal", row: row) }) { j in
            j.rows[plan.key] = entry
            j.shards[plan.key] = nil
        }
        return entry
    }

    /// Creates the folders of `output` that do not exist yet (0755): the
    /// row's plan checked that they lead nowhere outside the pack's folder.
    func makeFolders(for output: String) throws {
        let parent = ScenePaths.folder(output)
        guard Posix.kind(parent) == nil else { return }
        try makeFolders(for: parent)
        let fd = try Posix.open(ScenePaths.folder(parent), O_RDONLY | O_DIRECTORY, shown: ScenePaths.folder(parent))
        defer { Posix.closeQuietly(fd) }
        do {
            try Posix.mkdir(fd, ScenePaths.name(parent), 0o755, shown: parent)
        } catch let e as PosixError where e.code == EEXIST {}
    }

    // MARK: Shards

    /// Renders shard `k` of a long row into the row's shard folder, records
    /// it, and when it was the last one missing, assembles the row.
    func performShard(_ plan: PackRowPlan, shard: (k: Int, count: Int, frames: ClosedRange<Int>), options o: RenderOptions,
                      report: RunReport, state: String, start: Double, clock: MonotonicClock) throws -> Outcome {
        let dir = try shardFolder(plan, state: state)
        let journal = PackJournal.load(state)
        var status = Outcome.Status.shard
        if let s = journal.shards[plan.key], s.recipe == plan.recipe, s.count == shard.count, s.done.contains(shard.k),
           shardFramesPresent(dir, shard.frames) {
            status = .skipped
        } else {
            var so = o
            so.output = dir + "/"
            so.frames = shard.frames
            _ = try RenderEntry.render(so, report: report)
            self.options.stopAt?.fire("shard-written", row: plan.row.index)
            try PackJournal.update(state) { j in
                var s = j.shards[plan.key] ?? PackJournal.Shards(recipe: plan.recipe, count: shard.count, done: [])
                if s.recipe != plan.recipe || s.count != shard.count { s = PackJournal.Shards(recipe: plan.recipe, count: shard.count, done: []) }
                s.done.insert(shard.k)
                j.shards[plan.key] = s
            }
        }
        // The slice that finds every shard done assembles the row (one at a time).
        let assemble = ScenePaths.join(state, "assemble-" + String(ContentHash.fnv(PathBytes.bytes(plan.key)), radix: 16))
        guard let lock = try FileLock.acquire(assemble, .exclusive, wait: true) else { return Outcome(status: status, report: report, seconds: clock.now() - start) }
        return try withExtendedLifetime(lock) {
            let now = PackJournal.load(state)
            if now.isFinished(plan.key, recipe: plan.recipe, outputPath: plan.output) {
                return Outcome(status: status, report: report, seconds: clock.now() - start)
            }
            guard let s = now.shards[plan.key], s.recipe == plan.recipe, s.count == shard.count, s.done.count == shard.count else {
                return Outcome(status: status, report: report, seconds: clock.now() - start)
            }
            var ao = RenderOptions()
            ao.assemble = dir
            ao.output = plan.output
            ao.quiet = true
            ao.control = o.control
            ao.timeout = o.timeout
            let assembled = RunReport(json: false)
            assembled.printsWarnings = false
            _ = try RenderEntry.run(ao, report: assembled)
            let inputs = report.inputs.isEmpty ? [o.scene, o.image].compactMap { $0 } : report.inputs
            let entry = try record(plan, frames: assembled.frames ?? 0, duration: assembled.duration ?? 0, inputs: inputs, state: state)
            if let fd = try? Posix.open(ScenePaths.join(state, "shards"), O_RDONLY | O_DIRECTORY, shown: state) {
                Posix.removeTree(fd, ScenePaths.name(dir))
                Posix.closeQuietly(fd)
            }
            return Outcome(status: .written, report: assembled, seconds: clock.now() - start, entry: entry)
        }
    }

    /// The folder the shards of a row render their frames into.
    func shardFolder(_ plan: PackRowPlan, state: String) throws -> String {
        let shards = ScenePaths.join(state, "shards")
        for (parent, name) in [(state, "shards"), (shards, String(ContentHash.fnv(PathBytes.bytes(plan.key)), radix: 16))] {
            let fd = try Posix.open(parent, O_RDONLY | O_DIRECTORY, shown: parent)
            defer { Posix.closeQuietly(fd) }
            do { try Posix.mkdir(fd, name, 0o755, shown: ScenePaths.join(parent, name)) } catch let e as PosixError where e.code == EEXIST {}
            // The state folder's own names: a link planted there is not entered.
            guard Posix.kind(ScenePaths.join(parent, name), follow: false) == .directory else {
                throw RunError("'\(PathBytes.display(ScenePaths.join(parent, name), controls: true))' is not a folder (the pack's state folder names it itself: remove what is there)")
            }
        }
        return ScenePaths.join(shards, String(ContentHash.fnv(PathBytes.bytes(plan.key)), radix: 16))
    }

    func shardFramesPresent(_ dir: String, _ frames: ClosedRange<Int>) -> Bool {
        frames.allSatisfy { Posix.kind(ScenePaths.join(dir, String(format: "frame_%05d.png", $0))) == .regular }
    }

    /// A row's error as its line says it (after the row's name).
    static func message(_ error: Error) -> String {
        switch error {
        case let e as RunError: e.message
        case let e as UsageError: e.message
        case let e as MediaError: e.message
        case let e as ScriptError: e.message.hasPrefix("wobble-run: ") ? String(e.message.dropFirst(12)) : e.message
        default: "\(error)"
        }
    }
}
