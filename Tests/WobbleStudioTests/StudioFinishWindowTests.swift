import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleTestSupport

/// Finishing a sticker in a real window under Xvfb, with the built
/// executables: `L` + `Ctrl+S`; `R`, a poke, `R`, `B`, `Ctrl+S`; a slow
/// scene's window; quitting during an export (in-process: StudioFinishTests).
final class StudioFinishWindowTests: XCTestCase {
    var dir: URL!
    var display: VirtualDisplay!
    let id = String(UUID().uuidString.prefix(8)).lowercased()

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("wobble-studio-finish-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        display = try VirtualDisplay.get()
        let pattern = RGBAImage(width: 240, height: 160, pixels: (0..<(240 * 160 * 4)).map { UInt8(truncatingIfNeeded: ($0 * 7 / 3) ^ ($0 / 960)) })
        try ImageIO.writePNG(pattern, to: dir.appendingPathComponent("img.png").path)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func read(_ name: String) throws -> String { try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8) }

    func json(_ scene: String) throws -> [String: Any] {
        let r = try Tool.exec(Tool.executable.path, [scene, "--check", "--json"], cwd: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: r.stdout) as? [String: Any])
    }

    static let starter = """
    image("img.png")
    fps(10)
    local region = addSketch{x = 40, y = 30, w = 160, h = 100, duration = 0.8}
    prepare()
    touch(120, 80, 150, 80)
    untilStill()

    """

    func testLThenCtrlSWritesALoopingScene() throws {
        let scene = "loop-\(id).lua"
        try StudioFinishWindowTests.starter.write(to: dir.appendingPathComponent(scene), atomically: true, encoding: .utf8)
        XCTAssertEqual(try json(scene)["loop"] as? Bool, false)
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        try w.waitForLine("a frame", { $0.contains(" presented") })
        var before = w.lineCount
        try w.key("l")
        try w.waitForLine(after: before, "loop on", { $0 == "studio: loop on" })
        before = w.lineCount
        try w.key("ctrl+s")
        try w.waitForLine(after: before, "saved", { $0.hasPrefix("studio: saved ") && $0.contains("loop() written") })
        XCTAssertEqual(try w.quit(), 0)
        XCTAssertEqual(try json(scene)["loop"] as? Bool, true)
        XCTAssertTrue(try read(scene).contains("loop()\nprepare()\n"))
    }

    /// `R`, a poke, `R`, `B`, `Ctrl+S`: the scene itself now moves where the
    /// poke was (a render of the saved scene, headless).
    func testRecordPokeBakeSaveAndTheSceneMovesThere() throws {
        let scene = "bake-\(id).lua"
        let text = "image(\"img.png\")\nfps(10)\nlocal region = addSketch{x = 40, y = 30, w = 160, h = 100, duration = 0.8}\nprepare()\nwait(0.5)\n"
        try text.write(to: dir.appendingPathComponent(scene), atomically: true, encoding: .utf8)
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        try w.waitForLine("a frame", { $0.contains(" presented") })
        let (ax, ay) = (w.imageArea.x, w.imageArea.y)
        var before = w.lineCount
        try w.key("r")
        try w.waitForLine(after: before, "recording", { $0.hasPrefix("studio: recording from") })
        usleep(300_000)
        before = w.lineCount
        try w.drag(from: (ax + 110, ay + 70), to: (ax + 140, ay + 75))
        try w.waitForLine(after: before, "the poke", { $0.hasPrefix("studio: performed touch") })
        before = w.lineCount
        try w.key("r")
        try w.waitForLine(after: before, "the take", { $0.hasPrefix("studio: wrote ") })
        before = w.lineCount
        try w.key("b")
        try w.waitForLine(after: before, "baked", { $0 == "studio: baked 1 event into the clip" })
        before = w.lineCount
        try w.key("ctrl+s")
        try w.waitForLine(after: before, "saved", { $0.hasPrefix("studio: saved ") && $0.contains("1 baked event") })
        XCTAssertEqual(try w.quit(), 0)
        let saved = try read(scene)
        XCTAssertTrue(saved.contains("perform{\n  {"), saved)
        // The saved scene's own render moves inside the region after the poke.
        let r = try Tool.exec(Tool.executable.path, [scene, "-q", "-o", "f/"], cwd: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
        let frames = try FileManager.default.contentsOfDirectory(atPath: dir.appendingPathComponent("f").path).sorted()
        XCTAssertGreaterThan(frames.count, 5)
        let first = try ImageIO.load(path: dir.appendingPathComponent("f/" + frames[0]).path)
        let moved = try frames.dropFirst().contains { name in
            try ImageIO.load(path: dir.appendingPathComponent("f/" + name).path) != first
        }
        XCTAssertTrue(moved, "the baked poke moves the region")
    }

    /// A scene that runs for seconds opens its window within 2 s, and Esc
    /// quits it before its run ends.
    func testASlowSceneOpensItsWindowAtOnce() throws {
        let scene = "slow-\(id).lua"
        let text = "image(\"img.png\")\nlocal n = 0\nfor i = 1, 4e8 do n = n + i end\naddSketch{x = 40, y = 30, w = 160, h = 100}\nprepare()\nwait(0.5)\n"
        try text.write(to: dir.appendingPathComponent(scene), atomically: true, encoding: .utf8)
        let started = Date()
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        let opened = Date().timeIntervalSince(started)
        let slowdown = max(1, Double(ProcessInfo.processInfo.environment["WOBBLE_TEST_SLOWDOWN"] ?? "") ?? 1)
        XCTAssertLessThan(opened, 2 * slowdown, "the window opened \(opened) s after the start")
        XCTAssertTrue(w.linesSnapshot().contains("studio: the window opens while the scene's first run goes on"))
        try w.waitForLine("a frame", { $0.contains(" presented") })
        XCTAssertEqual(try w.quit(), 0)
        XCTAssertLessThan(Date().timeIntervalSince(started), 8 * slowdown, "Esc did not wait for the run")
    }

    /// Quitting while `E` exports: the export stops cleanly, nothing is
    /// left beside the scene.
    func testQuittingDuringAnExportLeavesNoFile() throws {
        let scene = "export-\(id).lua"
        let text = """
        image("img.png")
        fps(30)
        local r = addSketch{x = 10, y = 10, w = 220, h = 140, duration = 30, motion = "spring", damping = 0.01}
        prepare()
        impulse(r, 1, 0.5)
        wait(30)

        """
        try text.write(to: dir.appendingPathComponent(scene), atomically: true, encoding: .utf8)
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        try w.waitForLine("a frame", { $0.contains(" presented") })
        try w.key("e")
        // Until the export writes beside the scene.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
            if names.contains(where: { $0.hasPrefix(".") }) { break }
            usleep(20_000)
        }
        XCTAssertEqual(try w.quit(), 0)
        XCTAssertTrue(w.linesSnapshot().contains { $0.hasPrefix("studio: the export in flight was stopped") })
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertEqual(left, ["img.png", scene].sorted(), "nothing left beside the scene")
    }
}
