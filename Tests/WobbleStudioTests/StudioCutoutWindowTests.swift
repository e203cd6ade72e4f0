import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// Cutouts under Xvfb, through SDL's own events: `Tab` selects the region,
/// `C` cuts it out, `Shift`+click adds a region around the object, `Ctrl+S`
/// writes the masks beside the scene; the saved scene renders headless
/// with them.
extension StudioTests {
    func testCutOutSaveAndRenderTheMasksHeadless() throws {
        try startDisplay()
        let (img, truth) = StudioCutoutTests.picture()
        try ImageIO.writePNG(img, to: dir.appendingPathComponent("img.png").path)
        let scene = "cut-\(id).lua"
        try write(scene, StudioCutoutTests.scene)
        let w = try StudioWindowUnderTest(scene: scene, cwd: dir, display: display)
        try w.waitForLine("a frame", { $0.contains(" presented") })
        var before = w.lineCount
        try w.key("space", "Tab", "c")
        // GrabCut in a debug build on a loaded machine: the line comes, late
        // (the timeouts only bound a studio that stopped answering).
        try w.waitForLine(after: before, timeout: 180, "cut out", { $0.hasPrefix("studio: cut out disc (") })
        // Shift+click on the disc: a region fitted around it, with its cutout.
        // The keys and the click come in one burst; a busy studio reads them
        // together, and the click must still carry the Shift held at its
        // time (it lost it: a plain click, no fit, "no 'fitted' line" under
        // load). The studio is stopped while they are sent, so it always
        // reads them as one batch, as a loaded machine made it do at times.
        before = w.lineCount
        let a = w.imageArea
        XCTAssertEqual(kill(w.process.processIdentifier, SIGSTOP), 0)
        let sent = Result { try display.x("xdotool", ["mousemove", "--window", w.windowID, "\(a.x + 100)", "\(a.y + 75)",
                                                      "keydown", "shift", "click", "1", "keyup", "shift"]) }
        XCTAssertEqual(kill(w.process.processIdentifier, SIGCONT), 0)
        _ = try sent.get()
        try w.waitForLine(after: before, timeout: 60, "cutting out the object", { $0.hasPrefix("studio: cutting out the object at (") })
        try w.waitForLine(after: before, timeout: 180, "fitted", { $0 == "studio: fitted region1 around the object" })
        before = w.lineCount
        try w.key("ctrl+s")
        try w.waitForLine(after: before, "saved", { $0.hasPrefix("studio: saved ") && $0.contains("written in cut-\(id)-masks") })
        XCTAssertEqual(try w.quit(), 0)

        let masks = "cut-\(id)-masks"
        let text = try String(contentsOf: dir.appendingPathComponent(scene), encoding: .utf8)
        XCTAssertTrue(text.contains("local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = \"\(masks)/disc.png\"}"), text)
        XCTAssertTrue(text.contains(", cutout = \"\(masks)/region1.png\"}\n"), text)
        for name in ["disc", "region1"] {
            let m = try ImageIO.load(path: dir.appendingPathComponent("\(masks)/\(name).png").path)
            let grey = GreyMask(width: m.width, height: m.height, pixels: stride(from: 0, to: m.pixels.count, by: 4).map { m.pixels[$0] })
            XCTAssertGreaterThanOrEqual(StudioCutoutTests.iou(grey, truth), 0.9, name)
        }
        // Headless: the saved scene renders with the masks; far from the
        // disc every frame is the source.
        try render([scene, "--backend", "cpu", "--frames", "0-5", "-o", "out/"])
        let box = truth.objectBox
        for k in 0...5 {
            let f = try ImageIO.load(path: dir.appendingPathComponent(String(format: "out/frame_%05d.png", k)).path)
            XCTAssertEqual(f.width, img.width)
            var same = true
            for y in 0..<img.height {
                for x in 0..<img.width where x < box.x0 - 12 || x >= box.x1 + 12 || y < box.y0 - 12 || y >= box.y1 + 12 {
                    let i = (y * img.width + x) * 4
                    if f.pixels[i..<i + 4] != img.pixels[i..<i + 4] { same = false }
                }
            }
            XCTAssertTrue(same, "frame \(k): the background away from the disc is the source")
        }
    }
}
