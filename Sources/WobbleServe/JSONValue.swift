import Foundation

/// A JSON value as the browser studio's wire carries it: the messages of
/// `StudioProtocol` are built from and read into these by hand (a `type`
/// member and named members), never by a compiler's synthesised
/// encoding, so renaming a Swift case or property cannot change the wire.
public enum JSONValue: Codable, Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n):
            // Whole numbers as integers (`5`, not `5.0`): frames, rows, ids.
            if n.isFinite, n == n.rounded(), abs(n) < 1e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// The value of a JSON text; nil when it is not JSON.
    public static func parse(_ text: String) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    /// The JSON text (members sorted: the same value gives the same bytes).
    public var text: String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? e.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "null"
    }

    /// The members, when this is an object.
    public var object: [String: JSONValue]? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// What kind of value this is, as a message about it says it.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Every number in it, however deep.
    public var numbers: [Double] {
        switch self {
        case .number(let n): return [n]
        case .array(let a): return a.flatMap(\.numbers)
        case .object(let o): return o.values.flatMap(\.numbers)
        default: return []
        }
    }
}

extension JSONValue {
    /// A number member's value.
    public init(_ n: Double) { self = .number(n) }
    public init(_ n: Int) { self = .number(Double(n)) }
    public init(_ s: String) { self = .string(s) }
    public init(_ b: Bool) { self = .bool(b) }
    /// nil as `null`.
    public init(_ s: String?) { self = s.map { .string($0) } ?? .null }
    public init(_ n: Int?) { self = n.map { .number(Double($0)) } ?? .null }
    public init(_ n: Double?) { self = n.map { .number($0) } ?? .null }
    public init(_ a: [String]) { self = .array(a.map { .string($0) }) }
    public init(_ a: [Int]) { self = .array(a.map { .number(Double($0)) }) }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}
