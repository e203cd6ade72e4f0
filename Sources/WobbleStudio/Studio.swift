import Foundation
import WobbleStudioCore
import WobbleCore
import WobbleRender
import WobbleScript
import WobbleEngine
import WobbleSystem

/// `wobble-run edit SCENE.lua [options]`: the studio window.
public enum Studio {
    /// The one line printed when there is no display.
    public static let noDisplayMessage =
        "wobble-run: edit needs a display (DISPLAY or WAYLAND_DISPLAY is not set); render headless with 'wobble-run SCENE.lua'"

    public static var helpText: String { helpHeader + OptionParser.helpLines(specs) }

    static let helpHeader = """
    usage: wobble-run edit SCENE.lua [options] [-- script args...]

    Opens a window that plays the scene's clip in real time and reloads it
    when the scene, a module, a trace or the image it reads changes on disk.

    keys:  Space play/pause   Left/Right one frame (pauses)   Home frame 0
           H handles on/off   R record a take / write it   Esc quit
           Shift+arrows shake (1.5 g)   Backspace forget the pokes
           A add a 90x90 region (regionN) at the mouse   Ctrl+S save the edits
           Ctrl+Z undo, Ctrl+Shift+Z (or Ctrl+Y) redo, across saves
           Tab / Shift+Tab select the next / previous region   F fit the picture
           E export the scene's output   P write the frame as a PNG
           M mute the soundtrack (it plays with the playhead, its clock leads)
           C cut out the selected region   Shift+click add a region around the object
           F1 or ? every key, in the window
    inspector (the selected region): Up/Down a row, - / + change it
           (PageUp/PageDown: ten steps), Enter rename (type, Enter keeps, Esc leaves)
    mouse: drag a handle (a corner or center) to move it; drag inside a
           region to poke it; Ctrl+click or right-click a region to select
           it; Shift+drag / Alt+drag mark object / background in the
           selected region's cutout; drag a slider or click a choice in the inspector; click or
           drag the timeline to scrub; hover a tick to name it; wheel
           zooms; middle drag or Space+drag pans
    Esc or closing with unsaved edits asks first: Esc/close again quits
    without saving, Ctrl+S saves and quits, another key goes back.

    options:

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

    /// What `edit` parses, and its option table: the engine's, which the
    /// command line's help, man page and completions show.
    typealias Command = StudioCommandLine
    static var specs: [OptionSpec<Command>] { StudioCommandLine.specs }

    static func parse(_ args: [String]) throws -> Options? {
        var c = Command()
        try OptionParser.parse(args, specs: specs, into: &c, helpHint: "wobble-run edit --help") { c, a in
            if let scene = c.scene { throw UsageError("edit: one scene at a time ('\(scene)' and '\(a)')") }
            c.scene = a
        } rest: { c, words in
            c.arguments = words
        }
        if c.help { return nil }
        guard let scene = c.scene else { throw UsageError("edit: edit needs a scene: wobble-run edit SCENE.lua") }
        let o = c.sessionOptions(scene: scene, arguments: c.arguments, verbose: c.verbose)
        var position = c.position
        let env = Environment.all
        if position == nil, let p = env["WOBBLE_STUDIO_POSITION"] {
            let parts = p.split(separator: ",").compactMap { Int($0) }
            if parts.count == 2 { position = (parts[0], parts[1]) }
        }
        return Options(session: o, verbose: c.verbose, position: position,
                       unpaced: env["WOBBLE_STUDIO_UNPACED"] == "1", quitAfter: c.quitAfter,
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
            printError("wobble-run: \(e.message)")
            return 2
        } catch {
            printError("wobble-run: edit: \(error)")
            return 2
        }
        // A scene that is not there: say how to start one, open no window.
        if Posix.kind(options.session.scenePath) == nil {
            let scene = ScenePaths.shown(options.session.scenePath)
            printError("wobble-run: edit: '\(scene)' does not exist; start it from a photo: wobble-run new PHOTO \(scene)")
            return 1
        }
        let env = Environment.all
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
