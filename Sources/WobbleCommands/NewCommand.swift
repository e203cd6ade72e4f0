import Foundation
import WobbleCore
import WobbleEngine
import WobbleSystem

/// `wobble-run new PHOTO [SCENE.lua]`: writes a starter scene for a photo
/// (`StarterScene`), never over an existing file; then opens the studio on
/// it when there is a display and the studio is installed, else prints the
/// next two commands.
package struct NewCommand: Equatable, RunnableSubcommand {
    package var photo = ""
    /// Where the scene goes: the photo's name with `.lua`, in the current folder, unless given.
    package var scene = ""
    package var help = false

    package init() {}

    /// What the parser fills: the names, in order.
    struct Words { var names: [String] = []; var help = false }

    static let specs: [OptionSpec<Words>] = [
        OptionSpec(names: ["-h", "--help"], value: nil, help: "show this help") { o, _ in o.help = true },
    ]

    /// An option `new` does not know is most likely a photo whose name
    /// starts with `-`: the line says how to name it.
    static let rules = ParseRules(unknown: { _, word, _ in
        "unknown option '\(ScenePaths.shown(word))' (a photo whose name starts with '-': wobble-run new \(ScenePaths.shellWord(word)))"
    }, needsValue: { name, _ in "\(name) needs a value" }, flagValue: { _, word in
        "unknown option '\(ScenePaths.shown(word))' (a photo whose name starts with '-': wobble-run new \(ScenePaths.shellWord(word)))"
    }, helpFirst: true)

    /// `new`'s row of the table.
    package static let subcommand = Subcommand(
        name: "new",
        synopsis: ["new PHOTO [SCENE.lua]"],
        usageNote: "(SCENE.lua: the photo's name with .lua, in the current folder)",
        summary: "a starter scene for a photo",
        about: """
        Writes a starter scene for PHOTO: the image, one region in the middle a
        third of the picture's size, prepare(), a poke and untilStill(), with
        comments saying what to change. It never writes over a file (exit 1).
        Then it opens the studio on the scene when there is a display (as
        'wobble-run edit' does); without one it prints the next two commands.
        A name that starts with '-': wobble-run new ./-cat.png (or after '--')

        """,
        options: specs.map(OptionRow.init),
        operands: .photo,
        run: { NewCommand.main($0) })

    /// The words after `new` as a command; a `Failure` (exit 2) for bad usage.
    package static func parse(_ args: [String]) throws -> NewCommand {
        var w = Words()
        do {
            try OptionParser.parse(args, specs: specs, into: &w, rules: rules) { w, a in w.names.append(a) } rest: { w, words in
                // `--` ends the options: every word after it is a name (`new -- -x.png`).
                w.names += words
            }
        } catch let e as UsageError {
            throw Failure(e.message, command: "new", exitCode: 2)
        }
        var c = NewCommand()
        if w.help { c.help = true; return c }
        guard (1...2).contains(w.names.count) else { throw Failure(subcommand.usage, command: "new", exitCode: 2) }
        c.photo = w.names[0]
        c.scene = w.names.count == 2 ? w.names[1] : ScenePaths.baseName(c.photo) + ".lua"
        return c
    }

    /// Writes the scene and says what next; the exit status (the studio's, when it opens).
    func run() throws -> Int32 {
        let image: (width: Int, height: Int)
        do {
            image = try StarterScene.write(photo: photo, scene: scene)
        } catch let p as StarterScene.Problem {
            switch p {
            case .exists:
                throw Failure("'\(ScenePaths.shown(scene))' already exists: nothing written (name another: wobble-run new \(ScenePaths.shellWord(photo)) OTHER.lua)", command: "new", exitCode: 1)
            case .appeared:
                throw Failure("'\(ScenePaths.shown(scene))' already exists: nothing written", command: "new", exitCode: 1)
            case .failed(let line):
                throw Failure(line, command: "new", exitCode: 1)
            }
        }
        let sceneWord = ScenePaths.shellWord(scene)
        printError("wobble-run: wrote \(ScenePaths.shown(scene)) (\(image.width)x\(image.height): one region in the middle)")
        // The next steps first, always: a display that does not answer
        // ends the studio at once, and they are then still there.
        print("next:")
        print("  wobble-run edit \(sceneWord)    # a window: place the region, poke it, Ctrl+S saves")
        print("  wobble-run \(sceneWord)         # renders \(ScenePaths.shellWord(ScenePaths.baseName(scene) + ".gif"))")
        ThisProcess.flushOutput()
        let env = Environment.all
        let hasDisplay = !(env["DISPLAY"] ?? "").isEmpty || !(env["WAYLAND_DISPLAY"] ?? "").isEmpty
        if hasDisplay, EditCommand.findStudio() != nil {
            // (`./-o.lua`: a name the studio cannot take for an option)
            return EditCommand.run([scene.hasPrefix("-") ? "./" + scene : scene])
        }
        return 0
    }
}
