import Foundation
import WobbleCore

/// A row of the inspector.
package enum InspectorRow: Equatable {
    case name, motion, number(String), pin

    /// The number rows of the standard models, as their tables declare them (each key once).
    package static var specs: [MotionParameter] { MotionCatalog.standard.parameters }

    /// The number row `key` of a sketch of `motion`: its model's, else a standard model's.
    package static func spec(_ key: String, of motion: MotionKind? = nil) -> MotionParameter? {
        motion?.declaration.parameter(key) ?? MotionCatalog.standard.parameter(key)
    }

    /// The rows for a sketch of `motion`, top to bottom: the name, the
    /// model, its table's parameters, the pin.
    package static func rows(_ motion: MotionKind) -> [InspectorRow] {
        [.name, .motion] + motion.declaration.parameters.map { .number($0.key) } + [.pin]
    }

    package static let pinChoices: [PinSide?] = [nil, .bottom, .top, .left, .right]
}

extension MotionParameter {
    /// Where `v` is on the inspector's slider, 0 to 1 (over `valid`,
    /// logarithmic with a knee).
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
