import Foundation
import WobbleCore

/// A row of the inspector.
package enum InspectorRow: Equatable {
    case name, motion, number(String), pin

    /// The number rows: the key, the values the slider and keys reach
    /// (what `addSketch` accepts, shown as `validText`), how the slider
    /// spans them, the step of a key press and the unit shown.
    package struct Spec: Sendable {
        package var key: String
        package var valid: ClosedRange<Double>
        package var validText: String
        /// nil: the slider is linear over `valid`; a knee: logarithmic over
        /// all of it (`log(1 + (v - low) / knee)`), so the small values used
        /// most keep room and the end is still the largest value accepted.
        package var knee: Double?
        package var step: Double
        package var unit: String
        package var get: @Sendable (WobbleParameters) -> Double
        package var set: @Sendable (inout WobbleParameters, Double) -> Void

        /// Where `v` is on the slider, 0 to 1.
        package func fraction(_ v: Double) -> Double {
            let lo = valid.lowerBound, hi = valid.upperBound
            let f: Double
            if let c = knee { f = log1p((v - lo) / c) / log1p((hi - lo) / c) } else { f = (v - lo) / (hi - lo) }
            return f.isFinite ? min(max(f, 0), 1) : 0
        }

        /// The value at `f` (0 to 1) of the slider.
        package func value(atFraction f: Double) -> Double {
            let lo = valid.lowerBound, hi = valid.upperBound, f = min(max(f, 0), 1)
            guard let c = knee else { return lo + f * (hi - lo) }
            return min(hi, lo + c * expm1(f * log1p((hi - lo) / c)))
        }
    }

    package static let specs: [Spec] = [
        Spec(key: "duration", valid: 0.01...3600, validText: "(0, 3600]", knee: 0.1, step: 0.05, unit: " s",
             get: { $0.duration }, set: { $0.duration = $1 }),
        Spec(key: "strength", valid: 0...1, validText: "[0, 1]", knee: nil, step: 0.01, unit: "",
             get: { $0.strength }, set: { $0.strength = $1 }),
        Spec(key: "decay", valid: 0...1, validText: "[0, 1]", knee: nil, step: 0.05, unit: "",
             get: { $0.decay }, set: { $0.decay = $1 }),
        Spec(key: "damping", valid: 0...0.99, validText: "[0, 1)", knee: nil, step: 0.01, unit: "",
             get: { $0.damping }, set: { $0.damping = $1 }),
        Spec(key: "threshold", valid: 0...1000, validText: "[0, 1000]", knee: 0.01, step: 0.005, unit: "",
             get: { $0.threshold }, set: { $0.threshold = $1 }),
    ]

    package static func spec(_ key: String) -> Spec? { specs.first { $0.key == key } }

    /// The rows for a sketch of `motion`, top to bottom.
    package static func rows(_ motion: MotionKind) -> [InspectorRow] {
        [.name, .motion, .number("duration"), .number("strength"), .number(motion == .classic ? "decay" : "damping"),
         .number("threshold"), .pin]
    }

    package static let pinChoices: [PinSide?] = [nil, .bottom, .top, .left, .right]
}

/// The inspector as values (what a front end shows in its column): the
/// selected sketch, its name, where it is made, why it is read-only, the
/// focused row, the name being typed, and each row's value.
package struct InspectorValues: Codable, Equatable {
    /// One row: its key (`name`, `motion`, `duration`, ..., `pin`), its
    /// value as text, the number (number rows) and the choices (choice rows).
    package struct Row: Codable, Equatable {
        package var key: String
        package var text: String
        package var value: Double? = nil
        package var choices: [String]? = nil
    }
    package var selected: SketchOrigin.Kind
    package var name: String?
    package var origin: String
    package var readOnly: String?
    package var focused: Int
    package var typing: String?
    /// The name typed is selected (typing replaces it); where the caret is.
    package var typingSelected = false
    package var caret = 0
    package var rows: [Row]
}
