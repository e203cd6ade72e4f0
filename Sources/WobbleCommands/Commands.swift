import WobbleEngine
import WobbleSystem

/// The command line as a library: the one subcommand table, and the entry
/// `Sources/wobble-run/main.swift` calls. Every subcommand is a row
/// (`Subcommand`: its name, synopsis, options and run function); the
/// dispatch, `--help`, the man page and the shell completions are made
/// from the rows, so adding a subcommand or an option is adding a row.
package enum Commands {
    /// Every subcommand, in the order help and the man page list them: a
    /// render first (no word: `wobble-run SCENE.lua`).
    package static let all: [Subcommand] = [
        RenderCommand.subcommand,
        EditCommand.subcommand,
        NewCommand.subcommand,
        CutoutCommand.subcommand,
        ServeCommand.subcommand,
        PackCommand.subcommand,
        CompletionsCommand.subcommand,
    ]

    /// The subcommand `word` names (a scene file named like one is reached
    /// as `./edit`), or nil: a render.
    package static func named(_ word: String) -> Subcommand? {
        word.isEmpty ? nil : all.first { $0.name == word }
    }

    /// Runs the command line `args` (the words after the program's name,
    /// byte-exact); the exit status: 0 ok, 1 the scene failed, 2 bad
    /// usage, 128 + N on signal N.
    package static func main(_ args: [String]) -> Int32 {
        // No file the tool opens may become a closed stdin/stdout/stderr.
        Posix.protectStandardDescriptors()
        // What a scene prints cannot leave our messages or the JSON mid-line.
        Messages.trackStandardStreams()
        // Every write is checked: a reader that went away (`| head -c 10`) is
        // an error with one clear line (EPIPE), not a silent death by SIGPIPE.
        Signals.ignoreBrokenPipe()
        // `--generate KIND`: the man page, completions, Lua editor files
        // (for Scripts/install.sh; not in --help).
        if args.first == "--generate" {
            do {
                guard args.count == 2 else { throw UsageError("--generate takes one of \(Generate.kinds.joined(separator: ", "))") }
                print(try Generate.text(args[1]), terminator: "")
                return 0
            } catch {
                return Failure.report(error)
            }
        }
        if let first = args.first, let command = named(first) { return command.run(Array(args.dropFirst())) }
        return RenderCommand.subcommand.run(args)
    }

    /// `wobble-run --help`: the usage of every subcommand, then the render's
    /// prose and options.
    package static var renderHelpText: String {
        let render = RenderCommand.subcommand
        var s = "wobble-run — turn a still image into a jelly animation.\n\n"
        var lines = render.synopsis.map { "wobble-run " + $0 }
        for c in all where !c.name.isEmpty && !c.hidden {
            lines.append("wobble-run \(c.synopsis.first ?? c.name)   (\(c.summary): wobble-run \(c.name) --help)")
        }
        s += "usage: " + lines.joined(separator: "\n       ") + "\n\n"
        s += render.about
        s += "\noptions:\n\n" + OptionParser.helpLines(render.options)
        s += "\n" + render.footer
        return s
    }
}

/// `wobble-run completions bash|zsh|fish`: the shell's completion script
/// (what `--generate` writes for packagers), for `source <(wobble-run
/// completions bash)`.
package enum CompletionsCommand {
    struct Words { var shell: String?; var help = false }

    static let specs: [OptionSpec<Words>] = [
        OptionSpec(names: ["-h", "--help"], value: nil, help: "show this help") { o, _ in o.help = true },
    ]

    package static let subcommand = Subcommand(
        name: "completions",
        synopsis: ["completions bash|zsh|fish"],
        summary: "the shell completion script",
        about: """
        Prints the completion script of the shell, made from the subcommand
        table: every subcommand, its options and the values they take. For
        this shell only: source <(wobble-run completions bash). Packages
        install the same files (wobble-run --generate bash).

        """,
        options: specs.map(OptionRow.init),
        operands: .words(Generate.shells),
        hidden: true,
        run: { CompletionsCommand.main($0) })

    /// The shell named by the words after `completions` (nil: `--help`).
    package static func parse(_ args: [String]) throws -> String? {
        var w = Words()
        try OptionParser.parse(args, specs: specs, into: &w, helpHint: "wobble-run completions --help") { w, a in
            if let s = w.shell { throw UsageError("completions: one shell only ('\(s)', '\(a)')") }
            w.shell = a
        } rest: { _, _ in }
        if w.help { return nil }
        guard let shell = w.shell, Generate.shells.contains(shell) else {
            throw UsageError("completions: name a shell: \(Generate.shells.joined(separator: ", "))" + (w.shell.map { " (got '\($0)')" } ?? ""))
        }
        return shell
    }

    static func main(_ args: [String]) -> Int32 {
        do {
            guard let shell = try parse(args) else {
                print(subcommand.helpText, terminator: "")
                return 0
            }
            print(try Generate.text(shell), terminator: "")
            return 0
        } catch {
            return Failure.report(error)
        }
    }
}
