import Foundation

/// The values a parameter accepts: `lower` to `upper`, each end open or
/// closed (`(0, 3600]`).
public struct ParameterRange: Sendable, Equatable {
    public var lower: Double
    public var upper: Double
    public var lowerOpen: Bool
    public var upperOpen: Bool

    public init(_ lower: Double, _ upper: Double, lowerOpen: Bool = false, upperOpen: Bool = false) {
        self.lower = lower
        self.upper = upper
        self.lowerOpen = lowerOpen
        self.upperOpen = upperOpen
    }

    public func contains(_ v: Double) -> Bool {
        v.isFinite && (lowerOpen ? v > lower : v >= lower) && (upperOpen ? v < upper : v <= upper)
    }

    /// As messages and the inspector write it: `(0, 3600]`.
    public var text: String {
        func number(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(v) }
        let open = lowerOpen ? "(" : "[", close = upperOpen ? ")" : "]"
        return "\(open)\(number(lower)), \(number(upper))\(close)"
    }
}

/// One number parameter of a motion model, as the model declares it: its
/// key (the `addSketch{...}` key, the sketch handle's field and the
/// inspector row's name), the values accepted, how the inspector's slider
/// and keys move it, its default for the model, how it is written in a
/// scene's source, and what a loop needs of it.
public struct MotionParameter: Sendable {
    public var key: String
    /// What `addSketch` and the sketch handle accept.
    public var accepted: ParameterRange
    /// The values the inspector's slider and keys reach (within `accepted`).
    public var valid: ClosedRange<Double>
    /// nil: the slider is linear over `valid`; a knee: logarithmic over
    /// all of it (`log(1 + (v - low) / knee)`), so the small values used
    /// most keep room and the end is still the largest value accepted.
    public var knee: Double?
    /// One key press of the inspector.
    public var step: Double
    /// The unit shown after the value (`" s"`, or empty).
    public var unit: String
    /// The model's default (what a key left out of `addSketch` gives).
    public var defaultValue: Double
    /// In source: at most this many decimals, no trailing zeros.
    public var decimals: Int
    /// What a looping scene (`loop()`) needs of the value, and the error
    /// otherwise; nil: any accepted value loops. (No parameter changes the
    /// loop's period: that is the clip's, `N / fps`.)
    public var loopNeeds: (@Sendable (Double) -> Bool, problem: String)?
    public var get: @Sendable (WobbleParameters) -> Double
    public var set: @Sendable (inout WobbleParameters, Double) -> Void

    public init(key: String, accepted: ParameterRange, valid: ClosedRange<Double>, knee: Double? = nil, step: Double,
                unit: String = "", defaultValue: Double, decimals: Int = 4,
                loopNeeds: (@Sendable (Double) -> Bool, problem: String)? = nil,
                get: @escaping @Sendable (WobbleParameters) -> Double,
                set: @escaping @Sendable (inout WobbleParameters, Double) -> Void) {
        self.key = key
        self.accepted = accepted
        self.valid = valid
        self.knee = knee
        self.step = step
        self.unit = unit
        self.defaultValue = defaultValue
        self.decimals = decimals
        self.loopNeeds = loopNeeds
        self.get = get
        self.set = set
    }

    /// A parameter of the model's own, kept by its key in
    /// `WobbleParameters.modelValues` (reading its default until set): a
    /// new model's parameters need no field of their own.
    public init(key: String, accepted: ParameterRange, valid: ClosedRange<Double>, knee: Double? = nil, step: Double,
                unit: String = "", defaultValue: Double, decimals: Int = 4,
                loopNeeds: (@Sendable (Double) -> Bool, problem: String)? = nil) {
        self.init(key: key, accepted: accepted, valid: valid, knee: knee, step: step, unit: unit, defaultValue: defaultValue,
                  decimals: decimals, loopNeeds: loopNeeds,
                  get: { $0.modelValues[key] ?? defaultValue }, set: { $0.modelValues[key] = $1 })
    }

    /// `accepted` as messages write it.
    public var validText: String { accepted.text }

    /// Why `v` is refused (`duration must be a number in (0, 3600]`), nil when accepted.
    public func problem(_ v: Double) -> String? {
        accepted.contains(v) ? nil : "\(key) must be a number in \(validText)"
    }

    // The parameters every model so far shares (each model gives its own default).

    /// Classic: the cycle duration; spring: the period of the undamped swing.
    public static func duration(default d: Double) -> MotionParameter {
        MotionParameter(key: "duration", accepted: ParameterRange(0, 3600, lowerOpen: true), valid: 0.01...3600, knee: 0.1,
                        step: 0.05, unit: " s", defaultValue: d, get: { $0.duration }, set: { $0.duration = $1 })
    }

    /// Peak displacement as a fraction of the shorter bbox side.
    public static func strength(default d: Double) -> MotionParameter {
        MotionParameter(key: "strength", accepted: ParameterRange(0, 1), valid: 0...1, step: 0.01, defaultValue: d,
                        get: { $0.strength }, set: { $0.strength = $1 })
    }

    /// The amplitude (classic) or envelope (spring) below which the model rests.
    public static func threshold(default d: Double) -> MotionParameter {
        MotionParameter(key: "threshold", accepted: ParameterRange(0, 1000), valid: 0...1000, knee: 0.01, step: 0.005,
                        defaultValue: d, get: { $0.threshold }, set: { $0.threshold = $1 })
    }
}

/// A motion model as the scene, the studio and loops see it: its name
/// (`addSketch{motion = NAME}`), its number parameters (in the order the
/// inspector shows them and a save writes them), and how to make the model.
/// A sketch's `MotionKind` carries its declaration, so whatever holds a
/// sketch's parameters (the renderer, loops, the source writer, the
/// inspector's rows) reads its model from there, with no table of models.
public final class MotionDeclaration: Sendable {
    public let name: String
    public let parameters: [MotionParameter]
    public let make: @Sendable (WobbleParameters) -> any MotionModel

    public init(name: String, parameters: [MotionParameter], make: @escaping @Sendable (WobbleParameters) -> any MotionModel) {
        self.name = name
        self.parameters = parameters
        self.make = make
    }

    /// The model's name as a sketch's parameters hold it.
    public var kind: MotionKind { MotionKind(self) }

    public func parameter(_ key: String) -> MotionParameter? { parameters.first { $0.key == key } }

    /// Why a model with `p` cannot loop (a `loop` error), nil when it can:
    /// what its parameters' table says a loop needs.
    public func loopProblem(_ p: WobbleParameters) -> String? {
        for q in parameters {
            if let needs = q.loopNeeds, !needs.0(q.get(p)) { return needs.problem }
        }
        return nil
    }
}

/// The motion models a scene can name, each declared in its own file: what
/// lists every model or every key (the Lua binding's `addSketch` keys and
/// `motion` names, the inspector's choice of model) reads them from here.
/// A new model is one file declaring itself, its declaration added to
/// `standard` (or to a catalog given to the binding and the studio:
/// `ScriptOptions.motions`, `SessionOptions.motions`). The first model is
/// the default (a sketch without `motion`).
public struct MotionCatalog: Sendable {
    public let models: [MotionDeclaration]

    /// Every model's parameters once (the first declaration of a key),
    /// each model's order kept: a key the models before it lack comes
    /// just before the next of its model's keys they have.
    public let parameters: [MotionParameter]

    public init(_ models: [MotionDeclaration]) {
        self.models = models
        var out: [MotionParameter] = []
        for m in models {
            let keys = m.parameters.map(\.key)
            for (i, p) in m.parameters.enumerated() where !out.contains(where: { $0.key == p.key }) {
                // Before the first of the model's later keys already listed.
                var at = out.count
                for key in keys[(i + 1)...] {
                    if let j = out.firstIndex(where: { $0.key == key }) { at = j; break }
                }
                out.insert(p, at: at)
            }
        }
        parameters = out
    }

    /// The models of `addSketch{motion = ...}`; the first is the default.
    public static let standard = MotionCatalog([ClassicMotion.declaration, SpringMotion.declaration])

    /// This catalog and `more` models after its own.
    public func adding(_ more: MotionDeclaration...) -> MotionCatalog { MotionCatalog(models + more) }

    public func declaration(_ kind: MotionKind) -> MotionDeclaration? { models.first { $0.name == kind.rawValue } }

    /// The model named `name` (`addSketch{motion = NAME}`), nil for none.
    public func kind(named name: String) -> MotionKind? { models.first { $0.name == name }?.kind }

    /// The names, as messages list them: `"classic" or "spring"`.
    public var namesText: String {
        let q = models.map { "\"\($0.name)\"" }
        return q.count < 2 ? q.joined() : q.dropLast().joined(separator: ", ") + " or " + (q.last ?? "")
    }

    public func parameter(_ key: String) -> MotionParameter? { parameters.first { $0.key == key } }

    /// The models that have `key` (every one: the key is common).
    public func models(having key: String) -> [MotionKind] {
        models.filter { $0.parameter(key) != nil }.map(\.kind)
    }

    /// The parameters a sketch of `kind` has by default: the model's own
    /// defaults, and for a key it lacks the first model's that has it.
    public func defaults(_ kind: MotionKind) -> WobbleParameters {
        var p = WobbleParameters(bare: kind)
        for q in parameters { q.set(&p, q.defaultValue) }
        for q in kind.declaration.parameters { q.set(&p, q.defaultValue) }
        // A model's own values are read as their defaults when absent: only the model's are kept.
        p.modelValues = p.modelValues.filter { kind.declaration.parameter($0.key) != nil }
        return p
    }

    /// Why `p` is refused (the first parameter out of range, of this
    /// catalog's and of its own model's), nil when every parameter is accepted.
    public func validationError(_ p: WobbleParameters) -> String? {
        (parameters + p.motion.declaration.parameters).lazy.compactMap { $0.problem($0.get(p)) }.first
    }
}

/// The name of a motion model (`addSketch{motion = ...}`), carrying its
/// declaration: two kinds are equal when their names are. Read from a
/// script by a catalog; decoded (and made from a raw value) from the
/// standard catalog's.
public struct MotionKind: RawRepresentable, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    public let declaration: MotionDeclaration
    public var rawValue: String { declaration.name }

    init(_ declaration: MotionDeclaration) { self.declaration = declaration }

    /// The standard model of that name, nil for any other.
    public init?(rawValue: String) {
        guard let d = MotionCatalog.standard.models.first(where: { $0.name == rawValue }) else { return nil }
        declaration = d
    }

    public static var allCases: [MotionKind] { MotionCatalog.standard.models.map(\.kind) }

    public static func == (a: MotionKind, b: MotionKind) -> Bool { a.rawValue == b.rawValue }
    public func hash(into h: inout Hasher) { h.combine(rawValue) }

    public var description: String { rawValue }
}

extension WobbleParameters {
    /// `self` with the model `kind`: a parameter left at the old model's
    /// default takes the new model's (as assigning `motion` in a script does).
    public func switching(to kind: MotionKind) -> WobbleParameters {
        var out = self
        out.motion = kind
        let old = motion.declaration
        for q in kind.declaration.parameters {
            if let o = old.parameter(q.key), o.get(self) == o.defaultValue { q.set(&out, q.defaultValue) }
        }
        return out
    }
}
