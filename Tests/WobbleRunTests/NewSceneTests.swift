import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// `wobble-run new PHOTO [SCENE.lua]`: a starter scene that runs and
/// moves, never written over a file; `edit` on a missing scene points to it.
final class NewSceneTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
    }

    /// Without a display: the tool itself, no studio window.
    private func run(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DISPLAY")
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        let r = try Tool.exec(Tool.executable.path, args, cwd: box.url, env: env)
        return (r.status, String(decoding: r.stdout, as: UTF8.self), r.stderr)
    }

    func testNewWritesAStarterSceneThatRunsAndMovesAndNeverOverwrites() throws {
        try FileManager.default.createDirectory(at: box.url.appendingPathComponent("photos"), withIntermediateDirectories: true)
        try box.writeImage("photos/rocket.png", Sandbox.pattern(width: 90, height: 120))
        let r = try run(["new", "photos/rocket.png"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stderr, "wobble-run: wrote rocket.lua (90x120: one region in the middle)\n")
        XCTAssertEqual(r.stdout, """
        next:
          wobble-run edit rocket.lua    # a window: place the region, poke it, Ctrl+S saves
          wobble-run rocket.lua         # renders rocket.gif

        """)
        let text = try String(contentsOfFile: box.path("rocket.lua"), encoding: .utf8)
        XCTAssertTrue(text.contains("image(\"\(box.url.appendingPathComponent("photos/rocket.png").path)\")"), text)
        XCTAssertTrue(text.contains("local region = addSketch{x = 30, y = 40, w = 30, h = 40}"), text)
        XCTAssertTrue(text.contains("\nprepare()\n"))
        XCTAssertTrue(text.contains("\ntouch(45, 60, 50, 60)\n"), text)
        XCTAssertTrue(text.contains("\nuntilStill()\n"))
        // It runs, and something moves.
        let render = try Tool.run(["rocket.lua", "--backend", "cpu", "-q", "--frames", "0-5", "-o", "f/"], cwd: box.url)
        XCTAssertEqual(render.status, 0, render.stderr)
        let frames = try (0...5).map { try ImageIO.load(path: box.path(String(format: "f/frame_%05d.png", $0))) }
        XCTAssertTrue(frames.dropFirst().contains { $0 != frames[0] }, "the region moves")
        // A second `new` refuses, the file untouched.
        try box.write("rocket.lua", "-- mine\n")
        let again = try run(["new", "photos/rocket.png"])
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(again.stderr, "wobble-run: new: 'rocket.lua' already exists: nothing written (name another: wobble-run new photos/rocket.png OTHER.lua)\n")
        XCTAssertEqual(try String(contentsOfFile: box.path("rocket.lua"), encoding: .utf8), "-- mine\n")
        // A name of one's own, beside the photo: the image by its name.
        let named = try run(["new", "photos/rocket.png", "photos/launch.lua"])
        XCTAssertEqual(named.status, 0, named.stderr)
        XCTAssertTrue(try String(contentsOfFile: box.path("photos/launch.lua"), encoding: .utf8).contains("image(\"rocket.png\")"))
    }

    func testNewRefusesWhatItCannotReadWithOneLine() throws {
        let missing = try run(["new", "nothing.jpg"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.stderr.filter { $0 == "\n" }.count, 1, missing.stderr)
        XCTAssertTrue(missing.stderr.hasPrefix("wobble-run: new: "), missing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("nothing.lua")))
        let usage = try run(["new"])
        XCTAssertEqual(usage.status, 2)
        XCTAssertEqual(usage.stderr, "wobble-run: new: usage: wobble-run new PHOTO [SCENE.lua]   (SCENE.lua: the photo's name with .lua, in the current folder)\n")
        let help = try run(["new", "--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.hasPrefix("usage: wobble-run new PHOTO [SCENE.lua]"))
        XCTAssertTrue(help.stdout.contains("A name that starts with '-': wobble-run new ./-cat.png (or after '--')\n"), help.stdout)
        // A photo named like an option: the line says how to name it.
        let dashed = try run(["new", "-cat.png", "y.lua"])
        XCTAssertEqual(dashed.status, 2)
        XCTAssertEqual(dashed.stderr, "wobble-run: new: unknown option '-cat.png' (a photo whose name starts with '-': wobble-run new ./-cat.png)\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("y.lua")))
        XCTAssertTrue(try run(["--help"]).stdout.contains("wobble-run new PHOTO [SCENE.lua]"))
    }

    /// `edit` on a scene that is not there says how to start one (no window).
    func testEditOnAMissingSceneOffersNew() throws {
        let r = try run(["edit", "fresh.lua"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: edit: 'fresh.lua' does not exist; start it from a photo: wobble-run new PHOTO fresh.lua\n")
    }

    func testCompletionsAndManPageKnowNew() throws {
        let bash = try Tool.run(["--generate", "bash"], cwd: box.url)
        XCTAssertTrue(bash.stdout.contains("$'edit\\nnew\\ncutout\\nserve\\npack'"), bash.stdout)
        let man = try Tool.run(["--generate", "man"], cwd: box.url)
        XCTAssertTrue(man.stdout.contains(".B wobble\\-run new"))
        let fish = try Tool.run(["--generate", "fish"], cwd: box.url)
        XCTAssertTrue(fish.stdout.contains("-a new -d 'a starter scene for a photo'"))
    }
}
