import Foundation
import WobbleSystem

/// Lua source text for values the tool writes into scenes (takes, starter scenes).
public enum LuaLiteral {
    /// `s` (a `PathBytes` string: its exact bytes) as a Lua string literal
    /// in ASCII: quotes and backslashes escaped, other bytes as `\ddd`.
    public static func string(_ s: String) -> String {
        var out = "\""
        for b in PathBytes.bytes(s) {
            switch b {
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "\""): out += "\\\""
            case 32..<127: out += String(UnicodeScalar(b))
            default: out += "\\" + String(format: "%03d", Int(b))
            }
        }
        return out + "\""
    }

    /// A number with at most `decimals` decimals, no trailing zeros (`0.25`, `3`).
    public static func number(_ v: Double, decimals: Int) -> String {
        guard v.isFinite else { return "0" }
        var s = String(format: "%.\(decimals)f", v)
        if s.contains(".") {
            while s.hasSuffix("0") { s.removeLast() }
            if s.hasSuffix(".") { s.removeLast() }
        }
        return s == "-0" ? "0" : s
    }
}
