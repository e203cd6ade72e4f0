/// The constants of one wobble model. The defaults are MFWobbleView's.
///
/// Lua: `addSketch{..., duration=, decay=, threshold=, strength=}`.
public struct WobbleParameters: Sendable, Hashable {
    /// Cycle duration D in seconds (original: 1.2).
    public var duration: Double
    /// Factor applied to the amplitude at the end of each cycle (original: 0.7).
    public var decay: Double
    /// The amplitude is set to 0 when it falls below this (original: 0.1).
    public var threshold: Double
    /// Peak displacement as a fraction of the shorter bbox side (original: 0.08).
    public var strength: Double

    public init(duration: Double = 1.2, decay: Double = 0.7, threshold: Double = 0.1, strength: Double = 0.08) {
        self.duration = duration
        self.decay = decay
        self.threshold = threshold
        self.strength = strength
    }

    public static let original = WobbleParameters()

    /// Checks the ranges; returns a message naming the bad field, or nil.
    public func validationError() -> String? {
        if !(duration.isFinite && duration > 0 && duration <= 3600) { return "duration must be a number in (0, 3600]" }
        if !(decay.isFinite && decay >= 0 && decay <= 1) { return "decay must be a number in [0, 1]" }
        if !(threshold.isFinite && threshold >= 0 && threshold <= 1000) { return "threshold must be a number in [0, 1000]" }
        if !(strength.isFinite && strength >= 0 && strength <= 1) { return "strength must be a number in [0, 1]" }
        return nil
    }
}
