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
}
