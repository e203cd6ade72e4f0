import Foundation

/// The original's motion: an impulse starts a cycle of duration
/// `D` (it replaces whatever moved before); at each cycle end the amplitude
/// is multiplied by `decay`, and set to 0 below `threshold`. Within a cycle
/// the content swings along the direction and back, then the other way and
/// back (`cycleProgress`).
public struct ClassicMotion: MotionModel {
    public let parameters: WobbleParameters

    public init(_ parameters: WobbleParameters) {
        self.parameters = parameters
    }

    /// An impulse restarts the cycle: only the latest kick counts.
    public func adding(_ kick: Impulse, to kicks: [Impulse]) -> [Impulse] { [kick] }

    public func reading(_ kicks: [Impulse], at t: Double, preparedAt: Double) -> MotionReading {
        guard let imp = kicks.last else { return .still(direction: .zero, cycleStart: preparedAt) }
        let st = imp.state(at: t, parameters: parameters)
        guard st.amplitude > 0 else { return .still(direction: imp.direction, cycleStart: st.cycleStart) }
        return MotionReading(amplitude: st.amplitude, direction: imp.direction, cycleStart: st.cycleStart,
                             level: st.amplitude, swing: cycleProgress(tau: st.tau, duration: parameters.duration),
                             offsetDirection: imp.direction)
    }

    public func restTime(_ kicks: [Impulse]) -> Double {
        guard let imp = kicks.last else { return -.infinity }
        let p = parameters
        guard imp.amplitude > 0 else { return imp.start }
        if p.decay >= 1 || p.threshold <= 0 { return .infinity }
        let k = Impulse.decay(imp.amplitude, cycles: Int(1e15), p).cycles
        return imp.start + Double(k) * p.duration
    }

    public var neverRests: String { "decay = 1 or threshold = 0" }

    /// In a loop the last kick at or before `t` among the repeated ones decides.
    public func looped(period: Double, kicks: [Impulse]) -> any SteadyLoop { ClassicLoop(model: self, kicks: kicks) }

    /// `addSketch{motion = "classic", duration =, strength =, decay =, threshold =}`.
    public static let declaration = MotionDeclaration(name: "classic", parameters: [
        .duration(default: 1.2),
        .strength(default: 0.08),
        MotionParameter(key: "decay", accepted: ParameterRange(0, 1), valid: 0...1, step: 0.05, defaultValue: 0.7,
                        get: { $0.decay }, set: { $0.decay = $1 }),
        .threshold(default: 0.1),
    ], make: { ClassicMotion($0) })
}

extension MotionKind {
    /// The original's cycles: an impulse restarts the cycle.
    public static let classic = ClassicMotion.declaration.kind
}

/// The classic model's steady state: the state of the last kick at or
/// before `t` among the repeated ones.
struct ClassicLoop: SteadyLoop {
    let model: ClassicMotion
    let kicks: [Impulse]

    func reading(at t: Double, taus: [Double]) -> MotionReading {
        var last = 0
        for i in kicks.indices where taus[i] <= taus[last] { last = i }
        let k = kicks[last]
        let at = Impulse(start: t - taus[last], direction: k.direction, amplitude: k.amplitude)
        return model.reading([at], at: t, preparedAt: 0)
    }
}

extension Impulse {
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


/// Cycle progress of the wobble model: `u = mod(2τ, D)`, `x = (u > D/2 ? D−u : u)/(D/2)`,
/// `s = τ < D/2 ? −1 : +1`, `progress = s·(2x − x²)`. Defined (and 0) at
/// τ = D/2, where the original divided by zero.
public func cycleProgress(tau: Double, duration d: Double) -> Double {
    guard d > 0, tau.isFinite else { return 0 }
    let tauC = Swift.min(Swift.max(tau, 0), d)
    var u = (2 * tauC).truncatingRemainder(dividingBy: d)
    if u < 0 { u += d }
    let x = (u > d / 2 ? d - u : u) / (d / 2)
    let s: Double = tauC < d / 2 ? -1 : 1
    return s * (2 * x - x * x)
}
