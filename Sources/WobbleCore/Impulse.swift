import Foundation

/// Comparisons of virtual times use this tolerance.
public let timeEpsilon = 1e-9

/// One kick (`impulse`, `touch`, a shake): at `start`, along a unit
/// `direction`, with an `amplitude`. What it does is the motion model's
/// business (`MotionModel`): the classic model restarts its cycle, the
/// spring adds the kick's response. Kicks of a spring at the same time are
/// merged into one, whose `direction` is then the amplitude-weighted mean of
/// theirs (shorter than 1, zero when they cancel).
public struct Impulse: Sendable, Hashable {
    public var start: Double
    public var direction: Point
    public var amplitude: Double

    public init(start: Double, direction: Point, amplitude: Double) {
        self.start = start
        self.direction = direction
        self.amplitude = amplitude
    }
}

/// A model's amplitude and cycle at one moment.
public struct CycleState: Sendable, Hashable {
    /// The current amplitude (0 once decayed below the threshold).
    public var amplitude: Double
    /// `lastAnimationBeginTime`: the start of the current cycle, or of the
    /// cycle in which the amplitude reached 0.
    public var cycleStart: Double
    /// Time since the current cycle began (0 when still).
    public var tau: Double
}
