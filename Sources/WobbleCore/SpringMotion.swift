import Foundation

/// A damped spring: kicks add up instead of restarting a cycle.
///
/// With `P` the period (`duration`), `Z` the damping ratio (`damping`):
/// `ω = 2π/P`, `ω_d = ω·√(1 − Z²)`, `t* = atan2(√(1 − Z²), Z)/ω_d` (the time
/// of the first peak), `c = √(1 − Z²)·exp(−Z·ω·t*)`; one kick's response is
/// `h(τ) = exp(−Z·ω·τ)·sin(ω_d·τ)/c` (first peak exactly 1). The swing is
/// `s(t) = Σ a_i·u_i·h(t − t_i)`, the envelope `E(t) = Σ a_i·exp(−Z·ω·(t − t_i))/c`;
/// the model rests from the first time after its last kick at which
/// `E < threshold`, in closed form: `t_L + ln(E(t_L)/threshold)/(Z·ω)`.
/// Every exponent is `<= 0`: nothing overflows however long the clip.
public struct SpringMotion: MotionModel {
    public let parameters: WobbleParameters
    /// `Z·ω`: the decay rate of the envelope, 1/s.
    public let decayRate: Double
    /// `ω_d`: the damped angular frequency, rad/s.
    public let omegaD: Double
    /// `t*`: the time of the first peak of `h`, s.
    public let peakTime: Double
    /// `c`: `h`'s normalisation (its first peak is 1).
    public let c: Double

    public init(_ parameters: WobbleParameters) {
        self.parameters = parameters
        let z = parameters.damping
        let omega = 2 * Double.pi / parameters.duration
        let root = (1 - z * z).squareRoot()
        decayRate = z * omega
        omegaD = omega * root
        peakTime = atan2(root, z) / omegaD
        c = root * exp(-decayRate * peakTime)
    }

    /// `h(τ)`: the response to a unit kick `τ` seconds ago (0 before it).
    public func response(_ tau: Double) -> Double {
        guard tau > 0 else { return 0 }
        return exp(-decayRate * tau) * sin(omegaD * tau) / c
    }

    /// `E(t)` of `kicks` (those at or before `t`).
    public func envelope(_ kicks: [Impulse], at t: Double) -> Double {
        var e = 0.0
        for k in kicks where k.start <= t + timeEpsilon {
            e += k.amplitude * exp(-decayRate * Swift.max(0, t - k.start))
        }
        return e / c
    }

    /// `s(t)` of `kicks` (a vector, image space), ignoring the rest time.
    public func swing(_ kicks: [Impulse], at t: Double) -> Point {
        var s = Point.zero
        for k in kicks where k.start <= t + timeEpsilon {
            s = s + k.direction * (k.amplitude * response(t - k.start))
        }
        return s
    }

    /// A kick adds up with the others; kicks of a model that has come to
    /// rest are dropped (they contribute nothing any more), and a kick at
    /// the time of the last one is merged into it.
    public func adding(_ kick: Impulse, to kicks: [Impulse]) -> [Impulse] {
        guard let last = kicks.last, restTime(kicks) > kick.start + timeEpsilon else { return [kick] }
        var out = kicks
        if abs(last.start - kick.start) <= timeEpsilon {
            let a = last.amplitude + kick.amplitude
            let v = last.direction * last.amplitude + kick.direction * kick.amplitude
            out[out.count - 1] = Impulse(start: last.start, direction: a > 0 ? v / a : .zero, amplitude: a)
        } else {
            out.append(kick)
        }
        return out
    }

    public func reading(_ kicks: [Impulse], at t: Double, preparedAt: Double) -> MotionReading {
        guard let last = kicks.last else { return .still(direction: .zero, cycleStart: preparedAt) }
        guard t < restTime(kicks) - timeEpsilon else { return .still(direction: .zero, cycleStart: last.start) }
        let e = envelope(kicks, at: t)
        let s = swing(kicks, at: t)
        let len = s.length
        guard e > 0, len > 0, len.isFinite else {
            return MotionReading(amplitude: e, direction: .zero, cycleStart: last.start, level: 0, swing: 0,
                                 offsetDirection: .zero)
        }
        let unit = s / len
        // The sample position is p − m·s/E: along −s, by m·|s|/E (|s| <= E).
        return MotionReading(amplitude: e, direction: unit, cycleStart: last.start, level: Swift.min(e, 4),
                             swing: -Swift.min(len / e, 1), offsetDirection: unit)
    }

    public func restTime(_ kicks: [Impulse]) -> Double {
        guard let last = kicks.last else { return -.infinity }
        let e = envelope(kicks, at: last.start)
        let threshold = parameters.threshold
        guard e >= threshold, e > 0 else { return last.start }
        guard threshold > 0, decayRate > 0 else { return .infinity }
        let t = last.start + log(e / threshold) / decayRate
        return t.isNaN ? .infinity : t
    }

    public var neverRests: String { "damping = 0 or threshold = 0" }

    public func looped(period: Double, kicks: [Impulse]) -> any SteadyLoop { SpringLoop(self, period: period, kicks: kicks) }

    /// `addSketch{motion = "spring", duration =, strength =, damping =, threshold =}`.
    public static let declaration = MotionDeclaration(name: "spring", parameters: [
        .duration(default: 1.2),
        .strength(default: 0.08),
        MotionParameter(key: "damping", accepted: ParameterRange(0, 1, upperOpen: true), valid: 0...0.99, step: 0.01,
                        defaultValue: 0.1,
                        loopNeeds: ({ $0 > 0 }, "a spring with damping = 0 never settles into a loop (give it damping > 0)"),
                        get: { $0.damping }, set: { $0.damping = $1 }),
        .threshold(default: 0.02),
    ], make: { SpringMotion($0) })
}

extension MotionKind {
    /// A damped spring: kicks add up.
    public static let spring = SpringMotion.declaration.kind
}

/// The spring's steady state for one period: the model and `1 / (1 − z)`
/// with `z = e^{−ZωP}·e^{iω_d P}` (the sum of the repetitions), computed once.
///
/// A looping spring never comes to rest: its `threshold` does not apply.
/// Resting (the swing set to 0 once the envelope falls below the
/// threshold) is a step in the picture, up to the threshold's share of the
/// strength; in a clip that ends there it is the last frame, but a loop
/// plays through it every period, and where it falls just before the
/// period's end (a loop made with the studio's `L` over a clip that ran
/// until the regions rested) it was a pop at the seam (up to 34 levels).
/// Without it the motion is continuous everywhere (a kick changes the
/// velocity, never the position) and the frame after the last is frame 0.
struct SpringLoop: SteadyLoop {
    let spring: SpringMotion
    let kicks: [Impulse]
    let q: Double
    let inv: (re: Double, im: Double)

    init(_ spring: SpringMotion, period: Double, kicks: [Impulse]) {
        self.spring = spring
        self.kicks = kicks
        q = exp(-spring.decayRate * period)
        let zr = 1 - q * cos(spring.omegaD * period), zi = -q * sin(spring.omegaD * period)
        let norm = zr * zr + zi * zi
        inv = (re: zr / norm, im: -zi / norm)
    }

    /// The spring's steady state: every sum of the spring model over the
    /// repetitions `n >= 0` is a geometric series:
    /// `Σ_n h(τ + nP) = Im(e^{(−Zω + iω_d)τ} / (1 − e^{(−Zω + iω_d)P})) / c` and
    /// `Σ_n e^{−Zω(τ + nP)} = e^{−Zωτ} / (1 − e^{−ZωP})`.
    func reading(at t: Double, taus: [Double]) -> MotionReading {
        let a = spring.decayRate, wd = spring.omegaD, c = spring.c
        var s = Point.zero
        var e = 0.0
        for (i, k) in kicks.enumerated() {
            let decay = exp(-a * taus[i])
            let w = (re: decay * cos(wd * taus[i]), im: decay * sin(wd * taus[i]))
            let g = (w.re * inv.im + w.im * inv.re) / c
            s = s + k.direction * (k.amplitude * g)
            e += k.amplitude * decay
        }
        e /= c * (1 - q)
        let len = s.length
        let start = t - (taus.min() ?? 0)
        guard e > 0, len > 0, len.isFinite else {
            return MotionReading(amplitude: e, direction: .zero, cycleStart: start, level: 0, swing: 0, offsetDirection: .zero)
        }
        let unit = s / len
        return MotionReading(amplitude: e, direction: unit, cycleStart: start, level: Swift.min(e, 4),
                             swing: -Swift.min(len / e, 1), offsetDirection: unit)
    }
}
