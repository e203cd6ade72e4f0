import WobbleCore
import WobbleRender

/// A command-line usage error (exit status 2): `message` is the line after
/// `wobble-run: `.
package struct UsageError: Error, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// One row of an option table: its names, the placeholder of its value
/// (nil for a flag), its help line, and how it sets the parsed options.
/// Adding an option to a command is adding one row to its table.
package struct OptionSpec<Target>: Sendable {
    package var names: [String]
    package var value: String?
    package var help: String
    /// Left out of `--help`, the man page and completions (hooks for tests
    /// and benchmarks).
    package var hidden: Bool
    package var apply: @Sendable (inout Target, String) throws -> Void

    package init(names: [String], value: String?, help: String, hidden: Bool = false,
                 apply: @escaping @Sendable (inout Target, String) throws -> Void) {
        self.names = names
        self.value = value
        self.help = help
        self.hidden = hidden
        self.apply = apply
    }
}

/// What running a scene takes from the command line, whichever command
/// parses it (a render, `--check`, `--watch`, `edit`): the rows below are
/// the one definition of these options, their limits and their errors.
package protocol SceneRunOptions: SendableMetatype {
    var image: String? { get set }
    var fps: Double? { get set }
    var seed: Int { get set }
    var timeout: Double? { get set }
    var backend: Backend { get set }
    var allowIO: Bool { get set }
    var help: Bool { get set }
}

extension SceneRunOptions {
    /// The engine's options for running `scene` with these rows (the one
    /// place every front end turns its options into a run).
    package func sessionOptions(scene: String, arguments: [String], verbose: Bool) -> SessionOptions {
        var s = SessionOptions(scenePath: scene)
        s.imagePath = image
        s.arguments = arguments
        s.seed = seed
        s.fps = fps
        s.allowIO = allowIO
        s.timeout = timeout
        s.backend = backend
        s.verbose = verbose
        return s
    }
}

extension OptionSpec where Target: SceneRunOptions {
    package static var fps: OptionSpec {
        OptionSpec(names: ["--fps"], value: "N", help: "frames per second (overrides the script's fps()); default 30") { o, v in
            o.fps = try OptionParser.number(v, "--fps", min: Limits.minFPS, max: Limits.maxFPS)
        }
    }
    package static var image: OptionSpec {
        OptionSpec(names: ["--image"], value: "PATH", help: "use this image instead of the one the script names") { o, v in o.image = v }
    }
    package static var backend: OptionSpec {
        OptionSpec(names: ["--backend"], value: "auto|gles|cpu|reference",
                   help: "renderer: auto (default: gles on a hardware GPU, else cpu), gles (OpenGL ES through EGL), cpu (static profiles on every core) or reference (the exact, slow CPU reference)") { o, v in
            guard let b = Backend(rawValue: v.lowercased()) else { throw UsageError("--backend: '\(v)' is not one of auto, gles, cpu, reference") }
            o.backend = b
        }
    }
    package static var seed: OptionSpec {
        OptionSpec(names: ["--seed"], value: "N", help: "seed for math.random (default 0): output is reproducible") { o, v in
            o.seed = try OptionParser.integer(v, "--seed", min: Int.min, max: Int.max)
        }
    }
    package static var timeout: OptionSpec {
        OptionSpec(names: ["--timeout"], value: "S", help: "stop a script that runs longer than S seconds of wall time") { o, v in
            o.timeout = try OptionParser.number(v, "--timeout", min: 0, exclusiveMin: true, max: 1e9)
        }
    }
    package static var allowIO: OptionSpec {
        OptionSpec(names: ["--allow-io"], value: nil, help: "give the script Lua's full io and os libraries (no sandbox)") { o, _ in o.allowIO = true }
    }
    package static var help: OptionSpec {
        OptionSpec(names: ["-h", "--help"], value: nil, help: "show this help") { o, _ in o.help = true }
    }
}

/// How one command words the parser's errors, and the few choices of
/// syntax that differ between commands. The syntax itself (`--opt value`,
/// `--opt=value`, `--` before the words that are never options) is the
/// parser's, the same for every command.
package struct ParseRules: Sendable {
    /// An unknown option: its name (before any `=`), the word as typed and
    /// the nearest known name (nil when none is near) give the message.
    package var unknown: @Sendable (_ name: String, _ word: String, _ suggestion: String?) -> String
    /// An option whose value is missing: its name as typed and its placeholder.
    package var needsValue: @Sendable (_ name: String, _ placeholder: String) -> String
    /// A flag given a value (`--overlay=1`): its name and the word as typed.
    package var flagValue: @Sendable (_ name: String, _ word: String) -> String
    /// nil: an option given again replaces its value; else the message for
    /// the second one (the option's first name).
    package var givenTwice: (@Sendable (_ name: String) -> String)?
    /// A `-h` or `--help` word before `--` asks for help whatever else the
    /// words say (nothing else is checked).
    package var helpFirst = false

    package init(unknown: @escaping @Sendable (_ name: String, _ word: String, _ suggestion: String?) -> String,
                 needsValue: @escaping @Sendable (_ name: String, _ placeholder: String) -> String,
                 flagValue: @escaping @Sendable (_ name: String, _ word: String) -> String,
                 givenTwice: (@Sendable (_ name: String) -> String)? = nil, helpFirst: Bool = false) {
        self.unknown = unknown
        self.needsValue = needsValue
        self.flagValue = flagValue
        self.givenTwice = givenTwice
        self.helpFirst = helpFirst
    }

    /// A render's and `edit`'s wording: an unknown option names the nearest
    /// known one ("did you mean") and `helpHint` (how to list them).
    package static func standard(helpHint: String) -> ParseRules {
        ParseRules(unknown: { name, _, suggestion in
            "unknown option '\(name)'" + (suggestion.map { " (did you mean '\($0)'?)" } ?? "") + "; see \(helpHint)"
        }, needsValue: { name, placeholder in
            "\(name) needs a value (\(placeholder))"
        }, flagValue: { name, _ in
            "\(name) takes no value"
        })
    }
}

/// The one command-line parser: every command's table goes through it, so
/// the syntax (`--opt value`, `--opt=value`, `--` before script arguments),
/// the limits and the messages are the same everywhere.
package enum OptionParser {
    /// Parses `args` with `specs` into `o`. A word that is not an option
    /// goes to `positional`; the words after `--` to `rest`. An unknown
    /// option names the nearest known one ("did you mean") and `helpHint`
    /// (how to list them).
    package static func parse<T>(_ args: [String], specs: [OptionSpec<T>], into o: inout T, helpHint: String,
                                 positional: (inout T, String) throws -> Void,
                                 rest: (inout T, [String]) throws -> Void) throws {
        try parse(args, specs: specs, into: &o, rules: .standard(helpHint: helpHint), positional: positional, rest: rest)
    }

    /// Parses `args` with `specs` into `o`, the errors worded by `rules`
    /// (each a `UsageError`, exit status 2).
    package static func parse<T>(_ args: [String], specs: [OptionSpec<T>], into o: inout T, rules: ParseRules,
                                 positional: (inout T, String) throws -> Void,
                                 rest: (inout T, [String]) throws -> Void) throws {
        if rules.helpFirst, args.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }),
           let help = specs.first(where: { $0.names.contains("--help") }) {
            try help.apply(&o, "")
            return
        }
        var seen = Set<Int>()
        var i = 0
        while i < args.count {
            let a = args[i]
            i += 1
            if a == "--" {
                try rest(&o, Array(args[i...]))
                return
            }
            guard a.hasPrefix("-") && a != "-" else {
                try positional(&o, a)
                continue
            }
            var name = a, inline: String?
            if a.hasPrefix("--"), let eq = a.firstIndex(of: "=") {
                name = String(a[..<eq])
                inline = String(a[a.index(after: eq)...])
            }
            guard let index = specs.firstIndex(where: { $0.names.contains(name) }) else {
                throw UsageError(rules.unknown(name, a, suggestion(for: name, in: specs)))
            }
            let spec = specs[index]
            if let twice = rules.givenTwice, spec.value != nil, !seen.insert(index).inserted {
                // (the value is still read first: a missing one is said as such)
                if inline == nil && i >= args.count { throw UsageError(rules.needsValue(name, spec.value ?? "")) }
                throw UsageError(twice(spec.names[0]))
            }
            if let placeholder = spec.value {
                let v: String
                if let inline { v = inline } else {
                    guard i < args.count else { throw UsageError(rules.needsValue(name, placeholder)) }
                    v = args[i]
                    i += 1
                }
                try spec.apply(&o, v)
            } else {
                if inline != nil { throw UsageError(rules.flagValue(name, a)) }
                try spec.apply(&o, "")
            }
        }
    }

    /// The options part of a help text: one entry per row not hidden.
    package static func helpLines<T>(_ specs: [OptionSpec<T>]) -> String {
        specs.filter { !$0.hidden }.map { helpEntry(names: $0.names, value: $0.value, help: $0.help) }.joined()
    }

    /// One option's entry in a help text: its names and placeholder, then
    /// its help wrapped into a column.
    package static func helpEntry(names: [String], value: String?, help: String) -> String {
        var left = names.joined(separator: ", ")
        if let value { left += " \(value)" }
        let indent = String(repeating: " ", count: 28)
        let pad = left.count < 26 ? String(repeating: " ", count: 26 - left.count) : "\n" + indent
        return "  \(left)\(pad)\(wrap(help, width: 52).joined(separator: "\n" + indent))\n"
    }

    /// Splits `text` into lines of at most `width` characters, at spaces.
    package static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = [], line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty && line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    package static func number(_ v: String, _ name: String, min: Double, exclusiveMin: Bool = false, max: Double) throws -> Double {
        guard let d = Double(decimal: v), d.isFinite else { throw UsageError("\(name): '\(v)' is not a number") }
        if exclusiveMin ? d <= min : d < min { throw UsageError("\(name): \(v) must be greater than \(exclusiveMin ? "" : "or equal to ")\(NumberText.plain(min))") }
        if d > max { throw UsageError("\(name): \(v) is more than \(NumberText.plain(max))") }
        return d
    }

    /// A frame range: `A-B`, `A` (one frame) or `A-` (to the end), 0-based
    /// and inclusive (`--frames`, a pack's `frames` column).
    package static func frameRange(_ v: String, _ name: String) throws -> ClosedRange<Int> {
        let parts = v.split(separator: "-", omittingEmptySubsequences: false)
        func n(_ s: Substring) throws -> Int {
            // ASCII digits only (`Int(digits:)`): no sign, no overflow.
            guard let x = Int(digits: s) else { throw UsageError("\(name): '\(v)' is not a range A-B of frame numbers (0-based)") }
            return x
        }
        switch parts.count {
        case 1: let a = try n(parts[0]); return a...a
        case 2:
            let a = try n(parts[0])
            let b = parts[1].isEmpty ? Int.max : try n(parts[1])
            guard a <= b else { throw UsageError("\(name): \(v): the first frame is after the last") }
            return a...b
        default: throw UsageError("\(name): '\(v)' is not a range A-B of frame numbers (0-based)")
        }
    }

    package static func integer(_ v: String, _ name: String, min: Int, max: Int) throws -> Int {
        guard let n = Int(v) else { throw UsageError("\(name): '\(v)' is not a whole number") }
        if n < min || n > max { throw UsageError("\(name): \(v) is out of range (\(min)...\(max))") }
        return n
    }

    /// The visible long option nearest to `name` (at most 2 edits away).
    package static func suggestion<T>(for name: String, in specs: [OptionSpec<T>]) -> String? {
        let all = specs.filter { !$0.hidden }.flatMap(\.names).filter { $0.hasPrefix("--") }
        let best = all.map { ($0, distance($0, name)) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= 2 else { return nil }
        return best.0
    }

    /// The edit (Levenshtein) distance between two strings.
    package static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var prev = Array(0...b.count)
        for i in 1...max(a.count, 1) where i <= a.count {
            var cur = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where j <= b.count {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            prev = cur
        }
        return prev[b.count]
    }
}
