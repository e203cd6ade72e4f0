import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// The view under Xvfb, through SDL's own events: `F` in a bigger window
/// enlarges the picture (still the headless frame at that size), the wheel
/// zooms, a middle drag pans, a tick on the timeline names itself.
extension StudioTests {
    func testFitZoomPanAndATickInTheWindow() throws {
        let (w, scene) = try openStudio("view", """
        image("img.png")
        addSketch{x = 30, y = 20, w = 90, h = 80}
        prepare()
        impulse(1, 1, 0.5)
        wait(0.4)
        touch(100, 60, 120, 70)
        wait(0.6)
        """)
        try w.key("h", "space", "Home", "Right", "Right", "Right")
        try w.waitForLine("frame 3", StudioTests.frameLine(3, paused: true))
        var before = w.lineCount
        try display.x("xdotool", ["windowsize", w.windowID, "640", "500"])
        try w.waitForLine(after: before, "the bigger window", { $0.hasPrefix("studio: window 640x500") })
        // At its size the picture stays 1:1 until F.
        w.updateImageArea()
        XCTAssertEqual(w.imageArea.w, 200)
        before = w.lineCount
        try w.key("f")
        try w.waitForLine(after: before, "fitted", { $0.hasPrefix("studio: window 640x500") && !$0.hasSuffix("scale 1") })
        try w.waitForLine(after: before, "frame 3 again", StudioTests.frameLine(3, paused: true))
        w.updateImageArea()
        // The area left of the inspector: 408 (640 - its column) by 412
        // (500 - the chrome); the picture 408 wide, 306 high, centred.
        XCTAssertEqual(w.imageArea.w, 408)
        XCTAssertEqual(w.imageArea.h, 306)
        XCTAssertEqual(w.imageArea.x, 0)
        XCTAssertEqual(w.imageArea.y, (412 - 306) / 2)
        // (The swap reaches the X server a moment later on a busy machine.)
        usleep(1_000_000)
        try assertShowsTheRenderedFrame(w, scene: scene, frame: 3, extra: ["--width", "408", "--height", "306"])
        // The wheel zooms around the mouse: the image point under it stays.
        before = w.lineCount
        try display.x("xdotool", ["mousemove", "--window", w.windowID, "320", "200", "click", "4"])
        try w.waitForLine(after: before, "zoomed", { $0.hasPrefix("studio: window 640x500") && $0.contains("510x383") })
        w.updateImageArea()
        XCTAssertEqual(Double(320 - w.imageArea.x) / 510, Double(320 - 0) / 408, accuracy: 0.003)
        // A middle drag pans by the mouse's way.
        let zoomed = w.imageArea
        before = w.lineCount
        try display.x("xdotool", ["mousemove", "--window", w.windowID, "300", "200", "mousedown", "2",
                                  "mousemove", "--window", w.windowID, "320", "215",
                                  "mousemove", "--window", w.windowID, "340", "230", "mouseup", "2"])
        try w.waitForLine(after: before, "panned", { $0.hasPrefix("studio: window 640x500") && $0.contains("; image area \(zoomed.x + 40),\(zoomed.y + 30) ") })
        // A tick: the impulse at 0 s, line 4.
        before = w.lineCount
        try display.x("xdotool", ["mousemove", "--window", w.windowID, "8", "\(500 - 88 + 10)"])
        try w.waitForLine(after: before, "the tick", { $0 == "studio: tick: impulse at 0.000 s, \(scene) line 4 (click selects, Delete deletes)" })
        XCTAssertEqual(try w.quit(), 0)
    }

    /// `wobble-run new` with a display opens the studio on the new scene.
    func testNewOpensTheStudioOnTheStarterScene() throws {
        try startDisplay()
        try writePattern("photo.png", 240, 180)
        let p = Process()
        p.executableURL = Tool.executable
        p.arguments = ["new", "photo.png"]
        p.currentDirectoryURL = dir
        p.environment = display.environment
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        defer { if p.isRunning { p.terminate() } }
        let found = try display.x("timeout", ["20", "xdotool", "search", "--sync", "--name", "wobble-run edit: photo.lua"])
        let id = String(decoding: found.stdout, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertFalse(id.isEmpty, "the studio opened on photo.lua")
        XCTAssertTrue(FileManager.default.fileExists(atPath: dir.appendingPathComponent("photo.lua").path))
        try display.x("xdotool", ["windowfocus", "--sync", id])
        try display.x("xdotool", ["key", "Escape"])
        let deadline = Date().addingTimeInterval(10)
        while p.isRunning && Date() < deadline { usleep(20_000) }
        XCTAssertFalse(p.isRunning)
        if p.isRunning { p.terminate(); p.waitUntilExit(); return }
        XCTAssertEqual(p.terminationStatus, 0)
    }
}
