/// What the effect layer holds for one model at some time.
///
/// The timeline holds one per live model per recorded moment, so it is
/// small: what never changes for a model (its shape, parameters, origin) is
/// one shared `Fixed` object, and its kicks share storage (`KickHistory`).
public struct ModelSnapshot: Sendable, Equatable {
    /// A model's shape, parameters and origin, shared by its snapshots.
    public final class Fixed: Sendable, Equatable {
        public let shape: RegionShape
        public let parameters: WobbleParameters
        public let origin: SketchOrigin?

        public init(shape: RegionShape, parameters: WobbleParameters, origin: SketchOrigin?) {
            self.shape = shape
            self.parameters = parameters
            self.origin = origin
        }

        public static func == (a: Fixed, b: Fixed) -> Bool {
            a === b || (a.shape == b.shape && a.parameters == b.parameters && a.origin == b.origin)
        }
    }

    public private(set) var fixed: Fixed
    /// The kicks its motion model keeps (classic: the latest impulse; spring:
    /// every kick since it last came to rest), oldest first.
    public var kicks: KickHistory

    public var shape: RegionShape {
        get { fixed.shape }
        set { fixed = Fixed(shape: newValue, parameters: fixed.parameters, origin: fixed.origin) }
    }
    public var parameters: WobbleParameters {
        get { fixed.parameters }
        set { fixed = Fixed(shape: fixed.shape, parameters: newValue, origin: fixed.origin) }
    }
    /// The `addSketch` that made it (see `SketchOrigin`).
    public var origin: SketchOrigin? {
        get { fixed.origin }
        set { fixed = Fixed(shape: fixed.shape, parameters: fixed.parameters, origin: newValue) }
    }

    public init(shape: RegionShape, parameters: WobbleParameters, kicks: KickHistory, origin: SketchOrigin? = nil) {
        self.init(fixed: Fixed(shape: shape, parameters: parameters, origin: origin), kicks: kicks)
    }

    public init(fixed: Fixed, kicks: KickHistory) {
        self.fixed = fixed
        self.kicks = kicks
    }

    /// The latest kick, nil before the first.
    public var impulse: Impulse? { kicks.last }
}

/// The recorded state of a scene after every action at one time.
public struct SceneSnapshot: Sendable, Equatable {
    /// Live wobble models, in `prepare` order.
    public var models: [ModelSnapshot]
    /// Sketches of the control layer.
    public var sketches: [RegionShape]
    /// `overlay(true)` in force.
    public var overlay: Bool
    /// The origins of `sketches`, index for index.
    public var sketchOrigins: [SketchOrigin?] = []

    public init(models: [ModelSnapshot], sketches: [RegionShape], overlay: Bool, sketchOrigins: [SketchOrigin?] = []) {
        self.models = models
        self.sketches = sketches
        self.overlay = overlay
        self.sketchOrigins = sketchOrigins
    }

    public static let empty = SceneSnapshot(models: [], sketches: [], overlay: false)
}

/// What happened when: snapshots in time order.
public struct Timeline: Sendable {
    public let entries: [(time: Double, state: SceneSnapshot)]

    public init(entries: [(time: Double, state: SceneSnapshot)]) {
        self.entries = entries
    }

    /// The state after every action at a time `<= t` (± 1e-9 s).
    public func snapshot(at t: Double) -> SceneSnapshot {
        var lo = 0, hi = entries.count   // first entry with time > t + eps
        while lo < hi {
            let mid = (lo + hi) / 2
            if entries[mid].time <= t + timeEpsilon { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? .empty : entries[lo - 1].state
    }
}

/// One moving region of a frame: everything a renderer needs. The motion
/// model (WobbleCore) has already decided the peak and the offset; a
/// renderer does the geometry, the hemisphere profile and the sampling.
///
/// An output pixel `p` inside the region samples the source at
/// `p + m(p) · swing · direction`, `m` the hemisphere profile of the wobble model for
/// the peak `M` (limited to `R` per pixel): `centerOffset` at the center.
public struct RegionFrame: Sendable, Equatable {
    public var shape: RegionShape
    /// `M` before its per-pixel limit to `R`.
    public var peak: Double
    /// The unit direction of the offset, image space.
    public var direction: Point
    /// The signed fraction of `m` the pixel is offset by, in [-1, 1]
    /// (classic: the cycle progress; spring: `−|s|/E`).
    public var swing: Double
    /// The pinned side (`addSketch{pin = ...}`): the pinned profile
    /// replaces the hemisphere; nil: the hemisphere.
    public var pin: PinSide?
    /// The cutout (`addSketch{cutout = ...}`), resolved: on the pixels this
    /// region moves, its object displaced by the offset is drawn over its
    /// plate instead of the source displaced; nil: no cutout.
    public var cutout: CutoutLayer?

    public init(shape: RegionShape, peak: Double, direction: Point, swing: Double, pin: PinSide? = nil,
                cutout: CutoutLayer? = nil) {
        self.shape = shape
        self.peak = peak
        self.direction = direction
        self.swing = swing
        self.pin = pin
        self.cutout = cutout
    }

    /// The sampling offset at the center (`M · swing · direction`).
    public var centerOffset: Point { direction * (peak * swing) }

    /// Whether the region moves any pixel at all: it has a peak and a swing.
    /// A region without either moves nothing, and where regions overlap its
    /// pixels go to the next one (both renderers decide it so).
    public var movesPixels: Bool { peak > 0 && swing != 0 }

    /// The sampling offset at `p` (image pixels), or nil where this region
    /// does not displace `p`.
    @inlinable
    public func offset(at p: Point) -> Point? {
        let m = shape.displacement(at: p, peak: peak, pin: pin)
        let s = m * swing
        return s != 0 ? direction * s : nil
    }
}

/// Frame `k` of a clip: an immutable value, the renderer's only input.
public struct FrameState: Sendable, Equatable, Codable {
    public var index: Int
    public var time: Double
    /// Regions that move in this frame, in `prepare` order. Regions with
    /// zero displacement everywhere are left out.
    public var regions: [RegionFrame]
    /// How overlapping regions combine (`overlap()`).
    public var overlap: OverlapMode
    /// Where samples outside the image read from (`edges()`).
    public var edges: EdgeMode
    /// Control-layer sketches to draw over the frame; empty without overlay.
    public var overlay: [RegionShape]
    /// True when the overlay is on (even with no sketches to draw).
    public var overlayOn: Bool
    /// The live models to draw over the frame with their labels (empty
    /// without overlay).
    public var overlayModels: [OverlayModel] = []

    public init(index: Int, time: Double, regions: [RegionFrame], overlay: [RegionShape] = [], overlayOn: Bool = false,
                overlap: OverlapMode = .sum, edges: EdgeMode = .mirror) {
        self.index = index
        self.time = time
        self.regions = regions
        self.overlap = overlap
        self.edges = edges
        self.overlay = overlay
        self.overlayOn = overlayOn
    }
}

/// A live model as the overlay draws it: its region, its 1-based index
/// among the live models and the line of the `addSketch` that made it.
public struct OverlayModel: Sendable, Equatable, Codable {
    public var shape: RegionShape
    public var index: Int
    public var line: Int?

    public init(shape: RegionShape, index: Int, line: Int?) {
        self.shape = shape
        self.index = index
        self.line = line
    }

    /// `#2 line 14` (`#2` when the line is not known).
    public var label: String { "#\(index)" + (line.map { " line \($0)" } ?? "") }
}

/// The result of running a scene: the clip's frames as a pure function of time.
public struct Clip: Sendable {
    public let fps: Double
    public let frameCount: Int
    /// Virtual time at which the script returned (the clip's frames are
    /// those before it; `length` is how long they play).
    public let duration: Double
    public let imageWidth: Int
    public let imageHeight: Int
    public let timeline: Timeline
    /// `overlap()` and `edges()` of the scene (for the whole clip).
    public let overlap: OverlapMode
    public let edges: EdgeMode
    /// `loop()`: the steady state the frames show (nil: no loop).
    public var loop: LoopPlan?
    /// The cutouts of the clip's models, made once per run after the script
    /// (the engine's scene runner, WobbleVision); a model whose request has
    /// none here moves as a plain region.
    public var cutouts: [CutoutRequest: CutoutLayer] = [:]

    /// Every cutout the clip's models ask for, each once, in the order first
    /// met.
    public var cutoutRequests: [CutoutRequest] {
        var seen = Set<CutoutRequest>(), list: [CutoutRequest] = []
        func add(_ p: WobbleParameters) {
            guard let r = p.cutout, seen.insert(r).inserted else { return }
            list.append(r)
        }
        for e in timeline.entries { for m in e.state.models { add(m.parameters) } }
        for m in loop?.models ?? [] { add(m.parameters) }
        return list
    }

    public init(fps: Double, frameCount: Int, duration: Double, imageWidth: Int, imageHeight: Int, timeline: Timeline,
                overlap: OverlapMode = .sum, edges: EdgeMode = .mirror) {
        self.overlap = overlap
        self.edges = edges
        self.fps = fps
        self.frameCount = frameCount
        self.duration = duration
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        self.timeline = timeline
    }

    /// How long the clip plays: its frames at its rate (90 frames at 30
    /// fps are 3 s, as a GIF of them lasts), whatever time before the next
    /// frame the script returned at.
    public var length: Double { length(frames: frameCount) }

    /// How long `n` of the clip's frames play, in seconds (a `--frames`
    /// selection plays its own frames, not the whole clip).
    public func length(frames n: Int) -> Double { Double(n) / fps }

    /// Frame `k` (time `k / fps`); `overlay` forces the control layer on (`--overlay`).
    public func frame(_ k: Int, overlay forced: Bool = false) -> FrameState {
        let t = Double(k) / fps
        let snap = timeline.snapshot(at: t)
        var regions: [RegionFrame] = []
        func add(_ shape: RegionShape, _ parameters: WobbleParameters, _ r: MotionReading) {
            let peak = shape.maxDisplacement(amplitude: r.level, strength: parameters.strength)
            guard peak > 0, r.swing != 0, peak.isFinite else { return }
            regions.append(RegionFrame(shape: shape, peak: peak, direction: r.offsetDirection, swing: r.swing,
                                       pin: parameters.pin, cutout: parameters.cutout.flatMap { cutouts[$0] }))
        }
        if let loop {
            for m in loop.models where m.shape.canMove { add(m.shape, m.parameters, m.motion.reading(at: t)) }
        } else {
            for m in snap.models where !m.kicks.isEmpty && m.shape.canMove {
                add(m.shape, m.parameters, m.parameters.model.reading(m.kicks.array, at: t, preparedAt: t))
            }
        }
        let on = forced || snap.overlay
        var f = FrameState(index: k, time: t, regions: regions, overlay: on ? snap.sketches : [], overlayOn: on,
                           overlap: overlap, edges: edges)
        if on {
            f.overlayModels = snap.models.enumerated().map { OverlayModel(shape: $1.shape, index: $0 + 1, line: $1.origin?.line) }
        }
        return f
    }
}

/// The steady state a looping clip shows (`loop()`): one period of
/// `period` seconds (the clip's frames / fps) and each live model's looped
/// motion.
public struct LoopPlan: Sendable {
    public struct Model: Sendable {
        public var shape: RegionShape
        public var parameters: WobbleParameters
        public var origin: SketchOrigin?
        public var motion: LoopedMotion
    }
    public var period: Double
    public var models: [Model]
    /// `loop:` warnings (shakes whose gate has no steady answer).
    public var warnings: [String]
}
