import Foundation

/// An error raised by a scene operation; `function` names the Lua API
/// function it stands for (`impulse`), so the script host can print
/// `scene.lua:12: impulse: direction must be non-zero`.
public struct SceneError: Error, Equatable, CustomStringConvertible {
    public var function: String
    public var message: String

    public init(_ function: String, _ message: String) {
        self.function = function
        self.message = message
    }

    public var description: String { "\(function): \(message)" }
}

/// A sketch of the control layer (MFSketchModel): four corners and a center.
/// A handle: scripts keep it and edit its points.
public final class Sketch {
    /// Unique within a scene, in creation order.
    public let id: Int
    public var lt: Point
    public var rt: Point
    public var rb: Point
    public var lb: Point
    /// The center assigned by the script, if any; otherwise the center is the
    /// mean of the current corners.
    public var assignedCenter: Point?
    public var parameters: WobbleParameters
    /// Which `addSketch` call made it (the studio's handles and `--overlay`
    /// labels); nil for a sketch made otherwise.
    public var origin: SketchOrigin?

    public init(id: Int, lt: Point, rt: Point, rb: Point, lb: Point, center: Point? = nil,
                parameters: WobbleParameters = .original) {
        self.id = id
        self.lt = lt
        self.rt = rt
        self.rb = rb
        self.lb = lb
        self.assignedCenter = center
        self.parameters = parameters
    }

    public var center: Point {
        get { assignedCenter ?? Point((lt.x + rt.x + rb.x + lb.x) / 4, (lt.y + rt.y + rb.y + lb.y) / 4) }
        set { assignedCenter = newValue }
    }

    /// The region this sketch describes now.
    public var shape: RegionShape { RegionShape(lt: lt, rt: rt, rb: rb, lb: lb, center: center) }
}

/// Which `addSketch` made a sketch: the n-th call of the run (0-based),
/// or the n-th sketch the studio added; with the line of the call when it
/// was made from the scene file itself.
public struct SketchOrigin: Hashable, Sendable, Codable {
    public enum Kind: Hashable, Sendable, Codable {
        case call(Int)
        case added(Int)
    }
    public var kind: Kind
    /// The line of the call in the scene file (nil: another chunk, or added).
    public var line: Int?

    public init(_ kind: Kind, line: Int? = nil) {
        self.kind = kind
        self.line = line
    }
}

/// A wobble model of the effect layer (MFWobbleModel), made by `prepare()`.
public final class WobbleModel {
    public let id: Int
    public let shape: RegionShape
    public let parameters: WobbleParameters
    /// The time of the `prepare()` that made it.
    public let preparedAt: Double
    /// The origin of the sketch it was prepared from.
    public let origin: SketchOrigin?
    /// The kicks its motion model keeps (`MotionModel.adding`), oldest first.
    public internal(set) var kicks: KickHistory = []
    /// In a looping scene, every kick it was given, shakes with their gate
    /// still to judge (in the steady state, by `Scene.finish`).
    public internal(set) var loopKicks: [LoopKick] = []

    init(id: Int, shape: RegionShape, parameters: WobbleParameters, preparedAt: Double, origin: SketchOrigin? = nil) {
        self.id = id
        self.origin = origin
        self.shape = shape
        self.parameters = parameters
        self.preparedAt = preparedAt
    }

    /// The latest kick, nil before the first.
    public var impulse: Impulse? { kicks.last }

    /// Its motion model's reading at time `t` (amplitude 0, direction
    /// `{0, 0}` and cycle start = `preparedAt` before the first impulse).
    public func state(at t: Double) -> MotionReading {
        parameters.model.reading(kicks.array, at: t, preparedAt: preparedAt)
    }

    /// A kick now (`impulse`, `touch`, a shake), as its motion model takes it.
    /// Returns how many kicks were newly stored (for the scene's memory budget).
    @discardableResult
    func kick(_ k: Impulse) -> Int {
        let next = kicks.after(k, becoming: parameters.model.adding(k, to: kicks.array))
        kicks = next.history
        return next.stored
    }

    /// The time from which it is still for good (`now` if it is still now).
    func restTime(now: Double) -> Double {
        guard state(at: now).amplitude > 0 else { return now }
        return Swift.max(now, parameters.model.restTime(kicks.array))
    }

    /// What every snapshot of it shares (made once).
    private lazy var fixed = ModelSnapshot.Fixed(shape: shape, parameters: parameters, origin: origin)

    var snapshot: ModelSnapshot { ModelSnapshot(fixed: fixed, kicks: kicks) }
}

/// One accelerometer sample of a trace, due at `time` (scene seconds).
public struct MotionSample: Sendable, Equatable {
    public var time: Double
    public var ax: Double
    public var ay: Double

    public init(time: Double, ax: Double, ay: Double) {
        self.time = time
        self.ax = ax
        self.ay = ay
    }
}

/// The scene a script builds: control layer, effect layer, virtual clock,
/// motion input. Pure Swift; every operation records into a `Timeline`, from
/// which frames are a pure function of time (nothing stepped frame by frame).
public final class Scene {
    /// Shake magnitude (g) above which a sample starts impulses (original).
    public static let shakeThreshold = 1.0
    /// Models at or above this amplitude ignore a shake (original).
    public static let shakeAmplitudeLimit = 0.3

    public private(set) var now: Double = 0
    public private(set) var fps: Double = 30
    /// Set when `--fps` fixed the rate: `fps(n)` then changes nothing.
    public let fixedFPS: Double?
    public let maxFrames: Int
    /// Size of the source image, once one is known.
    public var imageSize: (width: Int, height: Int)?
    /// `overlap(mode)`: how overlapping regions combine (whole clip).
    public private(set) var overlapMode: OverlapMode = .sum
    /// `edges(mode)`: where samples outside the image read from (whole clip).
    public private(set) var edgeMode: EdgeMode = .mirror
    /// `loop()`: the clip is one period of its own steady state.
    public private(set) var looping = false
    /// Set when `reset()` ran in a looping scene (an error at the end when
    /// the script host did not report it at once).
    private var loopBroken: String?

    public private(set) var sketches: [Sketch] = []
    public private(set) var models: [WobbleModel] = []
    public private(set) var motionEnabled = false
    /// `overlay(on)`: draw the control layer over the following frames.
    public var overlay = false
    /// The time at which the script returned (set by `finish()`, before
    /// the performed events after it).
    public private(set) var scriptEnd: Double = 0

    /// Trace samples not yet applied: `pending[pendingStart...]`, sorted by
    /// time (equal times in file order). Applying one moves `pendingStart`
    /// on (no `removeFirst`: a long trace stays linear).
    private var pending: [MotionSample] = []
    private var pendingStart = 0
    /// Events performed live (`PerformedEvent`, anchored at the start),
    /// in time order, not yet applied.
    private var performedPending: [PerformedEvent] = []
    /// Events performed after the script's end, applied by `finish()`.
    private var performedAfterEnd: [PerformedEvent] = []
    /// True when `perform` was given any event.
    private var hasPerformed = false
    /// When the latest performed event was applied.
    private var lastPerformedTime = 0.0
    private var modelForSketch: [Int: WobbleModel] = [:]
    private var nextID = 1
    private var snapshots: [(time: Double, state: SceneSnapshot)] = []
    /// The bytes the recorded timeline holds (`record`, `kick`), checked
    /// against `historyLimit`.
    private var historyBytes = 0
    /// The bytes the recorded timeline holds so far (an estimate that
    /// counts every stored moment, region entry and kick).
    public var recordedBytes: Int { historyBytes }
    /// The most memory the recorded timeline may hold (default 1 GiB, as
    /// much as the script's own Lua memory): the scene's history lives
    /// outside the Lua heap, so it has a budget of its own. Past it the
    /// scene fails with a clear error instead of taking the machine's memory.
    public let historyLimit: Int

    public init(fixedFPS: Double? = nil, maxFrames: Int = 100_000, historyLimit: Int = 1 << 30) {
        self.fixedFPS = fixedFPS
        self.maxFrames = maxFrames
        self.historyLimit = historyLimit
        if let fixedFPS { fps = fixedFPS }
    }

    /// Events performed live (the studio): each is applied when the clock
    /// reaches it, after the trace samples due at the same time; events
    /// anchored at `.end` are applied by `finish()` after the script's own
    /// end. Non-finite or negative times are dropped. Set before running.
    public func perform(_ events: [PerformedEvent]) {
        let valid = events.filter { $0.time.isFinite && $0.time >= 0 }
        func ordered(_ a: [PerformedEvent]) -> [PerformedEvent] {
            a.enumerated().sorted { l, r in
                l.element.time != r.element.time ? l.element.time < r.element.time : l.offset < r.offset
            }.map(\.element)
        }
        performedPending = ordered(valid.filter { $0.anchor == .start })
        performedAfterEnd = ordered(valid.filter { $0.anchor == .end })
        hasPerformed = !valid.isEmpty
    }

    /// `perform{...}`: touches and shakes at scene times (seconds from the
    /// clip's start), applied when the clock reaches each like an event
    /// performed live; the clip goes on past the script's end for those it
    /// did not reach. A time before now is an error: the events are given
    /// before the clock passes them (a baked take sits before the first
    /// clock step).
    public func schedule(_ events: [PerformedEvent]) throws {
        for e in events {
            guard e.time.isFinite, e.time >= 0 else {
                throw SceneError("perform", "event times must be finite numbers >= 0 (got \(NumberText.plain(e.time)))")
            }
            guard e.time >= now - timeEpsilon else {
                throw SceneError("perform", "an event at \(NumberText.plain(e.time)) s is before now (\(NumberText.plain(now)) s): call perform{...} before the clock passes its events")
            }
        }
        guard !events.isEmpty else { return }
        let all = performedPending + events.map { PerformedEvent(time: $0.time, anchor: .start, action: $0.action) }
        performedPending = all.enumerated().sorted { l, r in
            l.element.time != r.element.time ? l.element.time < r.element.time : l.offset < r.offset
        }.map(\.element)
        hasPerformed = true
    }

    private func apply(_ action: PerformedEvent.Action) {
        switch action {
        case .touch(let a, let b): _ = try? touch(from: a, to: b)
        case .shake(let ax, let ay):
            if ax.isFinite && ay.isFinite { applyShake(ax: ax, ay: ay) }
        }
    }

    /// True once frame 0 is fixed (the clock has moved past 0).
    public var hasRecordedFrame: Bool { now > timeEpsilon }

    // MARK: Scene

    /// `fps(n)`: sets the rate; an error once a frame exists and `n` differs.
    public func setFPS(_ n: Double) throws {
        guard n >= Limits.minFPS, n <= Limits.maxFPS else { throw SceneError("fps", "frames per second must be a number in [0.01, 1000]") }
        if fixedFPS != nil { return }
        if n == fps { return }
        if hasRecordedFrame {
            throw SceneError("fps", "cannot change the frame rate (\(NumberText.rate(fps))) once a frame has been recorded")
        }
        fps = n
    }

    /// `overlap(mode)`: before the first frame only.
    public func setOverlap(_ mode: OverlapMode) throws {
        guard !hasRecordedFrame else {
            throw SceneError("overlap", "the overlap mode applies to the whole clip: set it before the first frame")
        }
        overlapMode = mode
    }

    /// `untilStill()` in a looping scene waits until the models would rest
    /// without the loop (the studio's `L` on a scene that ends that way:
    /// the loop's period is then the clip as it was).
    public var untilStillInLoop = false

    /// `loop()`: before the first frame only. The clip becomes one period
    /// of an endless loop (`LoopedMotion`).
    public func setLoop() throws {
        guard !hasRecordedFrame else {
            throw SceneError("loop", "a loop applies to the whole clip: call loop() before the first frame")
        }
        looping = true
    }

    /// Why `call` is not allowed now in a looping scene (a `loop` error), nil
    /// when it is: `prepare()` later than time 0, `reset()`, `untilStill()`.
    public func loopProblem(_ call: String) -> SceneError? {
        guard looping else { return nil }
        switch call {
        case "prepare" where now > timeEpsilon:
            return SceneError("loop", "prepare() at \(NumberText.plain(now)) s: a looping scene prepares its models at time 0, so that they play for the whole loop")
        case "reset":
            return SceneError("loop", "reset() would end the models a loop plays: a looping scene cannot reset")
        case "untilStill" where untilStillInLoop:
            return nil
        case "untilStill":
            return SceneError("loop", "untilStill() never returns in a looping scene (its models keep moving): use wait(seconds)")
        default:
            return nil
        }
    }

    /// `edges(mode)`: before the first frame only.
    public func setEdges(_ mode: EdgeMode) throws {
        guard !hasRecordedFrame else {
            throw SceneError("edges", "the edge mode applies to the whole clip: set it before the first frame")
        }
        edgeMode = mode
    }

    // MARK: Control layer

    /// `addSketch()`: adds a sketch; the original's default is the square (10,10)–(100,100).
    @discardableResult
    public func addSketch(lt: Point = Point(10, 10), rt: Point = Point(100, 10), rb: Point = Point(100, 100),
                          lb: Point = Point(10, 100), center: Point? = nil,
                          parameters: WobbleParameters = .original, origin: SketchOrigin? = nil) -> Sketch {
        let s = Sketch(id: takeID(), lt: lt, rt: rt, rb: rb, lb: lb, center: center, parameters: parameters)
        s.origin = origin
        sketches.append(s)
        return s
    }

    /// `clear()`: removes every sketch of the control layer.
    public func clear() {
        sketches.removeAll()
    }

    // MARK: Effect layer

    /// `prepare()`: every sketch becomes a live wobble model; the control layer is cleared.
    @discardableResult
    public func prepare() -> [WobbleModel] {
        if let e = loopProblem("prepare") { loopBroken = loopBroken ?? e.message }
        models = sketches.map { s in
            let m = WobbleModel(id: takeID(), shape: s.shape, parameters: s.parameters, preparedAt: now, origin: s.origin)
            modelForSketch[s.id] = m
            return m
        }
        sketches.removeAll()
        return models
    }

    /// The model `prepare()` made from `sketch` (live or not), if any.
    public func model(for sketch: Sketch) -> WobbleModel? { modelForSketch[sketch.id] }

    /// True when `model` is one of the live models.
    public func isLive(_ model: WobbleModel) -> Bool { models.contains { $0 === model } }

    /// `impulse(target, dx, dy, amplitude)`: starts a new cycle now.
    /// `target` nil means every live model.
    public func impulse(_ target: WobbleModel?, dx: Double, dy: Double, amplitude: Double = 1,
                        function: String = "impulse") throws {
        guard dx.isFinite, dy.isFinite else { throw SceneError(function, "direction must be finite") }
        guard let dir = Scene.normalize(dx, dy) else { throw SceneError(function, "direction must be non-zero") }
        guard amplitude.isFinite, amplitude >= 0, amplitude <= 1000 else {
            throw SceneError(function, "amplitude must be a number in [0, 1000]")
        }
        let targets: [WobbleModel]
        if let target {
            guard isLive(target) else {
                throw SceneError(function, "wobble model is no longer live (after reset() or another prepare())")
            }
            targets = [target]
        } else {
            targets = models
        }
        for m in targets {
            let k = Impulse(start: now, direction: dir, amplitude: amplitude)
            stored(kicks: m.kick(k))
            if looping {
                m.loopKicks.append(LoopKick(k, gated: false))
                historyBytes += MemoryLayout<LoopKick>.stride
            }
        }
        try checkHistory(function)
    }

    /// `touch(x0, y0, x1, y1)`: the innermost live model containing the
    /// start point (`RegionShape.innermost`: the smallest corner-quad area,
    /// the first in `prepare` order on a tie) gets an impulse along the
    /// drag. Returns it, or nil.
    @discardableResult
    public func touch(from a: Point, to b: Point) throws -> WobbleModel? {
        guard a.isFinite, b.isFinite else { throw SceneError("touch", "coordinates must be finite numbers") }
        let dx = b.x - a.x, dy = b.y - a.y
        guard dx != 0 || dy != 0 else { return nil }
        guard let index = RegionShape.innermost(models.map(\.shape), containing: a) else { return nil }
        let hit = models[index]
        try impulse(hit, dx: dx, dy: dy, amplitude: 1, function: "touch")
        return hit
    }

    /// `enableMotion([trace])`: switches the accelerometer path on and
    /// schedules the trace's samples (times relative to now).
    public func enableMotion(trace: [MotionSample] = []) {
        motionEnabled = true
        let base = now
        var added = trace.map { MotionSample(time: base + $0.time, ax: $0.ax, ay: $0.ay) }
        // Stable: equal times keep file order (a sorted trace, the usual case, is not sorted again).
        if zip(added, added.dropFirst()).contains(where: { $0.time > $1.time }) {
            added = added.enumerated().sorted { l, r in
                l.element.time != r.element.time ? l.element.time < r.element.time : l.offset < r.offset
            }.map(\.element)
        }
        pending = Scene.merge(pending[pendingStart...], added)
        pendingStart = 0
    }

    /// Merges two runs sorted by time; on equal times `a`'s samples come first.
    private static func merge(_ a: ArraySlice<MotionSample>, _ b: [MotionSample]) -> [MotionSample] {
        if a.isEmpty { return b }
        var out: [MotionSample] = []
        out.reserveCapacity(a.count + b.count)
        var i = a.startIndex, j = b.startIndex
        while i < a.endIndex && j < b.endIndex {
            if b[j].time < a[i].time { out.append(b[j]); j += 1 } else { out.append(a[i]); i += 1 }
        }
        out.append(contentsOf: a[i...])
        out.append(contentsOf: b[j...])
        return out
    }

    /// `shake(ax, ay)`: one accelerometer sample now (g, device axes, y up).
    public func shake(ax: Double, ay: Double) throws {
        guard motionEnabled else { throw SceneError("shake", "motion is off: call enableMotion() first") }
        guard ax.isFinite, ay.isFinite else { throw SceneError("shake", "acceleration must be finite") }
        applyShake(ax: ax, ay: ay)
    }

    private func applyShake(ax: Double, ay: Double) {
        guard (ax * ax + ay * ay).squareRoot() > Scene.shakeThreshold,
              let dir = Scene.normalize(ax, -ay) else { return }
        for m in models {
            let k = Impulse(start: now, direction: dir, amplitude: 1)
            // In a loop the gate is judged in the steady state, at the end.
            if looping {
                m.loopKicks.append(LoopKick(k, gated: true))
                historyBytes += MemoryLayout<LoopKick>.stride
            }
            if m.state(at: now).amplitude < Scene.shakeAmplitudeLimit { stored(kicks: m.kick(k)) }
        }
    }

    /// `reset()`: no models, no sketches, motion off, pending samples dropped.
    public func reset() {
        if let e = loopProblem("reset") { loopBroken = loopBroken ?? e.message }
        models.removeAll()
        sketches.removeAll()
        motionEnabled = false
        pending.removeAll()
        pendingStart = 0
    }

    // MARK: Time

    /// `wait(seconds)`: advances the clock, applying trace samples as it goes.
    public func wait(_ seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else { throw SceneError("wait", "seconds must be a finite number >= 0") }
        try advance(to: now + seconds, function: "wait")
    }

    /// `wait` up to time `t` (now when `t` is past): the clock at exactly
    /// `t`, as `wait(t - from)` from a clock at `from` leaves it.
    public func wait(until t: Double) throws {
        guard t.isFinite else { throw SceneError("wait", "seconds must be a finite number >= 0") }
        try advance(to: Swift.max(now, t), function: "wait")
    }

    /// `untilStill([maxSeconds])`: waits until every live model has amplitude
    /// 0; true when still, false when `maxSeconds` ran out first.
    public func untilStill(maxSeconds: Double? = nil) throws -> Bool {
        if let maxSeconds, !(maxSeconds.isFinite && maxSeconds >= 0) {
            throw SceneError("untilStill", "maxSeconds must be a finite number >= 0")
        }
        if let e = loopProblem("untilStill") { throw e }
        let limit = maxSeconds.map { now + $0 } ?? .infinity
        while true {
            let stillAt = models.map { $0.restTime(now: now) }.max() ?? now
            if stillAt <= now + timeEpsilon { return true }
            if now >= limit - timeEpsilon { return false }
            let target = Swift.min(stillAt, limit)
            guard target.isFinite else {
                let why = models.first { !$0.restTime(now: now).isFinite }?.parameters.model.neverRests ?? "threshold = 0"
                throw SceneError("untilStill", "a model never comes to rest (\(why)): give maxSeconds")
            }
            // Too long a rest (a duration of an hour): say what shortens it.
            let rest = "the models come to rest at \(NumberText.plain((stillAt * 1000).rounded() / 1000)) s: "
                + "give untilStill(maxSeconds), a shorter duration, or a larger --max-frames"
            try advance(to: target, function: "untilStill", tooLong: maxSeconds == nil ? rest : nil)
        }
    }

    /// `tooLong`: what to do when the clip would be longer than the limit.
    private func advance(to target: Double, function: String, tooLong: String? = nil) throws {
        if target > timeEpsilon && !hasRecordedFrame {
            // Frame 0 becomes fixed now.
            guard imageSize != nil else {
                throw SceneError(function, "no image: call image(path) before the first frame, or pass --image")
            }
        }
        let frames = Scene.frameCount(end: target, fps: fps)
        if frames > Double(maxFrames) {
            throw SceneError(function, "the clip would have \(NumberText.plain(frames)) frames, more than the limit of \(maxFrames) (--max-frames)"
                             + (tooLong.map { "; " + $0 } ?? ""))
        }
        try record(function)
        while true {
            let trace = pendingStart < pending.count && pending[pendingStart].time <= target + timeEpsilon
                ? pending[pendingStart].time : nil
            let live = performedPending.first.flatMap { $0.time <= target + timeEpsilon ? $0.time : nil }
            if let t = trace, live.map({ t <= $0 + timeEpsilon }) ?? true {
                let next = pending[pendingStart]
                pendingStart += 1
                now = Swift.max(now, next.time)
                applyShake(ax: next.ax, ay: next.ay)
            } else if live != nil {
                // Performed events are few (a person's pokes): removeFirst is fine.
                let next = performedPending.removeFirst()
                now = Swift.max(now, next.time)
                lastPerformedTime = now
                apply(next.action)
            } else {
                break
            }
            try record(function)
        }
        if pendingStart == pending.count && pendingStart > 0 {
            pending.removeAll()
            pendingStart = 0
        }
        now = Swift.max(now, target)
        try record(function)
    }

    /// Applies the performed events the script's run did not reach (and
    /// those anchored at its end), then lets the clip go on while models
    /// still move, at most `performedTail` seconds after the last event.
    private func finishPerformed() throws {
        guard hasPerformed else { return }
        hasPerformed = false
        let end = now
        let tail = performedPending + performedAfterEnd.map {
            PerformedEvent(time: end + $0.time, anchor: .start, action: $0.action)
        }
        performedAfterEnd = []
        performedPending = tail.sorted { $0.time < $1.time }
        let last = Swift.max(performedPending.last?.time ?? 0, lastPerformedTime)
        try advance(to: Swift.max(now, last), function: "wobble-run")
        // A loop keeps moving: the clip ends with the last event.
        if looping { return }
        _ = try untilStill(maxSeconds: Swift.max(0, last + Scene.performedTail - now))
    }

    // MARK: Timeline

    /// The live state now, as recorded into the timeline.
    public var currentSnapshot: SceneSnapshot {
        SceneSnapshot(models: models.map(\.snapshot), sketches: sketches.map(\.shape), overlay: overlay,
                      sketchOrigins: sketches.map(\.origin))
    }

    /// Records the state now into the timeline (replacing the state
    /// recorded earlier at the same time). Arrays that did not change since
    /// the previous moment are shared with it, and the bytes a new moment
    /// adds count against `historyLimit`; `function` names the call that
    /// went past it.
    private func record(_ function: String) throws {
        var s = currentSnapshot
        if let last = snapshots.last {
            // Share unchanged arrays with the previous moment (no copy).
            if last.state.models == s.models { s.models = last.state.models }
            if last.state.sketches == s.sketches { s.sketches = last.state.sketches }
            if last.state.sketchOrigins == s.sketchOrigins { s.sketchOrigins = last.state.sketchOrigins }
            if abs(last.time - now) <= timeEpsilon {
                snapshots[snapshots.count - 1].state = s
                if snapshots.count >= 2 && snapshots[snapshots.count - 2].state == s { snapshots.removeLast() }
                return
            }
            if last.state == s { return }
            if last.state.models != s.models { historyBytes += s.models.count * MemoryLayout<ModelSnapshot>.stride }
            if last.state.sketches != s.sketches {
                historyBytes += s.sketches.count * (MemoryLayout<RegionShape>.stride + MemoryLayout<SketchOrigin?>.stride)
            }
        }
        historyBytes += MemoryLayout<(Double, SceneSnapshot)>.stride
        try checkHistory(function)
        snapshots.append((now, s))
    }

    /// Counts `stored` new kicks against the history budget.
    private func stored(kicks stored: Int) {
        historyBytes += stored * MemoryLayout<Impulse>.stride
    }

    /// The error once the recorded timeline holds more than `historyLimit`.
    private func checkHistory(_ function: String) throws {
        guard historyBytes > historyLimit else { return }
        let limit = historyLimit >= 1 << 20 ? "\(historyLimit >> 20) MiB" : "\(historyLimit) bytes"
        throw SceneError(function, "the scene's recorded motion needs more than \(limit) of memory "
            + "(\(snapshots.count) moments of \(models.count) live regions): wait longer between kicks, or use fewer regions")
    }

    /// Ends the script: the clip (every frame `k` with
    /// `k/fps < T − 1e-9`, at least frame 0). Errors read `wobble-run: …`.
    public func finish() throws -> Clip {
        scriptEnd = now
        try finishPerformed()
        try record("wobble-run")
        let frames = Scene.frameCount(end: now, fps: fps)
        if frames > Double(maxFrames) {
            throw SceneError("wobble-run", "the clip has \(NumberText.plain(frames)) frames, more than the limit of \(maxFrames) (--max-frames)")
        }
        guard let size = imageSize else {
            throw SceneError("wobble-run", "no image: the scene calls no image(path) and no --image was given")
        }
        var clip = Clip(fps: fps, frameCount: Int(frames), duration: now,
                        imageWidth: size.width, imageHeight: size.height,
                        timeline: Timeline(entries: snapshots), overlap: overlapMode, edges: edgeMode)
        if looping { clip.loop = try loopPlan(period: Double(Int(frames)) / fps) }
        return clip
    }

    /// The steady state of every live model for a loop of `period` seconds:
    /// kicks at `t_i` (folded into `[0, P)`) also act at `t_i − n·P`, shakes
    /// keep their gate, judged in the steady state (`resolveLoopGates`).
    private func loopPlan(period: Double) throws -> LoopPlan {
        if let loopBroken { throw SceneError("loop", loopBroken) }
        var plan = LoopPlan(period: period, models: [], warnings: [])
        for (index, m) in models.enumerated() {
            if let why = WobbleCore.loopProblem(m.parameters, hasKicks: !m.loopKicks.isEmpty) {
                throw SceneError("loop", "model #\(index + 1)" + (m.origin?.line.map { " (addSketch at line \($0))" } ?? "") + ": \(why)")
            }
            // Fold into [0, P): a kick at the clip's end acts at time 0.
            let folded = m.loopKicks.map { k -> LoopKick in
                var k = k
                if k.kick.start >= period - timeEpsilon { k.kick.start = Swift.max(0, k.kick.start - period) }
                return k
            }
            let ordered = folded.enumerated().sorted { l, r in
                l.element.kick.start != r.element.kick.start ? l.element.kick.start < r.element.kick.start : l.offset < r.offset
            }.map(\.element)
            let solved = resolveLoopGates(ordered, parameters: m.parameters, period: period, limit: Scene.shakeAmplitudeLimit)
            if !solved.converged {
                plan.warnings.append("loop: the shakes of model #\(index + 1) pass their gate on alternate periods; the loop shows those that pass on both (it may jump at the seam)")
            }
            plan.models.append(LoopPlan.Model(shape: m.shape, parameters: m.parameters, origin: m.origin,
                                              motion: LoopedMotion(parameters: m.parameters, period: period, kicks: solved.kicks)))
        }
        return plan
    }

    /// Number of frames of a clip that ends at `end`: frames `k >= 0` with
    /// `k/fps < end − 1e-9`, at least 1.
    public static func frameCount(end: Double, fps: Double) -> Double {
        let limit = end - timeEpsilon
        var n = (limit * fps).rounded(.up)
        if !n.isFinite { return .infinity }
        n = Swift.max(n, 1)
        // Past 2^53, n ± 1 == n: the corrections below would never end (and
        // such a clip is far beyond any frame limit anyway).
        if n >= 9_007_199_254_740_992 { return n }
        // Guard the rounding: frame n-1 must satisfy the rule, frame n must not.
        while n > 1 && (n - 1) / fps >= limit { n -= 1 }
        while n / fps < limit { n += 1 }
        return n
    }

    private func takeID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    /// The unit vector along `(dx, dy)`, or nil for a zero (or non-finite) vector.
    public static func normalize(_ dx: Double, _ dy: Double) -> Point? {
        let s = Swift.max(abs(dx), abs(dy))
        guard s > 0, s.isFinite else { return nil }
        let x = dx / s, y = dy / s
        let len = (x * x + y * y).squareRoot()
        return Point(x / len, y / len)
    }
}
