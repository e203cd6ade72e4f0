import Foundation
import WobbleEngine
import WobbleServe
import WobbleSystem

/// `wobble-run serve SCENE.lua [--port N] [--host H]`: the studio as a web
/// page (`StudioServer`). Prints the page's address with its token, then
/// serves until SIGINT or SIGTERM (exit 128 + the signal, as every
/// interrupted run). No window system: a render node or a container serves.
enum Serve {
    static let usage = "usage: wobble-run serve SCENE.lua [--port N] [--host ADDRESS]"

    static let helpText = """
    \(usage)

    Serves the studio as a web page: the scene's preview drawn by WebGL2 in
    the browser with the renderer's own shaders, handles, pokes, the timeline,
    Ctrl+S saving into the scene file. Prints the page's address with a
    random token that every request needs.

      --port N          listen on port N (default: a free port)
      --host ADDRESS    listen on ADDRESS (default 127.0.0.1: this machine only;
                        from another machine, forward the port with ssh -L)

    """

    struct Failure: Error { let message: String; let code: Int32 }

    static func run(_ args: [String]) -> Int32 {
        if args.contains("--help") || args.contains("-h") {
            print(helpText, terminator: "")
            return 0
        }
        do {
            return try serve(args)
        } catch let f as Failure {
            printError("wobble-run: serve: \(f.message)")
            return f.code
        } catch {
            printError("wobble-run: serve: \(error)")
            return 1
        }
    }

    static func serve(_ args: [String]) throws -> Int32 {
        var scene: String?, host = "127.0.0.1", port = 0
        var i = 0
        while i < args.count {
            let a = args[i]
            switch a {
            case "--port", "--host":
                i += 1
                guard i < args.count else { throw Failure(message: "\(a) needs a value (\(usage))", code: 2) }
                if a == "--host" {
                    guard !args[i].isEmpty else { throw Failure(message: "--host needs an address", code: 2) }
                    guard let why = ServerConfig.hostProblem(args[i]) else { host = args[i]; break }
                    throw Failure(message: why, code: 2)
                } else {
                    guard let n = Int(args[i]), (0...65535).contains(n) else {
                        throw Failure(message: "--port '\(args[i])' is not a port number (0 to 65535)", code: 2)
                    }
                    port = n
                }
            default:
                guard !a.hasPrefix("-") || a == "-" else { throw Failure(message: "unknown option '\(a)' (\(usage))", code: 2) }
                guard scene == nil else { throw Failure(message: "one scene at a time (\(usage))", code: 2) }
                scene = a
            }
            i += 1
        }
        guard let scene else { throw Failure(message: "no scene given (\(usage))", code: 2) }
        guard Posix.kind(scene) == .regular else { throw Failure(message: "scene '\(ScenePaths.shown(scene))' is not a file", code: 1) }
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
            throw Failure(message: e.message, code: 1)
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
        return 128 + sig!
    }
}
