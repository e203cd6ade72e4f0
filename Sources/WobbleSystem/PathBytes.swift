/// Lossless file names in Swift `String`s.
///
/// A Linux file name is any bytes but `/` and NUL; a Swift `String` holds
/// only valid Unicode, so `CommandLine.arguments` and `String(cString:)`
/// replace bytes that are not UTF-8 with U+FFFD and the name is lost
/// (`-o $'o\xfe.gif'` would write `o\xef\xbf\xbd.gif`). Here each such
/// byte `b` (0x80...0xFF) becomes the private-use code point
/// U+10FF00 + b instead (like Python's "surrogateescape", with code points
/// a `String` can hold), and `bytes(_:)` turns them back: every name the
/// system gives round-trips exactly, and valid UTF-8 names are unchanged.
///
/// Control characters (bytes 0x01...0x1F and 0x7F: a newline, a carriage
/// return, an escape) are escaped the same way (U+10FF0A for a newline): a
/// name is then one line in every message that names it, and cannot move
/// a terminal's cursor, wherever the message is built.
///
/// A name that really contains one of U+10FF00...U+10FFFF (the last 256
/// code points of plane 16, private use, in practice never seen) is decoded
/// as four escaped bytes too, so that decoding is lossless for every byte
/// string; `display(_:)` shows an escaped byte as `\xFE` (`\x0A`).
public enum PathBytes {
    /// The first code point used for an escaped byte (U+10FF80 is byte 0x80).
    static let escapeBase: UInt32 = 0x10FF00
    static let escapeRange: ClosedRange<UInt32> = 0x10FF00...0x10FFFF

    /// The string for a file name's bytes: UTF-8 decoded, each byte that is
    /// not part of valid UTF-8, and each control character, escaped.
    public static func string<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        decode(bytes, controls: true)
    }

    /// The string for a message's bytes (Lua's error text, which may name
    /// files by their bytes): as `string(_:)`, but control characters are
    /// kept (a message's lines stay lines).
    public static func text<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        decode(bytes, controls: false)
    }

    private static func decode<C: Collection>(_ bytes: C, controls: Bool) -> String where C.Element == UInt8 {
        let b = Array(bytes)
        var scalars = String.UnicodeScalarView()
        var i = 0
        func escape(_ byte: UInt8) { scalars.append(Unicode.Scalar(escapeBase + UInt32(byte))!) }
        while i < b.count {
            let c = b[i]
            if c < 0x80 {
                if controls && (c >= 0x01 && c < 0x20 || c == 0x7F) { escape(c) } else { scalars.append(Unicode.Scalar(c)) }
                i += 1
                continue
            }
            // The length and the allowed range of the second byte (RFC 3629).
            var n = 0, lo: UInt8 = 0x80, hi: UInt8 = 0xBF
            switch c {
            case 0xC2...0xDF: n = 2
            case 0xE0: n = 3; lo = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: n = 3
            case 0xED: n = 3; hi = 0x9F
            case 0xF0: n = 4; lo = 0x90
            case 0xF1...0xF3: n = 4
            case 0xF4: n = 4; hi = 0x8F
            default: n = 0
            }
            var valid = n > 0 && i + n <= b.count
            if valid {
                for k in 1..<n {
                    let x = b[i + k]
                    if k == 1 ? !(lo...hi).contains(x) : !(0x80...0xBF).contains(x) { valid = false; break }
                }
            }
            guard valid else {
                escape(c)
                i += 1
                continue
            }
            var v = UInt32(c) & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07)
            for k in 1..<n { v = (v << 6) | (UInt32(b[i + k]) & 0x3F) }
            if escapeRange.contains(v) {
                for k in 0..<n { escape(b[i + k]) }
            } else {
                scalars.append(Unicode.Scalar(v)!)
            }
            i += n
        }
        return String(scalars)
    }

    /// The file name bytes a string stands for (the inverse of `string`).
    public static func bytes(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for u in s.unicodeScalars {
            if escapeRange.contains(u.value) {
                out.append(UInt8(u.value - escapeBase))
            } else {
                out.append(contentsOf: String(u).utf8)
            }
        }
        return out
    }

    /// Calls `body` with the NUL-terminated bytes of `s`; nil when `s`
    /// contains NUL (no file has such a name).
    public static func withCString<R>(_ s: String, _ body: (UnsafePointer<CChar>) throws -> R) rethrows -> R? {
        var b = bytes(s)
        if b.contains(0) { return nil }
        b.append(0)
        return try b.withUnsafeBufferPointer { buf in
            try buf.withMemoryRebound(to: CChar.self) { try body($0.baseAddress!) }
        }
    }

    /// The program's arguments (without the program name), each decoded
    /// with `string(_:)`, so names that are not UTF-8 survive.
    public static func arguments() -> [String] {
        var out: [String] = []
        let argc = Int(CommandLine.argc)
        for i in 1..<max(argc, 1) {
            guard let p = CommandLine.unsafeArgv[i] else { continue }
            var n = 0
            while p[n] != 0 { n += 1 }
            out.append(string(UnsafeBufferPointer(start: UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self), count: n)))
        }
        return out
    }

    /// `s` for a message: each escaped byte as `\xFE` (`\x0A`); with
    /// `controls`, control characters not escaped in `s` too.
    public static func display(_ s: String, controls: Bool = false) -> String {
        var out = ""
        for u in s.unicodeScalars {
            if escapeRange.contains(u.value) {
                out += "\\x" + hex(UInt8(u.value - escapeBase))
            } else if controls, u.value < 0x20 || u.value == 0x7F {
                out += "\\x" + hex(UInt8(u.value))
            } else {
                out.unicodeScalars.append(u)
            }
        }
        return out
    }

    private static func hex(_ b: UInt8) -> String {
        let d = Array("0123456789ABCDEF")
        return String([d[Int(b >> 4)], d[Int(b & 15)]])
    }
}
