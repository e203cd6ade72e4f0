/// Comparisons of virtual times use this tolerance (SPEC §4).
public let timeEpsilon = 1e-9

/// One `impulse`: a cycle started at `start` with a unit `direction` and an
/// `amplitude`. Decay is closed-form in time (SPEC §5): nothing is stepped.
public struct Impulse: Sendable, Hashable {
    public var start: Double
    public var direction: Point
    public var amplitude: Double

    public init(start: Double, direction: Point, amplitude: Double) {
        self.start = start
        self.direction = direction
        self.amplitude = amplitude
    }

    /// The model's state at time `t >= start`.
    public func state(at t: Double, parameters p: WobbleParameters) -> CycleState {
        let d = p.duration
        let elapsed = Swift.max(0, t - start)
        // Boundaries passed: the largest n with start + n·D <= t (± epsilon).
        let nRaw = ((elapsed + timeEpsilon) / d).rounded(.down)
        let n = nRaw.isFinite ? Int(Swift.min(nRaw, 1e15)) : Int(1e15)
        var amp = amplitude
        var cycle = 0
        if p.decay == 1 {
            cycle = n
        } else {
            while cycle < n && amp > 0 {
                amp *= p.decay
                if amp < p.threshold { amp = 0 }
                cycle += 1
                if cycle > 4000 { amp = 0; break }   // decay < 1: underflows long before
            }
        }
        let begin = start + Double(cycle) * d
        return CycleState(amplitude: amp, cycleStart: begin, tau: amp > 0 ? Swift.max(0, t - begin) : 0)
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
