import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// What happens to the studio's window from outside: a display that does
/// not answer, a window resized, destroyed or cut off by someone else.
extension StudioTests {
    /// Waits up to `seconds` for the studio to exit; its status (128 + N on a signal).
    func exitStatus(_ w: StudioWindowUnderTest, within seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        while w.process.isRunning && Date() < deadline { usleep(20_000) }
        guard !w.process.isRunning else { return nil }
        return w.process.terminationReason == .exit ? w.process.terminationStatus : 128 + w.process.terminationStatus
    }

    func testADisplayThatDoesNotAnswerIsOneLineAndExitOne() throws {
        try writePattern("img.png", 8, 8)
        try write("s.lua", "image('img.png')\n")
        var n = 250 + Int(getpid() % 50)
        while FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") || FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") { n += 1 }
        var env = ProcessInfo.processInfo.environment
        env["DISPLAY"] = ":\(n)"
        env.removeValue(forKey: "WAYLAND_DISPLAY")
        env.removeValue(forKey: "SDL_VIDEODRIVER")
        let started = Date()
        let r = try Tool.exec(Tool.executable.path, ["edit", "s.lua", "--quit-after", "20"], cwd: dir, env: env)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: edit: cannot open the display (DISPLAY ':\(n)'): x11 not available\n")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "it must not play on with no window")
    }

    func testAWindowResizedBySomeoneElseShowsTheFrameAtTheSizeShown() throws {
        let (w, scene) = try openStudio("resized", """
        image("img.png")
        addSketch{x = 30, y = 20, w = 90, h = 80}
        prepare()
        impulse(1, 1, 0.5)
        wait(1)
        """)
        try w.key("h", "space", "Home", "Right", "Right", "Right")
        try w.waitForLine("frame 3", StudioTests.frameLine(3, paused: true))
        // Smaller than the picture: fitted into 150 x (201 - the chrome, 88).
        let before = w.lineCount
        try display.x("xdotool", ["windowsize", w.windowID, "150", "201"])
        try w.waitForLine(after: before, "the new layout", { $0.hasPrefix("studio: window 150x201") })
        try w.waitForLine(after: before, "frame 3 again", StudioTests.frameLine(3, paused: true))
        w.updateImageArea()
        XCTAssertEqual(w.imageArea.w, 150)
        XCTAssertEqual(w.imageArea.h, 112)
        usleep(300_000)
        try assertShowsTheRenderedFrame(w, scene: scene, frame: 3, extra: ["--width", "150", "--height", "112"])
        // The mouse follows: a click at the new timeline's right end scrubs to the end.
        let scrubbed = w.lineCount
        try display.x("xdotool", ["mousemove", "--window", w.windowID, "141", "\(112 + 10)", "click", "1"])
        try w.waitForLine(after: scrubbed, "the last frame", StudioTests.frameLine(29, paused: true))
        XCTAssertEqual(try w.quit(), 0)
    }

    /// A window made larger than GL draws (30000×30000): one line, nothing
    /// drawn meanwhile (it was `GL error 0x501` every frame, then "the
    /// connection to the display was lost" and status 1 with the server
    /// still up); back at 640×480 it shows the frame again, and SIGTERM
    /// still ends it with 143.
    func testAWindowLargerThanGLDrawsIsSkippedNotALostDisplay() throws {
        let (w, scene) = try openStudio("huge", """
        image("img.png")
        addSketch{x = 30, y = 20, w = 90, h = 80}
        prepare()
        impulse(1, 1, 0.5)
        wait(1)
        """)
        try w.key("h", "space", "Home", "Right", "Right", "Right")
        try w.waitForLine("frame 3", StudioTests.frameLine(3, paused: true))
        let before = w.lineCount
        try display.x("xdotool", ["windowsize", w.windowID, "30000", "30000"])
        try w.waitForLine(after: before, "the one line", { $0.hasPrefix("wobble-run: edit: the window is ") && $0.hasSuffix(": not drawn until it is smaller") })
        usleep(500_000)
        let back = w.lineCount
        try display.x("xdotool", ["windowsize", w.windowID, "640", "480"])
        try w.waitForLine(after: back, "the new layout", { $0.hasPrefix("studio: window 640x480") })
        try w.waitForLine(after: back, "frame 3 again", StudioTests.frameLine(3, paused: true))
        usleep(500_000)
        w.updateImageArea()
        try assertShowsTheRenderedFrame(w, scene: scene, frame: 3)
        let lines = w.linesSnapshot()
        XCTAssertEqual(lines.filter { $0.hasPrefix("wobble-run: edit: the window is ") }.count, 1, lines.suffix(6).joined(separator: " | "))
        XCTAssertFalse(lines.contains { $0.contains("GL error") || $0.contains("connection to the display was lost") },
                       lines.suffix(6).joined(separator: " | "))
        kill(w.process.processIdentifier, SIGTERM)
        XCTAssertEqual(exitStatus(w, within: 10), 143)
    }

    func testALostDisplayStillWritesTheTakeAndADestroyedWindowQuits() throws {
        try startDisplay()
        try writePattern("img.png", 200, 150)
        let scene = "lost-\(id).lua"
        try write(scene, """
        image("img.png")
        addSketch{x = 40, y = 30, w = 100, h = 80}
        prepare()
        wait(0.5)
        """)
        // The X connection killed while recording: one line, status 1, the take written.
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        try w.waitForLine("a frame", { $0.contains(" presented") })
        try w.key("r")
        try w.waitForLine("recording", { $0.hasPrefix("studio: recording from") })
        try w.drag(from: (w.imageArea.x + 90, w.imageArea.y + 70), to: (w.imageArea.x + 60, w.imageArea.y + 90))
        try w.waitForLine("the touch", { $0.hasPrefix("studio: performed touch(") })
        try display.x("xdotool", ["windowkill", w.windowID])
        guard let status = exitStatus(w, within: 10) else { return XCTFail("the studio went on after its display connection was killed") }
        XCTAssertEqual(status, 1)
        usleep(200_000)   // the last lines of the pipe
        let lines = w.linesSnapshot()
        XCTAssertTrue(lines.contains("wobble-run: edit: the connection to the display was lost"), lines.suffix(4).joined(separator: " | "))
        XCTAssertTrue(lines.contains("studio: wrote lost-\(id)-take-1.lua"), lines.suffix(4).joined(separator: " | "))
        let take = try String(contentsOf: dir.appendingPathComponent("lost-\(id)-take-1.lua"), encoding: .utf8)
        XCTAssertTrue(take.contains("\ntouch("), take)
        // The window destroyed by another program: the studio quits as if
        // closed (status 0), writing the take being recorded.
        let v = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        try v.waitForLine("a frame", { $0.contains(" presented") })
        try v.key("r")
        try v.waitForLine("recording", { $0.hasPrefix("studio: recording from") })
        try v.key("shift+Right")
        try v.waitForLine("the shake", { $0.hasPrefix("studio: performed shake(") })
        try display.x("xdotool", ["windowclose", v.windowID])
        guard let closed = exitStatus(v, within: 10) else { return XCTFail("the studio went on with its window destroyed") }
        XCTAssertEqual(closed, 0)
        usleep(200_000)
        let after = v.linesSnapshot()
        XCTAssertTrue(after.contains("studio: the window was destroyed by another program; quitting"), after.suffix(4).joined(separator: " | "))
        XCTAssertTrue(after.contains("studio: wrote lost-\(id)-take-2.lua"), after.suffix(4).joined(separator: " | "))
    }

    /// Sends the window manager's close request (`WM_DELETE_WINDOW`, what a
    /// click on the close button sends) to window `id`, through Xlib from
    /// Python (xdotool 3.2016 has no such command).
    func sendCloseRequest(_ id: String) throws {
        let env = display.environment
        guard let python = (env["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .map({ "\($0)/python3" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw XCTSkip("python3 is not installed: the close request is sent with it")
        }
        let script = """
        import ctypes, sys
        from ctypes import c_int, c_long, c_ulong, c_void_p, c_char_p
        x = ctypes.CDLL("libX11.so.6")
        x.XOpenDisplay.restype = c_void_p; x.XOpenDisplay.argtypes = [c_char_p]
        x.XInternAtom.restype = c_ulong; x.XInternAtom.argtypes = [c_void_p, c_char_p, c_int]
        x.XSendEvent.argtypes = [c_void_p, c_ulong, c_int, c_long, c_void_p]
        x.XFlush.argtypes = [c_void_p]; x.XCloseDisplay.argtypes = [c_void_p]
        class ClientMessage(ctypes.Structure):
            _fields_ = [("type", c_int), ("serial", c_ulong), ("send_event", c_int), ("display", c_void_p),
                        ("window", c_ulong), ("message_type", c_ulong), ("format", c_int), ("l", c_long * 5)]
        class Event(ctypes.Union):
            _fields_ = [("xclient", ClientMessage), ("pad", c_long * 24)]
        d = x.XOpenDisplay(None)
        if not d: sys.exit("cannot open the display")
        w = int(sys.argv[1], 0)
        e = Event()
        e.xclient.type = 33  # ClientMessage
        e.xclient.window = w
        e.xclient.message_type = x.XInternAtom(d, b"WM_PROTOCOLS", 0)
        e.xclient.format = 32
        e.xclient.l[0] = x.XInternAtom(d, b"WM_DELETE_WINDOW", 0)
        x.XSendEvent(d, w, 0, 0, ctypes.byref(e))
        x.XFlush(d)
        x.XCloseDisplay(d)
        """
        let r = try display.x(python, ["-c", script, id])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// One click on the close button with an unsaved edit asks (SDL tells
    /// it as the window's close and a quit event: one request, not two),
    /// and Ctrl+S then saves and quits.
    func testOneCloseRequestWithUnsavedEditsAsksAndCtrlSSavesAndQuits() throws {
        let (w, scene) = try openStudio("close", """
        image("img.png")
        addSketch{x = 40, y = 30, w = 100, h = 80}
        prepare()
        impulse(1, 1, 0.5)
        wait(0.5)
        """)
        let before = w.lineCount
        try w.key("l")
        try w.waitForLine(after: before, "the marker", { $0 == "studio: title \u{2022} wobble-run edit: \(scene)" })
        try sendCloseRequest(w.windowID)
        try w.waitForLine(after: before, "asked", { $0 == "studio: asking before quitting (unsaved edits)" })
        defer { _ = try? display.x("xdotool", ["keyup", "ctrl"]) }
        try display.x("xdotool", ["keydown", "ctrl"])
        usleep(200_000)
        try display.x("xdotool", ["key", "s"])
        try display.x("xdotool", ["keyup", "ctrl"])
        guard let status = exitStatus(w, within: 10 * Tool.slowdown) else { return XCTFail("Ctrl+S saves and quits: \(w.linesSnapshot().suffix(3))") }
        XCTAssertEqual(status, 0)
        let lines = w.linesSnapshot()
        XCTAssertFalse(lines.contains { $0.contains("not saved") }, lines.suffix(4).joined(separator: " | "))
        XCTAssertTrue(try String(contentsOf: dir.appendingPathComponent(scene), encoding: .utf8).contains("loop()"), "the edit was saved")
    }
}
