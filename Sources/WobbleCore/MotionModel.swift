import Foundation

/// What a motion model says about one wobble model at one time: what
/// `wobbleModels()` reads, and what the renderer needs.
///
/// The sample position of an output pixel `p` inside the region is
/// `p + m(p) · swing · direction`, with `m` the hemisphere profile of the wobble model
/// for the peak `M = strength · min(bbox w, h) · level` (limited to `R`).
public struct MotionReading: Sendable, Equatable {
    /// `amplitude` as `wobbleModels()` reads it (0 once still).
    public var amplitude: Double
    /// `direction` as `wobbleModels()` reads it: a unit vector, `{0, 0}`
    /// before the first kick (and while the kicks cancel out).
    public var direction: Point
    /// `lastAnimationBeginTime`.
    public var cycleStart: Double
    /// The factor of `M` (classic: the amplitude; spring: `min(E, 4)`).
    public var level: Double
    /// The signed offset per unit of `m`, in [-1, 1], along `offsetDirection`.
    public var swing: Double
    /// The unit direction of the offset (image space).
    public var offsetDirection: Point

    public init(amplitude: Double, direction: Point, cycleStart: Double, level: Double, swing: Double,
                offsetDirection: Point) {
        self.amplitude = amplitude
        self.direction = direction
        self.cycleStart = cycleStart
        self.level = level
        self.swing = swing
        self.offsetDirection = offsetDirection
    }

    /// A model at rest.
    public static func still(direction: Point, cycleStart: Double) -> MotionReading {
        MotionReading(amplitude: 0, direction: direction, cycleStart: cycleStart, level: 0, swing: 0, offsetDirection: direction)
    }
}

/// The physics of one wobble model: how kicks (`impulse`, `touch`, a shake)
/// enter its history, and what it reads at a time. The only place that
/// knows about cycles, springs and decay: the renderers get the
/// `RegionFrame` made from a reading (a peak and an offset) and do geometry,
/// the hemisphere profile and sampling only.
///
/// Everything is closed-form in time, so a frame, `--check` and
/// `untilStill` are exact and cost the same at any time.
///
/// A new model is one file: a type conforming to this protocol and its
/// `MotionDeclaration` (its name and parameter table), added to
/// `MotionCatalog.standard` or to the catalog a scene is run with.
public protocol MotionModel: Sendable {
    /// The kick history after `kick` (at `kick.start`, the current time,
    /// later than or equal to every kick in `kicks`).
    func adding(_ kick: Impulse, to kicks: [Impulse]) -> [Impulse]
    /// The reading at `t` (at or after the last kick's start), for a model
    /// prepared at `preparedAt`.
    func reading(_ kicks: [Impulse], at t: Double, preparedAt: Double) -> MotionReading
    /// The time from which the model is still for good (amplitude 0):
    /// `-infinity` with no kicks, `+infinity` when it never comes to rest.
    func restTime(_ kicks: [Impulse]) -> Double
    /// The parameters with which a model never rests, for `untilStill`'s
    /// error: `decay = 1 or threshold = 0`.
    var neverRests: String { get }
    /// The steady state of a loop of `period` whose kicks of one period
    /// are `kicks` (in time order, at least one), each repeating every period.
    func looped(period: Double, kicks: [Impulse]) -> any SteadyLoop
}

/// The steady state of a looping scene's model (see `LoopedMotion`): what
/// the model reads at a time of the period, given for each kick the time
/// since its latest occurrence.
public protocol SteadyLoop: Sendable {
    /// The reading at `t` in `[0, P)`; `taus[i]` is the time since kick
    /// `i`'s latest occurrence, in `[0, P]`.
    func reading(at t: Double, taus: [Double]) -> MotionReading
}

extension WobbleParameters {
    /// The motion model these parameters describe.
    public var model: any MotionModel {
        motion.declaration.make(self)
    }
}
