import Foundation
import WobbleCore
import WobbleRender
import WobbleScript
import WobbleSession
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// `wobble-run edit SCENE.lua [options]`: the studio window (SPEC §8).
public enum Studio {
    /// The one line printed when there is no display.
    public static let noDisplayMessage =
        "wobble-run: edit needs a display (DISPLAY or WAYLAND_DISPLAY is not set); render headless with 'wobble-run SCENE.lua'"

    public static let helpText = """
    usage: wobble-run edit SCENE.lua [options] [-- script args...]

    Opens a window that plays the scene's clip in real time and reloads it
    when the scene, a module, a trace or the image changes on disk.

    keys:  Space play/pause   Left/Right one frame (pauses)   Home frame 0
           H handles on/off   R record a take / write it   Esc quit
           Shift+arrows shake (1.5 g)   Backspace forget the pokes
           A add a 90x90 sketch at the mouse   Ctrl+S save the edited sketches
           Ctrl+Z undo the last unsaved drag or add
    mouse: drag a handle (a corner or center) to move it; drag inside a
           region to poke it; click or drag the timeline to scrub

    options:
      --image PATH     use this image instead of the one the scene names
      --fps N          frames per second (overrides the scene's fps())
      --seed N         seed for math.random (default 0)
      --allow-io       give the scene Lua's full io and os libraries
      --timeout S      stop a run of the scene after S seconds (default 10)
      --backend B      gles (default) or cpu
      -v, --verbose    say what the window does on stderr (frames presented)
      -h, --help       this text

    """

    struct Options {
        var session: SessionOptions
        var verbose = false
        var position: (Int, Int)?
        /// Present every loop turn (for Scripts/bench-studio.sh), not at the clip's fps.
        var unpaced = false
        /// Quit after this many seconds (benchmarks).
        var quitAfter: Double?
        /// Print where the time of a frame goes (WOBBLE_STUDIO_PROFILE=1).
        var profile = false
    }

    struct UsageError: Error { var message: String }

    static func parse(_ args: [String]) throws -> Options? {
        var scene: String?
        var o = SessionOptions(scenePath: "")
        var verbose = false
        var position: (Int, Int)?
        var quitAfter: Double?
        var rest: [String] = []
        var i = 0
        func value(_ name: String) throws -> String {
            i += 1
            guard i < args.count else { throw UsageError(message: "\(name) needs a value") }
            return args[i]
        }
        func number(_ name: String, _ s: String, _ range: ClosedRange<Double>) throws -> Double {
            guard let v = Double(s), v.isFinite, range.contains(v) else {
                throw UsageError(message: "\(name): '\(s)' is not a number in [\(range.lowerBound), \(range.upperBound)]")
            }
            return v
        }
        while i < args.count {
            let a = args[i]
            switch a {
            case "-h", "--help": return nil
            case "--image": o.imagePath = try value(a)
            case "--fps": o.fps = try number(a, try value(a), 0.001...1000)
            case "--seed":
                let s = try value(a)
                guard let v = Int(s) else { throw UsageError(message: "--seed: '\(s)' is not an integer") }
                o.seed = v
            case "--allow-io": o.allowIO = true
            case "--timeout": o.timeout = try number(a, try value(a), 0.001...86400)
            case "--backend":
                let s = try value(a)
                guard let b = Backend(rawValue: s) else { throw UsageError(message: "--backend: '\(s)' is not gles or cpu") }
                o.backend = b
            case "-v", "--verbose": verbose = true
            case "--window-position":   // hidden: tests place the window
                let s = try value(a)
                let parts = s.split(separator: ",").compactMap { Int($0) }
                guard parts.count == 2 else { throw UsageError(message: "--window-position: '\(s)' is not X,Y") }
                position = (parts[0], parts[1])
            case "--quit-after":   // hidden: benchmarks
                quitAfter = try number(a, try value(a), 0...86400)
            case "--":
                rest = Array(args[(i + 1)...])
                i = args.count
                continue
            default:
                if a.hasPrefix("-") && a != "-" { throw UsageError(message: "unknown option '\(a)' (wobble-run edit --help lists them)") }
                guard scene == nil else { throw UsageError(message: "one scene at a time ('\(scene ?? "")' and '\(a)')") }
                scene = a
            }
            i += 1
        }
        guard let scene else { throw UsageError(message: "edit needs a scene: wobble-run edit SCENE.lua") }
        o.scenePath = scene
        o.arguments = rest
        o.verbose = verbose
        let env = ProcessInfo.processInfo.environment
        if position == nil, let p = env["WOBBLE_STUDIO_POSITION"] {
            let parts = p.split(separator: ",").compactMap { Int($0) }
            if parts.count == 2 { position = (parts[0], parts[1]) }
        }
        return Options(session: o, verbose: verbose, position: position,
                       unpaced: env["WOBBLE_STUDIO_UNPACED"] == "1", quitAfter: quitAfter,
                       profile: env["WOBBLE_STUDIO_PROFILE"] == "1")
    }

    /// Runs `wobble-run edit` with the arguments after `edit`; the exit status.
    public static func main(_ args: [String]) -> Int32 {
        let options: Options
        do {
            guard let o = try parse(args) else {
                print(helpText, terminator: "")
                return 0
            }
            options = o
        } catch let e as UsageError {
            printError("wobble-run: edit: \(e.message)")
            return 2
        } catch {
            printError("wobble-run: edit: \(error)")
            return 2
        }
        let env = ProcessInfo.processInfo.environment
        let hasDisplay = !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty
        guard hasDisplay else {
            printError(noDisplayMessage)
            return 1
        }
        Signals.install()
        do {
            try StudioWindow.initialise()
            defer { StudioWindow.shutdown() }
            let app = try StudioApp(options: options)
            return app.run()
        } catch {
            printError("\(error)")
            return 1
        }
    }
}

/// Writes a line to stderr; file-name bytes that are not UTF-8 (kept in
/// `PathBytes` strings) show as `\xFE`, as the headless tool prints them.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((PathBytes.display(line) + "\n").utf8))
}
