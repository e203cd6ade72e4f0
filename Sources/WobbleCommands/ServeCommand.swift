import Foundation
import WobbleEngine
import WobbleServe
import WobbleSystem

/// `wobble-run serve SCENE.lua [--port N] [--host H]`: the studio as a web
/// page (`StudioServer`). Prints the page's address with its token, then
/// serves until SIGINT or SIGTERM (exit 128 + the signal, as every
/// interrupted run). No window system: a render node or a container serves.
package struct ServeCommand: Equatable, RunnableSubcommand {
    package var scene = ""
    package var host = "127.0.0.1"
    /// 0: a free port.
    package var port = 0
    package var help = false

    package init() {}

    static let usage = subcommand.usage

    /// What the parser fills.
    struct Words { var scene: String?; var host = "127.0.0.1", port = 0; var help = false }

    static let specs: [OptionSpec<Words>] = [
        OptionSpec(names: ["--port"], value: "N", help: "listen on port N (default: a free port)") { o, v in
            guard let n = Int(v), (0...65535).contains(n) else {
                throw UsageError("--port '\(v)' is not a port number (0 to 65535)")
            }
            o.port = n
        },
        OptionSpec(names: ["--host"], value: "ADDRESS",
                   help: "listen on ADDRESS (default 127.0.0.1: this machine only; from another machine, forward the port with ssh -L)") { o, v in
            guard !v.isEmpty else { throw UsageError("--host needs an address") }
            if let why = ServerConfig.hostProblem(v) { throw UsageError(why) }
            o.host = v
        },
        OptionSpec(names: ["-h", "--help"], value: nil, help: "show this help") { o, _ in o.help = true },
    ]

    static let rules = ParseRules(unknown: { _, word, _ in
        "unknown option '\(word)' (\(usage))"
    }, needsValue: { name, _ in
        "\(name) needs a value (\(usage))"
    }, flagValue: { _, word in
        "unknown option '\(word)' (\(usage))"
    }, helpFirst: true)

    /// `serve`'s row of the table.
    package static let subcommand = Subcommand(
        name: "serve",
        synopsis: ["serve SCENE.lua [--port N] [--host ADDRESS]"],
        summary: "the studio in a browser",
        about: """
        Serves the studio as a web page: the scene's preview drawn by WebGL2 in
        the browser with the renderer's own shaders, handles, pokes, the timeline,
        Ctrl+S saving into the scene file. Prints the page's address with a
        random token that every request needs; from another machine, forward
        the port with ssh -L. It serves until SIGINT or SIGTERM.

        """,
        options: specs.map(OptionRow.init),
        operands: .scene,
        run: { ServeCommand.main($0) })

    /// The words after `serve` as a command; a `Failure` (exit 2) for bad usage.
    package static func parse(_ args: [String]) throws -> ServeCommand {
        var w = Words()
        do {
            try OptionParser.parse(args, specs: specs, into: &w, rules: rules, operand: \.scene,
                                   tooMany: "one scene at a time (\(usage))")
        } catch let e as UsageError {
            throw Failure(e.message, command: "serve", exitCode: 2)
        }
        var c = ServeCommand()
        if w.help { c.help = true; return c }
        guard let scene = w.scene else { throw Failure("no scene given (\(usage))", command: "serve", exitCode: 2) }
        c.scene = scene
        c.host = w.host
        c.port = w.port
        return c
    }

    /// Serves until a signal; the exit status (128 + the signal).
    func run() throws -> Int32 {
        guard Posix.kind(scene) == .regular else { throw Failure("scene '\(ScenePaths.shown(scene))' is not a file", command: "serve", exitCode: 1) }
        // The page draws the preview; the session renders only exports and
        // stills, with the engine's backend choice (`auto`), as the command
        // line and the window do: the same scene gives the same bytes.
        let options = SessionOptions(scenePath: scene)
        Signals.install()
        // The scene's first run (in `start`) and a run in flight when the
        // signal comes are not waited for: `start` stops waiting at the
        // signal, and if the server has not stopped a second later (a
        // run busy in a library call, civetweb slow to stop), the watchdog
        // waits for a file being moved into place, removes the temporary
        // files and exits with 128 + the signal, as every interrupted run.
        Signals.escalate(after: 1.0) { sig in
            CommitWindow.waitUntilClosed(timeout: 30)
            TemporaryPaths.removeAll()
            ThisProcess.exitNow(128 + sig)
        }
        let studio = StudioServer(options: options, host: host, port: port)
        do {
            try studio.start()
        } catch let e as ServerError {
            throw Failure(e.message, command: "serve", exitCode: 1)
        }
        if let sig = Signals.received {   // during the first run: no address to give
            studio.stop()
            return 128 + sig
        }
        let p = studio.server.port
        print("wobble-run: serving \(ScenePaths.shown(scene)) at \(studio.url)")
        print("wobble-run: from another machine: ssh -L \(p):127.0.0.1:\(p) THIS-HOST, then open the address there (Ctrl+C stops)")
        ThisProcess.flushOutput()
        var sig: Int32?
        while sig == nil { sig = Signals.sleep(3600) }
        studio.stop()
        return 128 + (sig ?? SIGINT)
    }
}
