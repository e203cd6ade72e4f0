import Foundation

/// One kick of a looping scene's period: an impulse, and whether it is a
/// shake that passes its gate only while the model's amplitude is below
/// `Scene.shakeAmplitudeLimit` (judged in the steady state).
public struct LoopKick: Sendable, Hashable {
    public var kick: Impulse
    public var gated: Bool

    public init(_ kick: Impulse, gated: Bool) {
        self.kick = kick
        self.gated = gated
    }
}

/// The steady state of a looping scene's model (`loop()`): the kicks of one
/// period `P`, each also acting at `t_i − n·P` for every `n >= 1`. Kicks are
/// in time order in `[0, P)`; at a time `t` a kick counts as already
/// happened in this period when it comes before `t` (see `LoopTime`).
public struct LoopedMotion: Sendable, Equatable {
    public let parameters: WobbleParameters
    public let period: Double
    /// The kicks of one period that act (shakes that fail their gate left
    /// out), in time order, times in `[0, period)`.
    public let kicks: [Impulse]
    /// The model's steady state (nil without kicks), computed once.
    private let steady: (any SteadyLoop)?

    public init(parameters: WobbleParameters, period: Double, kicks: [Impulse]) {
        self.parameters = parameters
        self.period = period
        self.kicks = kicks
        steady = kicks.isEmpty ? nil : parameters.model.looped(period: period, kicks: kicks)
    }

    public static func == (a: LoopedMotion, b: LoopedMotion) -> Bool {
        a.parameters == b.parameters && a.period == b.period && a.kicks == b.kicks
    }

    /// The reading at clip time `t` (any `t`: reduced modulo the period,
    /// so frame `N` reads as frame 0).
    public func reading(at t: Double) -> MotionReading {
        let p = period
        var u = t.truncatingRemainder(dividingBy: p)
        if u < 0 { u += p }
        if u > p - timeEpsilon { u = 0 }
        return reading(at: u, happened: { kicks[$0].start <= u + timeEpsilon })
    }

    /// The reading at `t` in `[0, P)`, with `happened(i)` saying whether
    /// kick `i` has already acted in this period at `t` (else its last
    /// occurrence is the previous period's).
    func reading(at t: Double, happened: (Int) -> Bool) -> MotionReading {
        guard !kicks.isEmpty else { return .still(direction: .zero, cycleStart: 0) }
        // τ_i: the time since kick i's latest occurrence, in [0, P].
        let taus = kicks.indices.map { i in Swift.max(0, t - kicks[i].start + (happened(i) ? 0 : period)) }
        guard let steady else { return .still(direction: .zero, cycleStart: 0) }
        return steady.reading(at: t, taus: taus)
    }
}

/// Why a model cannot loop (a `loop` error), nil when it can: what its
/// parameters' table says a loop needs.
public func loopProblem(_ parameters: WobbleParameters, hasKicks: Bool) -> String? {
    hasKicks ? parameters.motion.declaration.loopProblem(parameters) : nil
}

/// Resolves which gated kicks (shakes) act in the steady state of a loop
/// with period `period`: a shake acts when the model's amplitude just
/// before it, in the steady state of the kicks that act, is below `limit`.
///
/// A fixed point of the gate map `G(b)_j = [amplitude before j, with the
/// gates b, < limit]`, found by iterating from "every shake acts". It
/// terminates: at most `2g + 2` evaluations of `G` (g gated kicks), each
/// O(kicks × g). For the spring, more kicks never lower the envelope, so
/// `G` is antitone: the even iterates fall, the odd ones rise, and each
/// changes at most `g` times, so they meet (a fixed point) or settle into
/// a 2-cycle within that bound. The classic model has no such order; the
/// bound still ends the search. Without a fixed point, the shakes that
/// act in both states of the 2-cycle act, and `converged` is false (the
/// caller warns).
public func resolveLoopGates(_ kicks: [LoopKick], parameters: WobbleParameters, period: Double,
                             limit: Double) -> (kicks: [Impulse], converged: Bool) {
    let gated = kicks.indices.filter { kicks[$0].gated }
    func acting(_ b: [Int: Bool]) -> [Int] { kicks.indices.filter { !kicks[$0].gated || b[$0] == true } }
    func map(_ b: [Int: Bool]) -> [Int: Bool] {
        let act = acting(b)
        let motion = LoopedMotion(parameters: parameters, period: period, kicks: act.map { kicks[$0].kick })
        var out: [Int: Bool] = [:]
        for j in gated {
            // Just before j: the kicks acting before it in this period (in
            // order: those at its own time only when they come first).
            let t = kicks[j].kick.start
            let r = motion.reading(at: t, happened: { act[$0] < j })
            out[j] = r.amplitude < limit
        }
        return out
    }
    var b = Dictionary(uniqueKeysWithValues: gated.map { ($0, true) })
    var converged = gated.isEmpty
    var previous = b
    for _ in 0 ..< (2 * gated.count + 2) where !converged {
        let next = map(b)
        if next == b { converged = true; break }
        previous = b
        b = next
    }
    if !converged {
        b = b.merging(previous) { $0 && $1 }
    }
    return (acting(b).map { kicks[$0].kick }, converged)
}
