import WobbleEngine

/// One option of a subcommand as help, the man page and the completions
/// see it: an `OptionSpec` row without its type (the typed row parses;
/// this one describes).
package struct OptionRow: Sendable, Equatable {
    package var names: [String]
    /// The value's placeholder (`PATH`, `N`, `gif|png|…`); nil for a flag.
    package var value: String?
    package var help: String
    /// Left out of help, the man page and completions (test hooks).
    package var hidden: Bool

    package init<T>(_ spec: OptionSpec<T>) {
        names = spec.names
        value = spec.value
        help = spec.help
        hidden = spec.hidden
    }

    /// What a shell completes the value with.
    package enum Completion: Equatable, Sendable {
        /// A flag: no value.
        case none
        /// One of these words.
        case choices([String])
        case file
        case directory
        /// Anything (a number, a box): nothing to offer.
        case text
    }

    package var completion: Completion {
        guard let v = value else { return .none }
        if v.contains("|") { return .choices(v.split(separator: "|").map(String.init)) }
        if v == "DIR" { return .directory }
        if ["PATH", "MASK.png"].contains(v) { return .file }
        return .text
    }

    /// The long names (`--fps`), for completions.
    package var longNames: [String] { names.filter { $0.hasPrefix("--") } }
}

/// One subcommand of `wobble-run`: a row of the one table (`Commands.all`)
/// that the dispatch, `--help`, the man page and the shell completions are
/// all made from.
package struct Subcommand: Sendable {
    /// The word after `wobble-run` (`cutout`); empty for a render, which
    /// has none (`wobble-run SCENE.lua`).
    package var name: String
    /// The usage lines, without `wobble-run ` (`cutout PHOTO (--box …)`).
    package var synopsis: [String]
    /// Said after the first usage line in an error (`(MASK.png: …)`).
    package var usageNote: String?
    /// One line: what it is for (the overview in `--help`, completions).
    package var summary: String
    /// The prose of its `--help` and its paragraph of the man page.
    package var about: String
    /// The options, in the order `--help` lists them.
    package var options: [OptionRow]
    /// Said after the options in `--help` (exit status, examples).
    package var footer: String = ""
    /// What the words that are not options complete to.
    package var operands: Operands
    /// Left out of the overview and the completions' command words (a
    /// packager's command, as `--generate` is).
    package var hidden = false
    /// Runs it with the words after its name; the exit status.
    package var run: @Sendable ([String]) -> Int32

    /// What a shell offers for the words that are not options.
    package enum Operands: Equatable, Sendable {
        /// `.lua` files and folders (a scene).
        case scene
        /// Any file first (a photo), then a scene (`new PHOTO [SCENE.lua]`).
        case photo
        /// A manifest: `.csv` and `.jsonl` files and folders.
        case manifest
        /// One of these words.
        case words([String])
    }

    /// The one-line usage an error repeats: `usage: wobble-run new PHOTO [SCENE.lua]   (…)`.
    package var usage: String { "usage: wobble-run " + (synopsis.first ?? name) + (usageNote.map { "   " + $0 } ?? "") }

    /// Its `--help`: the usage lines, the prose, the options from the table.
    package var helpText: String {
        var s = usage + "\n"
        for line in synopsis.dropFirst() { s += "       wobble-run " + line + "\n" }
        s += "\n" + about
        let shown = options.filter { !$0.hidden }
        if !shown.isEmpty { s += "\noptions:\n\n" + OptionParser.helpLines(shown) }
        if !footer.isEmpty { s += "\n" + footer }
        return s
    }
}

extension OptionParser {
    /// The options part of a help text from described rows.
    package static func helpLines(_ rows: [OptionRow]) -> String {
        rows.filter { !$0.hidden }.map { helpEntry(names: $0.names, value: $0.value, help: $0.help) }.joined()
    }
}

/// A subcommand whose words parse into a value that runs (`cutout`, `new`,
/// `serve`): its `main` is the same for each — `--help` prints its help,
/// else it runs; a failure is one line (`Failure.report`).
protocol RunnableSubcommand {
    static var subcommand: Subcommand { get }
    static func parse(_ args: [String]) throws -> Self
    var help: Bool { get }
    /// The exit status.
    func run() throws -> Int32
}

extension RunnableSubcommand {
    static func main(_ args: [String]) -> Int32 {
        do {
            let c = try parse(args)
            if c.help {
                print(subcommand.helpText, terminator: "")
                return 0
            }
            return try c.run()
        } catch {
            return Failure.report(error, command: subcommand.name)
        }
    }
}

extension OptionParser {
    /// As `parse`, for a command of one operand kept at `operand`: a second
    /// one, before or after `--`, is the usage error `tooMany`.
    static func parse<T>(_ args: [String], specs: [OptionSpec<T>], into o: inout T, rules: ParseRules,
                         operand: WritableKeyPath<T, String?>, tooMany: String) throws {
        func take(_ w: inout T, _ a: String) throws {
            guard w[keyPath: operand] == nil else { throw UsageError(tooMany) }
            w[keyPath: operand] = a
        }
        try parse(args, specs: specs, into: &o, rules: rules, positional: take) { w, words in
            for a in words { try take(&w, a) }
        }
    }
}
