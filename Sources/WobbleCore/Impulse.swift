import Foundation

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
            (amp, cycle) = Impulse.decay(amplitude, cycles: n, p)
        }
        let begin = start + Double(cycle) * d
        return CycleState(amplitude: amp, cycleStart: begin, tau: amp > 0 ? Swift.max(0, t - begin) : 0)
    }
}

extension Impulse {
    /// The amplitude after at most `n` cycle ends (decay < 1): multiplied by
    /// `decay` at each, 0 once below `threshold`; and the number of cycle
    /// ends counted (fewer than `n` when it reached 0 earlier). Stepped for
    /// the first 4000 cycles, in closed form beyond (a decay close to 1 with
    /// a small threshold wobbles for many thousands of short cycles).
    public static func decay(_ amplitude: Double, cycles n: Int, _ p: WobbleParameters) -> (amplitude: Double, cycles: Int) {
        var amp = amplitude
        var cycle = 0
        while cycle < n && amp > 0 && cycle < 4000 {
            amp *= p.decay
            if amp < p.threshold { amp = 0 }
            cycle += 1
        }
        guard cycle < n && amp > 0 && p.decay > 0 && p.decay < 1 else { return (amp, cycle) }
        let left = n - cycle
        // The first m with amp·decay^m < threshold.
        let toZero = p.threshold > 0
            ? Int(Swift.min((log(p.threshold / amp) / log(p.decay)).rounded(.down) + 1, 1e15)) : Int.max
        if left >= toZero { return (0, cycle + Swift.max(toZero, 1)) }
        amp *= pow(p.decay, Double(left))
        if amp < p.threshold || !(amp > 0) { amp = 0 }
        return (amp, cycle + left)
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
