import Foundation

/// Path strings of the studio and the session: file names kept as
/// `PathBytes` strings (names that are not UTF-8 survive), so the
/// operations here are on the string and the current folder comes from
/// `Posix.currentDirectory()`, never from `URL(fileURLWithPath:)` or
/// `FileManager` (they encode such names wrongly, or lose them). Messages
/// show these paths through `PathBytes.display`.
public enum ScenePaths {
    /// The current folder (its exact bytes), "/" when it cannot be read.
    public static func currentDirectory() -> String {
        Posix.currentDirectory() ?? "/"
    }

    /// `path` made absolute (against the current folder) and lexically
    /// normalised: no `.`, `..` or empty components (links are not resolved).
    public static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : currentDirectory() + "/" + path
        // By scalars, not characters: a name may begin with a combining mark.
        var parts: [String] = []
        for c in full.unicodeScalars.split(separator: "/", omittingEmptySubsequences: true) {
            let part = String(String.UnicodeScalarView(c))
            if part == "." { continue }
            if part == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(part)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `path` relative to the current folder when it is inside it, else absolute.
    public static func relative(_ path: String) -> String {
        let full = AbsolutePath(path)
        return full.relative(inside: AbsolutePath(currentDirectory())) ?? full.string
    }

    /// `path` as one word of a command to type in a shell (bash, zsh, ksh,
    /// and POSIX sh since 2024): its exact bytes, so the suggested command
    /// names the very file. Plain when every byte is safe (letters, digits,
    /// `._-/+,:@`), single-quoted when only printable text needs it,
    /// `$'…'` with `\xHH` escapes for control bytes and bytes that are
    /// not UTF-8. A relative name that starts with `-` gains `./`, so no
    /// command reads it as an option (`./-o.lua`).
    public static func shellWord(_ path: String) -> String {
        var bytes = PathBytes.bytes(path)
        if bytes.first == UInt8(ascii: "-") { bytes = Array("./".utf8) + bytes }
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+,:@".utf8)
        if !bytes.isEmpty && bytes.allSatisfy(safe.contains) { return String(decoding: bytes, as: UTF8.self) }
        let printable = bytes.allSatisfy { $0 >= 0x20 && $0 != 0x7F }
            && String(validating: bytes, as: UTF8.self) != nil
        if printable {
            return "'" + String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        // $'…': printable ASCII as itself (\\ and \' escaped), every other byte as \xHH.
        var out = "$'"
        for b in bytes {
            switch b {
            case UInt8(ascii: "\\"): out += "\\\\"
            case UInt8(ascii: "'"): out += "\\'"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(b))
            default: out += String(format: "\\x%02X", b)
            }
        }
        return out + "'"
    }

    /// The last component (`d/s.lua` → `s.lua`).
    public static func name(_ path: String) -> String {
        (path as NSString).lastPathComponent
    }

    /// The last component without its extension (`d/s.lua` → `s`).
    public static func baseName(_ path: String) -> String {
        (name(path) as NSString).deletingPathExtension
    }

    /// The extension of the last component, without its dot (`d/clip.MP4`
    /// → `MP4`; "" when it has none).
    public static func fileExtension(_ path: String) -> String {
        (name(path) as NSString).pathExtension
    }

    /// The folder of `path` ("." for a bare name, "/" for one in the root).
    public static func folder(_ path: String) -> String {
        let d = (path as NSString).deletingLastPathComponent
        if d.isEmpty { return path.hasPrefix("/") ? "/" : "." }
        return d
    }

    /// `name` in the folder `dir` (one slash between them however `dir`
    /// ends; `name` alone for an empty `dir`).
    public static func join(_ dir: String, _ name: String) -> String {
        dir.isEmpty ? name : dir.hasSuffix("/") ? dir + name : dir + "/" + name
    }

    /// `path` for a message or a title: bytes that are not UTF-8 as `\xFE`,
    /// control characters too (the CLI's form).
    public static func shown(_ path: String) -> String {
        PathBytes.display(path, controls: true)
    }

    /// The first `<scene>-<tag>-N.<ext>` beside the scene that is free
    /// (nothing there, not even a dangling link), N from 1; absolute when
    /// the scene's path is, else relative to the current folder. The
    /// scene's exact bytes are kept (`PathBytes`).
    public static func firstFree(beside scenePath: String, tag: String, ext: String) -> String {
        firstFree(beside: scenePath) { "\(baseName(scenePath))-\(tag)-\($0).\(ext)" }
    }

    /// The first `name(N)` beside the scene that is free, N from 1.
    public static func firstFree(beside scenePath: String, _ name: (Int) -> String) -> String {
        let dir = folder(absolute(scenePath))
        var n = 1
        while true {
            let p = join(dir, name(n))
            if Posix.kind(p, follow: false) == nil {
                return scenePath.hasPrefix("/") ? p : relative(p)
            }
            n += 1
        }
    }
}
