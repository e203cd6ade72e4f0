import Foundation
import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// `wobble-run new PHOTO [SCENE.lua]`: writes a starter scene for a photo
/// (the image, one region in the middle a third of the picture's size,
/// `prepare()`, a poke, `untilStill()`, with comments saying what to
/// change), never over an existing file; then opens the studio on it when
/// there is a display and the studio is installed, else prints the next
/// two commands.
enum NewScene {
    static let usage = "usage: wobble-run new PHOTO [SCENE.lua]   (SCENE.lua: the photo's name with .lua, in the current folder)"

    static let helpText = """
    \(usage)

    Writes a starter scene for PHOTO: the image, one region in the middle a
    third of the picture's size, prepare(), a poke and untilStill(), with
    comments saying what to change. It never writes over a file (exit 1).
    Then it opens the studio on the scene when there is a display (as
    'wobble-run edit' does); without one it prints the next two commands.
    A name that starts with '-': wobble-run new ./-cat.png (or after '--')

    """

    /// Runs `new` with the arguments after it; the exit status.
    static func run(_ args: [String]) -> Int32 {
        // `--` ends the options: every word after it is a name (`new -- -x.png`).
        let end = args.firstIndex(of: "--")
        let before = end.map { Array(args[..<$0]) } ?? args
        if before.contains("--help") || before.contains("-h") {
            print(helpText, terminator: "")
            return 0
        }
        let names = before + (end.map { Array(args[($0 + 1)...]) } ?? [])
        if let option = before.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            printError("wobble-run: new: unknown option '\(ScenePaths.shown(option))' (a photo whose name starts with '-': wobble-run new \(ScenePaths.shellWord(option)))")
            return 2
        }
        guard (1...2).contains(names.count) else {
            printError("wobble-run: new: \(usage)")
            return 2
        }
        let photo = names[0]
        let scene = names.count == 2 ? names[1] : ScenePaths.baseName(photo) + ".lua"
        let sceneWord = ScenePaths.shellWord(scene)
        if Posix.kind(scene, follow: false) != nil {
            printError("wobble-run: new: '\(ScenePaths.shown(scene))' already exists: nothing written (name another: wobble-run new \(ScenePaths.shellWord(photo)) OTHER.lua)")
            return 1
        }
        // The policy the scene's image() will apply (a FIFO or a device
        // would block the read, or never end).
        if case .failure(let refusal) = PathPolicy(folder: "", allowIO: false).data(photo) {
            printError("wobble-run: new: photo '\(ScenePaths.shown(photo))' \(refusal.message)")
            return 1
        }
        let image: (width: Int, height: Int)
        do {
            image = try CommandFiles.imageSize(photo)
        } catch let e as MediaError {
            printError("wobble-run: new: \(e.message)")
            return 1
        } catch {
            printError("wobble-run: new: cannot read '\(ScenePaths.shown(photo))': \(error)")
            return 1
        }
        let text = starter(photo: imageReference(photo: photo, scene: scene), width: image.width, height: image.height,
                           scene: ScenePaths.shellWord(ScenePaths.name(scene)), photoName: ScenePaths.name(photo))
        do {
            // The one guarded writer: a temporary file beside the scene,
            // renamed only where nothing is (`.fresh`): a file or link made
            // meanwhile is not written over or through, and a failed write
            // leaves no half scene.
            try AtomicFile.write(Array(text.utf8), to: scene, name: .fresh)
        } catch is MediaError where Posix.kind(scene, follow: false) != nil {
            printError("wobble-run: new: '\(ScenePaths.shown(scene))' already exists: nothing written")
            return 1
        } catch let e as MediaError {
            printError("wobble-run: new: cannot write '\(ScenePaths.shown(scene))': \(e.message)")
            return 1
        } catch {
            printError("wobble-run: new: cannot write '\(ScenePaths.shown(scene))': \(error)")
            return 1
        }
        printError("wobble-run: wrote \(ScenePaths.shown(scene)) (\(image.width)x\(image.height): one region in the middle)")
        // The next steps first, always: a display that does not answer
        // ends the studio at once, and they are then still there.
        print("next:")
        print("  wobble-run edit \(sceneWord)    # a window: place the region, poke it, Ctrl+S saves")
        print("  wobble-run \(sceneWord)         # renders \(ScenePaths.shellWord(ScenePaths.baseName(scene) + ".gif"))")
        ThisProcess.flushOutput()
        let env = Environment.all
        let hasDisplay = !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty
        if hasDisplay, Edit.findStudio() != nil {
            // (`./-o.lua`: a name the studio cannot take for an option)
            return Edit.run([scene.hasPrefix("-") ? "./" + scene : scene])
        }
        return 0
    }

    /// How the scene names the photo: its name when both are in one
    /// folder, else its absolute path.
    static func imageReference(photo: String, scene: String) -> String {
        let p = ScenePaths.absolute(photo), s = ScenePaths.absolute(scene)
        return ScenePaths.folder(p) == ScenePaths.folder(s) ? ScenePaths.name(p) : p
    }

    /// The starter scene's text.
    static func starter(photo: String, width w: Int, height h: Int, scene: String, photoName: String) -> String {
        let rw = max(1, w / 3), rh = max(1, h / 3)
        let rx = (w - rw) / 2, ry = (h - rh) / 2
        let cx = rx + rw / 2, cy = ry + rh / 2
        let push = max(1, rw / 6)
        return """
        -- A starter scene made by `wobble-run new` for \(PathBytes.display(photoName, controls: true)).
        -- Try it:  wobble-run edit \(scene)   (a window: drag the handles, poke, Ctrl+S saves)
        --          wobble-run \(scene)        (renders the clip)

        image(\(LuaLiteral.string(photo)))   -- \(w)x\(h) pixels

        -- One soft region in the middle, a third of the picture's size: move
        -- and size it over what should wobble (x, y: its top-left corner; w, h:
        -- its size, in image pixels), or drag its handles in the studio.
        -- Keys to add: strength = 0.15 (how far it swings), duration = 1.5
        -- (seconds), motion = "spring". Add more regions with more addSketch lines.
        local region = addSketch{x = \(rx), y = \(ry), w = \(rw), h = \(rh)}

        -- From here on the regions are live.
        prepare()

        -- A poke: a drag from the region's middle \(push) pixels to the right
        -- (x0, y0, x1, y1). Change the numbers for another direction, or push
        -- the region itself: impulse(region, 0, 1) pushes it down.
        touch(\(cx), \(cy), \(cx + push), \(cy))

        -- The clip ends once everything rests.
        untilStill()

        """
    }
}
