import Foundation
import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// Entry point. Every error carries its exit code (`ExitCoded`: 0 ok, 1
/// the scene failed, 2 usage, 128+N on signal N); the one catch below
/// hands it to `Failure.report`, which prints its lines to stderr (and the
/// JSON object with `--json`).
func main() -> Int32 {
    // The exact bytes of each argument (file names need not be UTF-8).
    let args = PathBytes.arguments()
    // No file the tool opens may become a closed stdin/stdout/stderr.
    Posix.protectStandardDescriptors()
    // What a scene prints cannot leave our messages or the JSON mid-line.
    Messages.trackStandardStreams()
    // Every write is checked: a reader that went away (`| head -c 10`) is
    // an error with one clear line (EPIPE), not a silent death by SIGPIPE.
    Signals.ignoreBrokenPipe()
    // `wobble-run edit SCENE.lua`: the studio window, its own executable
    // (a scene file named `edit` is reached as `./edit`).
    if args.first == "edit" { return Edit.run(Array(args.dropFirst())) }
    // `wobble-run new PHOTO [SCENE.lua]`: a starter scene (a scene file
    // named `new` is reached as `./new`).
    if args.first == "new" { return NewScene.run(Array(args.dropFirst())) }
    // `wobble-run cutout PHOTO --box X,Y,W,H [-o MASK.png]`: the mask a
    // cutout = "auto" finds (a scene file named `cutout` is `./cutout`).
    if args.first == "cutout" { return CutoutCommand.run(Array(args.dropFirst())) }
    // `wobble-run serve SCENE.lua`: the studio as a web page (a scene file
    // named `serve` is `./serve`).
    if args.first == "serve" { return Serve.run(Array(args.dropFirst())) }
    // `wobble-run pack MANIFEST`: many clips, one per manifest row (a
    // scene file named `pack` is `./pack`).
    if args.first == "pack" { return Pack.run(Array(args.dropFirst()), version: CommandLine_.version) }
    // A usage error is reported as JSON too when --json was asked for.
    let report = RunReport(json: args.prefix { $0 != "--" }.contains("--json"))
    // With the frames on stdout the object goes to stderr, usage errors too.
    report.toStderr = namesStdoutOutput(args.prefix { $0 != "--" })
    do {
        // `--generate KIND`: the man page, completions, Lua editor files
        // (for Scripts/install.sh; not in --help).
        if args.first == "--generate" {
            guard args.count == 2 else { throw UsageError("--generate takes one of \(Generate.kinds.joined(separator: ", "))") }
            print(try Generate.text(args[1]), terminator: "")
            return 0
        }
        let options = try CommandLine_.parse(args)
        if options.help {
            print(CommandLine_.helpText, terminator: "")
            return 0
        }
        if options.version {
            print(CommandLine_.version)
            return 0
        }
        Interrupt.install()
        // --timeout also bounds waiting for a child's answer (ffmpeg's probe).
        ChildProcess.answerLimit = options.timeout
        if options.watch { return WatchLoop.run(options) }
        try runOnce(options, report: report)
        return 0
    } catch {
        return Failure.report(error, report: report)
    }
}

/// Whether the arguments send the output to stdout (`-o -`, `--output=-`,
/// `-o /dev/stdout`, …).
func namesStdoutOutput<C: Collection>(_ args: C) -> Bool where C.Element == String {
    var previous = ""
    for a in args {
        var value: String?
        if previous == "-o" || previous == "--output" { value = a }
        if a.hasPrefix("--output=") { value = String(a.dropFirst(9)) }
        if let value, OutputPlan(format: .gif, path: value).isStdout { return true }
        previous = a
    }
    return false
}

/// Runs one render (or `--check`, or `--assemble`); throws an `ExitCoded`
/// error. Prints the `--check` line and the JSON object on success.
func runOnce(_ cli: Options, report: RunReport) throws {
    var options = cli.render
    // Signals stop the run; a read or a library call past --timeout ends the process.
    options.control = Interrupt.control
    let ok: String
    if let dir = cli.assemble {
        var assembler = Assembler(options: options, directory: dir)
        assembler.report = report
        ok = try assembler.run()
    } else {
        let summary = try RenderEntry.run(options, report: report)
        ok = summary.okLine
    }
    if options.check && !options.quiet { printError(ok) }
    try report.printJSON()
}

/// `runOnce` for `--watch`, which goes on after a failure: the exit code.
func runReporting(_ options: Options) -> Int32 {
    let report = RunReport(json: options.json)
    do {
        try runOnce(options, report: report)
        return 0
    } catch {
        return Failure.report(error, report: report)
    }
}

// The usual stack whatever `ulimit -s` says (a tiny one crashed Lua and Mesa).
ThisProcess.exit(StackRoom.run(main))
