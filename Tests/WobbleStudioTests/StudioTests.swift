import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem

/// `wobble-run edit` under Xvfb, driven by xdotool, read by screenshots.
final class StudioTests: XCTestCase {
    var dir: URL!
    var display: VirtualDisplay!
    let id = String(UUID().uuidString.prefix(8)).lowercased()

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("wobble-studio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    func startDisplay() throws {
        display = try VirtualDisplay.get()
    }

    /// A `w`×`h` pattern: gradients and a checker, so any displacement shows.
    func writePattern(_ name: String, _ w: Int, _ h: Int) throws {
        try ImageIO.writePNG(Sandbox.pattern(width: w, height: h, checker: 4), to: dir.appendingPathComponent(name).path)
    }

    func write(_ name: String, _ text: String) throws {
        try text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
    }

    func render(_ args: [String]) throws {
        let r = try Tool.exec(Tool.executable.path, args, cwd: dir)
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// The window's image area now against the headless render of frame
    /// `k` (`extra`: e.g. --width/--height): ≥ 99.9 % of channels within 2.
    func assertShowsTheRenderedFrame(_ w: StudioWindowUnderTest, scene: String, frame k: Int, extra: [String] = [],
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        let shot = try w.screenshot()
        let out = "rendered-\(k)-\(UUID().uuidString.prefix(6))/"
        try render([scene, "--frames", "\(k)"] + extra + ["-o", out, "-q"])
        let expected = try ImageIO.load(path: dir.appendingPathComponent(out + "frame_\(String(format: "%05d", k)).png").path)
        let a = agreement(shot, expected)
        XCTAssertGreaterThanOrEqual(a.share, 0.999, "frame \(k): \(a.differing) channels differ by more than 2", file: file, line: line)
    }

    /// The display, a 200×150 pattern as img.png, `text` as the scene
    /// `<name>-<id>.lua`, and the studio on it with a frame presented.
    func openStudio(_ name: String, _ text: String) throws -> (StudioWindowUnderTest, String) {
        try startDisplay()
        try writePattern("img.png", 200, 150)
        let scene = "\(name)-\(id).lua"
        try write(scene, text)
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        try w.waitForLine("a frame", { $0.contains(" presented") })
        return (w, scene)
    }

    static func frameLine(_ k: Int, run: Int? = nil, paused: Bool) -> (String) -> Bool {
        { l in
            l.hasPrefix("studio: frame \(k) presented (run " + (run.map(String.init) ?? ""))
                && (!paused || l.contains("paused"))
        }
    }

    // MARK: -

    func testNoDisplayIsOneLineAndExitOne() throws {
        try write("s.lua", "image('img.png')\n")
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "DISPLAY")
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        let r = try Tool.exec(Tool.executable.path, ["edit", "s.lua"], cwd: dir, env: env)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: edit needs a display (DISPLAY or WAYLAND_DISPLAY is not set); render headless with 'wobble-run SCENE.lua'\n")
        // Usage errors are status 2 and one line, display or not.
        let none = try Tool.exec(Tool.executable.path, ["edit"], cwd: dir, env: env)
        XCTAssertEqual(none.status, 2)
        XCTAssertEqual(none.stderr, "wobble-run: edit: edit needs a scene: wobble-run edit SCENE.lua\n")
        let bogus = try Tool.exec(Tool.executable.path, ["edit", "s.lua", "--bogus"], cwd: dir, env: env)
        XCTAssertEqual(bogus.status, 2)
        XCTAssertEqual(bogus.stderr, "wobble-run: unknown option '--bogus'; see wobble-run edit --help\n")
        let help = try Tool.exec(Tool.executable.path, ["edit", "--help"], cwd: dir, env: env)
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(String(decoding: help.stdout, as: UTF8.self).hasPrefix("usage: wobble-run edit SCENE.lua"))
        // A scene file named `edit` is still a scene, as ./edit.
        try write("edit", "image('img.png')\n")
        try writePattern("img.png", 8, 8)
        let still = try Tool.exec(Tool.executable.path, ["./edit", "--check"], cwd: dir, env: env)
        XCTAssertEqual(still.status, 0, still.stderr)
    }

    func testTheImageAreaIsTheHeadlessFrame() throws {
        let (w, scene) = try openStudio("parity", """
        image("img.png")
        addSketch{x = 30, y = 20, w = 90, h = 80}
        addSketch{lt = {110, 60}, rt = {190, 50}, rb = {185, 140}, lb = {120, 130}}
        prepare()
        impulse(1, 1, 0.5)
        impulse(2, -0.3, 1, 0.8)
        wait(1)
        """)
        try w.key("h", "space", "Home")
        for k in [7, 16] {
            let before = w.lineCount
            try w.key(contentsOf: Array(repeating: "Right", count: k == 7 ? 7 : 9))
            try w.waitForLine(after: before, "frame \(k) paused", StudioTests.frameLine(k, paused: true))
            try assertShowsTheRenderedFrame(w, scene: scene, frame: k)
        }
        XCTAssertEqual(try w.quit(), 0)
    }

    /// A cutout scene (a disc with a soft 3 px rim, its mask a file): the
    /// window shows the headless frame, the object layer displaced over
    /// the plate, at rest and mid-swing (the page is held to the same
    /// frame by BrowserStudioTests.testACutoutFrameIsTheHeadlessFrame).
    func testACutoutFrameIsTheHeadlessFrame() throws {
        let (mw, mh) = (200, 150)
        var mask = RGBAImage(width: mw, height: mh, pixels: [UInt8](repeating: 255, count: mw * mh * 4))
        for y in 0..<mh {
            for x in 0..<mw {
                let d = ((Double(x) + 0.5 - 100) * (Double(x) + 0.5 - 100) + (Double(y) + 0.5 - 75) * (Double(y) + 0.5 - 75)).squareRoot()
                let v = UInt8((min(1, max(0, (40 - d) / 3)) * 255).rounded())
                for c in 0..<3 { mask.pixels[(y * mw + x) * 4 + c] = v }
            }
        }
        try ImageIO.writePNG(mask, to: dir.appendingPathComponent("disc-mask.png").path)
        let (w, scene) = try openStudio("cutout", """
        image("img.png")
        local disc = addSketch{x = 50, y = 25, w = 100, h = 100, cutout = "disc-mask.png"}
        prepare()
        impulse(disc, 1, 0.4)
        wait(1)
        """)
        // Each frame's line is awaited after the keys that show it (counted
        // before they are sent: Home's frame 0 can come at once).
        var before = w.lineCount
        try w.key("h", "space", "Home")
        try w.waitForLine(after: before, "frame 0 paused", StudioTests.frameLine(0, paused: true))
        try assertShowsTheRenderedFrame(w, scene: scene, frame: 0)
        before = w.lineCount
        try w.key(contentsOf: Array(repeating: "Right", count: 6))
        try w.waitForLine(after: before, "frame 6 paused", StudioTests.frameLine(6, paused: true))
        try assertShowsTheRenderedFrame(w, scene: scene, frame: 6)
        XCTAssertEqual(try w.quit(), 0)
    }

    func testASceneThatFailsOnOpenIsWatchedUntilItRuns() throws {
        try startDisplay()
        let scene = "late-\(id).lua"
        try write(scene, """
        image("img.png")
        addSketch{x = 30, y = 20, w = 90, h = 80}
        prepare()
        impulse(1, 1, 0.5)
        wait(1)
        """)
        // No image yet: the error is shown and the window stays open.
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        try w.waitForLine("the error", { $0.contains("img.png") })
        try w.waitForLine("a frame", { $0.contains(" presented (run 0") })
        XCTAssertTrue(w.process.isRunning)
        // The image arrives, of another size than the placeholder: the
        // window resizes and shows the headless frame.
        let before = w.lineCount
        try writePattern("img.png", 200, 150)
        try w.waitForLine(after: before, timeout: 5, "run 1", { $0.contains(" presented (run 1") })
        try w.key("h", "space", "Home", "Right", "Right", "Right")
        try w.waitForLine(after: before, "frame 3 paused", StudioTests.frameLine(3, paused: true))
        w.updateImageArea()
        XCTAssertEqual(w.imageArea.w, 200)
        try render([scene, "--frames", "3", "-o", "out/", "-q"])
        let expected = try ImageIO.load(path: dir.appendingPathComponent("out/frame_00003.png").path)
        // Poll: the window system takes the new size a moment later.
        var a = (share: 0.0, differing: 0)
        let deadline = Date().addingTimeInterval(3)
        repeat {
            a = agreement(try w.screenshot(), expected)
            if a.share >= 0.999 { break }
            usleep(100_000)
        } while Date() < deadline
        XCTAssertGreaterThanOrEqual(a.share, 0.999, "\(a.differing) channels differ by more than 2")
        XCTAssertEqual(try w.quit(), 0)
    }

    func testAPictureLargerThanTheScreenIsScaledDownAsARenderAtThatSize() throws {
        display = try VirtualDisplay.get(width: 640, height: 480)   // a small screen
        try writePattern("img.png", 900, 600)
        let scene = "big-\(id).lua"
        try write(scene, """
        image("img.png")
        addSketch{x = 150, y = 110, w = 340, h = 260}
        prepare()
        impulse(1, 1, 0.4)
        wait(1)
        """)
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        XCTAssertLessThan(w.imageArea.w, 900)
        XCTAssertEqual(Double(w.imageArea.w) / Double(w.imageArea.h), 1.5, accuracy: 0.01)
        try w.waitForLine("a frame", { $0.contains(" presented") })
        let before = w.lineCount
        try w.key("h", "space", "Home", "Right", "Right", "Right", "Right")
        try w.waitForLine(after: before, "frame 4 paused", StudioTests.frameLine(4, paused: true))
        try assertShowsTheRenderedFrame(w, scene: scene, frame: 4, extra: ["--width", "\(w.imageArea.w)", "--height", "\(w.imageArea.h)"])
        XCTAssertEqual(try w.quit(), 0)
    }

    /// A reload whose scene takes long (here: until the test opens a gate)
    /// runs off the window thread: the last good clip goes on playing, the
    /// window answers keys and pokes meanwhile, the new run is swapped in
    /// when it ends (run again with the poke made meanwhile), and quitting
    /// while a run is in flight exits at once.
    func testASlowReloadKeepsTheWindowPlaying() throws {
        try startDisplay()
        try writePattern("img.png", 200, 150)
        let scene = "slow-\(id).lua"
        let log = dir.appendingPathComponent("runs.log").path, gate = dir.appendingPathComponent("gate").path
        func text(gated: Bool, seconds: Double) -> String {
            (gated ? """
            local f = io.open("\(log)", "a") f:write("begin\\n") f:close()
            while true do local g = io.open("\(gate)") if g then g:close() break end end

            """ : "") + """
            image("img.png")
            addSketch{x = 40, y = 30, w = 100, h = 80}
            prepare()
            wait(\(seconds))
            """
        }
        func begun() -> Int {
            ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        func wait(_ what: String, _ done: () -> Bool) throws {
            let deadline = Date().addingTimeInterval(10)
            while !done() {
                guard Date() < deadline else { throw NSError(domain: "studio", code: 1, userInfo: [NSLocalizedDescriptionKey: "no \(what)"]) }
                usleep(10_000)
            }
        }
        try write(scene, text(gated: false, seconds: 1))
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display, extra: ["--allow-io"])
        try w.waitForLine("a frame", { $0.contains(" presented (run 1") })
        try write(scene, text(gated: true, seconds: 1.5))
        try wait("run in the scene") { begun() >= 1 }
        // The scene is running (and will until the gate opens): the window
        // goes on presenting frames of run 1.
        func presented() -> Int { w.linesSnapshot().filter { $0.contains(" presented (run 1") }.count }
        let n0 = presented()
        usleep(800_000)
        XCTAssertGreaterThanOrEqual(presented() - n0, 5, "the window stopped presenting while the scene ran")
        // It answers keys and pokes.
        var before = w.lineCount
        try w.key("space")
        try w.waitForLine(after: before, timeout: 3, "paused", { $0.contains(" presented (run 1, paused)") })
        let (ax, ay) = (w.imageArea.x, w.imageArea.y)
        try w.drag(from: (ax + 60, ay + 50), to: (ax + 75, ay + 60))
        try w.waitForLine(after: before, timeout: 3, "the touch", { $0.hasPrefix("studio: performed touch(") })
        XCTAssertFalse(w.linesSnapshot().contains { $0.contains("reloaded (run 2)") })
        before = w.lineCount
        _ = FileManager.default.createFile(atPath: gate, contents: Data())
        // The run made without the poke is shown, then run again with it.
        try w.waitForLine(after: before, "superseded", { $0.contains("a run was superseded") })
        try w.waitForLine(after: before, "run 3", { $0 == "studio: reloaded (run 3)" })
        try w.waitForLine(after: before, "run 3 presented", { $0.contains(" presented (run 3, paused)") })
        XCTAssertEqual(begun(), 2)
        XCTAssertFalse(w.linesSnapshot().contains { $0.contains("run 4") })
        // Quitting while a run is in flight: at once, status 0.
        try FileManager.default.removeItem(atPath: gate)
        try write(scene, text(gated: true, seconds: 1.2))
        try wait("the third run") { begun() >= 3 }
        let t0 = Date()
        XCTAssertEqual(try w.quit(), 0)
        XCTAssertLessThan(Date().timeIntervalSince(t0), 3)
        XCTAssertTrue(w.linesSnapshot().contains("studio: the run in flight was abandoned"))
    }

    /// `wobble-run edit $'d\xfe/s.lua'`: a scene in a folder whose name is
    /// not UTF-8 opens, plays and reloads as the headless render runs it
    /// (it was "no such file"), and messages show the byte as `\xFE`.
    func testASceneInAFolderThatIsNotUTF8Opens() throws {
        try startDisplay()
        let folder = dir.path + "/" + PathBytes.string([0x64, 0xFE])
        try Posix.mkdir(AT_FDCWD, folder, 0o755, shown: folder)
        defer {
            if let fd = try? Posix.open(dir.path, O_RDONLY | O_DIRECTORY) {
                Posix.removeTree(fd, PathBytes.string([0x64, 0xFE]))
                close(fd)
            }
        }
        try writePattern("img.png", 120, 90)
        try ImageIO.writePNG(try ImageIO.load(path: dir.appendingPathComponent("img.png").path), to: folder + "/img.png")
        let name = "bytes-\(id).lua"
        func put(_ text: String) throws {
            let fd = try Posix.open(folder + "/" + name, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            defer { close(fd) }
            try Posix.write(fd, Array(text.utf8), shown: name)
        }
        try put("image('img.png')\naddSketch{x = 20, y = 20, w = 60, h = 40}\nprepare()\nwait(1)\n")
        let w = try StudioWindowUnderTest(scene: #"d\376/"# + name, cwd: dir, display: display, printf: true, title: name)
        try w.waitForLine("run 1 presented", { $0.contains(" presented (run 1") })
        // Hot reload: an error names the scene's folder as `d\xFE`, then a good run.
        var before = w.lineCount
        try put("image('img.png')\naddSketch{x = 20, y = 20, w = 60, h = 40}\nprepare()\nwait(1)\nerror('broken on purpose')\n")
        let line = try w.waitForLine(after: before, timeout: 5, "the error", { $0.contains("broken on purpose") })
        XCTAssertEqual(line, #"d\xFE/"# + name + ":5: broken on purpose")
        before = w.lineCount
        try put("image('img.png')\naddSketch{x = 30, y = 20, w = 60, h = 40}\nprepare()\nwait(1)\n")
        try w.waitForLine(after: before, timeout: 5, "run 2 presented", { $0.contains(" presented (run 2") })
        XCTAssertFalse(w.linesSnapshot().contains { $0.unicodeScalars.contains { $0.value >= 0x10FF80 } },
                       "a PathBytes escape reached stderr: \(w.linesSnapshot().suffix(5))")
        XCTAssertEqual(try w.quit(), 0)
    }
}

extension StudioWindowUnderTest {
    func key(contentsOf keys: [String]) throws {
        try display.x("xdotool", ["key", "--delay", "30"] + keys)
    }
}
