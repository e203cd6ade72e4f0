/// The constants of one wobble model. The defaults are MFWobbleView's
/// (the classic model); `.spring` holds the spring model's.
///
/// Lua: `addSketch{..., motion=, duration=, decay=, damping=, threshold=, strength=, pin=, cutout=}`.
public struct WobbleParameters: Sendable, Hashable {
    /// Which motion model moves the region (default: the original's cycles).
    public var motion: MotionKind
    /// Classic: the cycle duration D; spring: the period P of the undamped
    /// swing. Seconds (default 1.2).
    public var duration: Double
    /// Classic: factor applied to the amplitude at the end of each cycle (original: 0.7).
    public var decay: Double
    /// Spring: the damping ratio Z in [0, 1) (default 0.1).
    public var damping: Double
    /// Classic: the amplitude is set to 0 when it falls below this (original:
    /// 0.1). Spring: the model rests once its envelope is below this (0.02).
    public var threshold: Double
    /// Peak displacement as a fraction of the shorter bbox side (original: 0.08).
    public var strength: Double
    /// The side fixed as a root (`pin = "bottom"`, …): the pinned profile
    /// replaces the hemisphere bulge; nil (the default): the bulge.
    public var pin: PinSide?
    /// `addSketch{cutout = "auto" | "PATH"}`: the object moves over a plate
    /// instead of the whole region deforming; nil: no cutout.
    public var cutout: CutoutRequest? = nil

    public init(motion: MotionKind = .classic, duration: Double = 1.2, decay: Double = 0.7, damping: Double = 0.1,
                threshold: Double? = nil, strength: Double = 0.08, pin: PinSide? = nil) {
        self.motion = motion
        self.duration = duration
        self.decay = decay
        self.damping = damping
        self.threshold = threshold ?? WobbleParameters.defaultThreshold(motion)
        self.strength = strength
        self.pin = pin
    }

    /// The original's classic parameters.
    public static let original = WobbleParameters()
    /// The spring model's defaults.
    public static let spring = WobbleParameters(motion: .spring)

    /// The default `threshold` of a motion model: 0.1 classic, 0.02 spring.
    public static func defaultThreshold(_ motion: MotionKind) -> Double {
        motion == .spring ? 0.02 : 0.1
    }

    /// Checks the ranges; returns a message naming the bad field, or nil.
    public func validationError() -> String? {
        if !(duration.isFinite && duration > 0 && duration <= 3600) { return "duration must be a number in (0, 3600]" }
        if !(decay.isFinite && decay >= 0 && decay <= 1) { return "decay must be a number in [0, 1]" }
        if !(damping.isFinite && damping >= 0 && damping < 1) { return "damping must be a number in [0, 1)" }
        if !(threshold.isFinite && threshold >= 0 && threshold <= 1000) { return "threshold must be a number in [0, 1000]" }
        if !(strength.isFinite && strength >= 0 && strength <= 1) { return "strength must be a number in [0, 1]" }
        return nil
    }
}
