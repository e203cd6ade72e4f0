/// What the effect layer holds for one model at some time.
public struct ModelSnapshot: Sendable, Equatable {
    public var shape: RegionShape
    public var parameters: WobbleParameters
    public var impulse: Impulse?

    public init(shape: RegionShape, parameters: WobbleParameters, impulse: Impulse?) {
        self.shape = shape
        self.parameters = parameters
        self.impulse = impulse
    }
}

/// The recorded state of a scene after every action at one time.
public struct SceneSnapshot: Sendable, Equatable {
    /// Live wobble models, in `prepare` order.
    public var models: [ModelSnapshot]
    /// Sketches of the control layer.
    public var sketches: [RegionShape]
    /// `overlay(true)` in force.
    public var overlay: Bool

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

/// One moving region of a frame: everything a renderer needs.
public struct RegionFrame: Sendable, Equatable {
    public var shape: RegionShape
    /// Unit direction, image space.
    public var direction: Point
    /// `M` before its per-pixel limit to `R`.
    public var peak: Double
    /// Cycle progress in [-1, 1]: `cycleProgress(tau:duration:)` of the two
    /// below (what the CPU reference uses).
    public var progress: Double
    /// `τ`: time since the current cycle began, seconds.
    public var tau: Double
    /// `D`: the cycle duration, seconds. The GLES backend evaluates the
    /// cycle progress from `tau` and `duration` in its shader.
    public var duration: Double

    /// A region at time `tau` of a cycle of `duration` seconds (as
    /// `Clip.frame` makes them); `progress` is `cycleProgress(tau:duration:)`.
    public init(shape: RegionShape, direction: Point, peak: Double, tau: Double, duration: Double) {
        self.shape = shape
        self.direction = direction
        self.peak = peak
        self.tau = tau
        self.duration = duration
        progress = cycleProgress(tau: tau, duration: duration)
    }

    /// A region with a given cycle progress; `tau` is chosen so that
    /// `cycleProgress(tau:duration:)` gives `progress` back (to rounding;
    /// `progress` itself is kept exactly).
    public init(shape: RegionShape, direction: Point, peak: Double, progress: Double,
                duration: Double = WobbleParameters.original.duration) {
        self.shape = shape
        self.direction = direction
        self.peak = peak
        self.progress = progress
        self.duration = duration
        tau = cycleTau(progress: progress, duration: duration)
    }

    /// The sampling offset at `p` (image pixels), or nil where this region
    /// does not displace `p` (so a later region may).
    @inlinable
    public func offset(at p: Point) -> Point? {
        let m = shape.displacement(at: p, peak: peak)
        let s = m * progress
        return s != 0 ? direction * s : nil
    }
}

/// Frame `k` of a clip: an immutable value, the renderer's only input.
public struct FrameState: Sendable, Equatable {
    public var index: Int
    public var time: Double
    /// Regions that move in this frame, in `prepare` order (first wins).
    /// Regions with zero displacement everywhere are left out.
    public var regions: [RegionFrame]
    /// Control-layer sketches to draw over the frame; empty without overlay.
    public var overlay: [RegionShape]
    /// True when the overlay is on (even with no sketches to draw).
    public var overlayOn: Bool

    public init(index: Int, time: Double, regions: [RegionFrame], overlay: [RegionShape] = [], overlayOn: Bool = false) {
        self.index = index
        self.time = time
        self.regions = regions
        self.overlay = overlay
        self.overlayOn = overlayOn
    }
}

/// The result of running a scene: the clip's frames as a pure function of time.
public struct Clip: Sendable {
    public let fps: Double
    public let frameCount: Int
    /// Virtual time at which the script returned.
    public let duration: Double
    public let imageWidth: Int
    public let imageHeight: Int
    public let timeline: Timeline

    public init(fps: Double, frameCount: Int, duration: Double, imageWidth: Int, imageHeight: Int, timeline: Timeline) {
        self.fps = fps
        self.frameCount = frameCount
        self.duration = duration
        self.imageWidth = imageWidth
        self.imageHeight = imageHeight
        self.timeline = timeline
    }

    /// Frame `k` (time `k / fps`); `overlay` forces the control layer on (`--overlay`).
    public func frame(_ k: Int, overlay forced: Bool = false) -> FrameState {
        let t = Double(k) / fps
        let snap = timeline.snapshot(at: t)
        var regions: [RegionFrame] = []
        for m in snap.models {
            guard let imp = m.impulse, m.shape.canMove else { continue }
            let st = imp.state(at: t, parameters: m.parameters)
            let peak = m.shape.maxDisplacement(amplitude: st.amplitude, strength: m.parameters.strength)
            let region = RegionFrame(shape: m.shape, direction: imp.direction, peak: peak, tau: st.tau,
                                     duration: m.parameters.duration)
            guard peak > 0, region.progress != 0 else { continue }
            regions.append(region)
        }
        let on = forced || snap.overlay
        return FrameState(index: k, time: t, regions: regions, overlay: on ? snap.sketches : [], overlayOn: on)
    }
}
