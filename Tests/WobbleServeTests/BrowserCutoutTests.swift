import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleSystem
import WobbleTestSupport
@testable import WobbleServe
@testable import WobbleStudioCore

/// The page's cutout tools against the window's: the same gestures made in
/// chromium (`Shift`/`Alt` + drag with the window's brush, `Shift` + click,
/// `O` and clicks) write the same masks, strokes and scene, byte for byte,
/// as the window's studio core doing what the window does for them
/// (`StudioApp`: a `Shift`/`Alt` press is `strokeBegin` with a 6-pixel
/// brush, each move past 3 pixels and the release `strokeTo`, the release
/// `strokeEnd`; a click while outlining `outlinePoint`; checked in-process
/// by `StudioCutoutPageGesturesTests`), and the page's overlay is the
/// window's: the mask's outline dashes on the mask's edge pixels, the
/// stroke under the brush, the outline's points.
extension BrowserStudioTests {
    static let discSize = (w: 200, h: 150)
    static let disc = (x: 100.0, y: 75.0, radius: 22.0)

    /// The window's cutout test picture (`StudioCutoutTests.picture(bar: true)`):
    /// a textured background, a bright disc, and a dark bar against the
    /// disc's right side (x 122 to 134, y 60 to 90) that GrabCut takes for
    /// part of the disc.
    static func discPicture() -> RGBAImage {
        let (w, h) = discSize
        var img = Sandbox.pattern(width: w, height: h, checker: 5)
        for y in 60..<90 { for x in 122..<134 { let i = (y * w + x) * 4; img.pixels[i] = 10; img.pixels[i + 1] = 12 + UInt8(x % 3) * 4; img.pixels[i + 2] = 14 } }
        for y in 0..<h {
            for x in 0..<w {
                let dx = Double(x) + 0.5 - disc.x, dy = Double(y) + 0.5 - disc.y
                guard dx * dx + dy * dy <= disc.radius * disc.radius else { continue }
                let i = (y * w + x) * 4
                img.pixels[i] = 250; img.pixels[i + 1] = 240; img.pixels[i + 2] = 40 + UInt8(x % 4) * 10
            }
        }
        return img
    }

    static let discScene = """
    image("img.png")
    local disc = addSketch{x = 65, y = 40, w = 70, h = 70}
    prepare()
    impulse(disc, 1, 0.5)
    wait(0.5)

    """

    /// The disc scene in `folder` (made), its picture beside it.
    func writeDiscScene(_ folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try ImageIO.writePNG(Self.discPicture(), to: folder + "/img.png")
        try Self.discScene.write(toFile: folder + "/s.lua", atomically: true, encoding: .utf8)
    }

    /// Serves the disc scene of `folder` (instead of the setup's scene).
    func serveDiscScene(_ folder: String) throws {
        studio.stop()
        try writeDiscScene(folder)
        studio = StudioServer(options: SessionOptions(scenePath: folder + "/s.lua"), log: { _ in })
        try studio.start()
    }

    /// The window's studio core in-process on the disc scene in `folder`:
    /// each command, the cutout job and the runs it started awaited after
    /// it, then `Ctrl+S`.
    func windowCoreSaves(_ folder: String, _ commands: [StudioCommand]) throws {
        try writeDiscScene(folder)
        let clock = ManualClock()
        var options = SessionOptions(scenePath: folder + "/s.lua")
        options.backend = .cpu
        let core = StudioCore(session: options, verbose: false, clock: clock,
                              audio: { throw AudioUnavailable(description: "no audio device in the tests") })
        func settle() {
            for _ in 0..<4 {
                XCTAssertTrue(core.cutouts.waitForJob(upTo: 120), "a cutout job did not end")
                XCTAssertTrue(core.session.waitForRun(upTo: 60), "a run of the scene did not end")
                clock.t += 0.01
                core.tick()
            }
        }
        core.start()
        settle()
        for c in commands {
            core.perform(c)
            if case .strokeTo = c { continue }
            settle()
        }
        core.perform(.save)
        settle()
        XCTAssertFalse(core.session.hasUnsavedEdits, core.snapshot().message)
        core.finish()
    }

    /// The scene and every file in its masks folder, the page's against the window's.
    func assertSameFiles(_ page: String, _ window: String, masks: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try String(contentsOfFile: page + "/s.lua", encoding: .utf8),
                       try String(contentsOfFile: window + "/s.lua", encoding: .utf8), "s.lua", file: file, line: line)
        let names = try FileManager.default.contentsOfDirectory(atPath: window + "/s-masks").sorted()
        XCTAssertEqual(names, masks, file: file, line: line)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: page + "/s-masks").sorted(), names, file: file, line: line)
        for n in names {
            let a = try Data(contentsOf: URL(fileURLWithPath: page + "/s-masks/" + n))
            let b = try Data(contentsOf: URL(fileURLWithPath: window + "/s-masks/" + n))
            XCTAssertTrue(a == b, "s-masks/\(n): the page's \(a.count) bytes are not the window's \(b.count)", file: file, line: line)
        }
    }

    /// The pixels of `mask` (a saved grey PNG) the window dashes magenta:
    /// its edge pixels (`CutoutEditor.outline`) with `(x + y) / 4` even.
    static func magentaDashes(_ mask: RGBAImage) -> Set<[Int]> {
        let grey = GreyMask(width: mask.width, height: mask.height,
                            pixels: stride(from: 0, to: mask.pixels.count, by: 4).map { mask.pixels[$0] })
        return Set(CutoutEditor.outline(grey).map { [$0 % mask.width, $0 / mask.width] }.filter { ($0[0] + $0[1]) / 4 % 2 == 0 })
    }

    static func pixels(_ v: Any?) -> Set<[Int]> { Set((v as? [[Int]]) ?? []) }

    /// `C` on the selected disc, an `Alt` stroke down the bar and a `Shift`
    /// stroke back over part of it, made with the page's mouse, then
    /// `Ctrl+S`: the mask, its strokes and the scene are the window's bytes;
    /// while the `Alt` stroke paints, the overlay shows it red under the
    /// brush; the mask's outline on the page is the window's dashes.
    func testCutoutStrokesInThePageWriteTheWindowsMaskStrokesAndScene() throws {
        let page = box.path("page"), window = box.path("window")
        try serveDiscScene(page)
        let received = { (n: Int) -> [Any] in ["wait", "window.wobble.cutoutsReceived >= \(n) && window.wobble.studio.message.startsWith('cut out')"] }
        let result = try drive([["open"], ["wait_ready"], ["seek", 0],
                                ["click", 100, 75], ["wait", "window.wobble.studio.inspector !== null"],
                                ["key", "c"], received(1),
                                ["eval", "cut", "window.wobble.overlayPixels(255, 40, 200)"],
                                ["key_down", "Alt"], ["mouse_down", 128, 50], ["mouse_move", 128, 75], ["mouse_move", 128, 100],
                                ["wait", "window.wobble.studio.stroke && window.wobble.studio.stroke.points.length === 3"],
                                ["eval", "red", "window.wobble.overlayPixels(255, 60, 40)"], ["page_shot", "alt-stroke"],
                                ["mouse_up"], ["key_up", "Alt"], received(2),
                                ["key_down", "Shift"], ["mouse_down", 128, 60], ["mouse_move", 128, 90], ["mouse_up"], ["key_up", "Shift"],
                                received(3),
                                ["eval", "mended", "window.wobble.overlayPixels(255, 40, 200)"], ["page_shot", "strokes"],
                                ["key", "Control+s"], ["wait_saved"]], out: box.path("shots"))
        try windowCoreSaves(window, [
            .select(at: Point(100.5, 75.5), radius: 10), .cutOut,
            .strokeBegin(at: Point(128.5, 50.5), radius: 6, object: false), .strokeTo(Point(128.5, 75.5)), .strokeTo(Point(128.5, 100.5)),
            .strokeTo(Point(128.5, 100.5)), .strokeEnd,
            .strokeBegin(at: Point(128.5, 60.5), radius: 6, object: true), .strokeTo(Point(128.5, 90.5)), .strokeTo(Point(128.5, 90.5)), .strokeEnd,
        ])
        try assertSameFiles(page, window, masks: ["disc.png", "disc.strokes"])
        // (A click or a stroke means the centre of the pixel under the pointer, as in the window.)
        let strokes = try String(contentsOfFile: page + "/s-masks/disc.strokes", encoding: .utf8)
        XCTAssertTrue(strokes.hasSuffix("\nbackground 6 128.5,50.5 128.5,75.5 128.5,100.5 128.5,100.5\nobject 6 128.5,60.5 128.5,90.5 128.5,90.5\n"), strokes)
        // The overlay while the Alt stroke painted: red under the brush (a
        // 6-pixel radius around the segment from (128, 50) to (128, 100)).
        let red = Self.pixels(result["red"])
        XCTAssertTrue(red.contains([128, 75]) && red.contains([124, 60]) && red.contains([132, 98]), "\(red.count) red pixels")
        XCTAssertTrue(red.allSatisfy { abs($0[0] - 128) <= 7 && $0[1] >= 43 && $0[1] <= 107 }, "red only under the brush")
        // The outline after the strokes: the window's magenta dashes on the
        // saved mask's edge, pixel for pixel (up to x 125: the selected
        // region's white line, drawn over the overlay as in the window,
        // crosses the bar's ends at x 129 to 132).
        let saved = try image(page + "/s-masks/disc.png")
        let dashes = Self.magentaDashes(saved).filter { $0[0] <= 125 }
        XCTAssertEqual(Self.pixels(result["mended"]).filter { $0[0] <= 125 }, dashes)
        XCTAssertGreaterThan(dashes.count, 30)
        XCTAssertGreaterThan(Self.pixels(result["cut"]).count, 40, "C's outline was drawn")
        XCTAssertNotEqual(Self.pixels(result["cut"]), Self.pixels(result["mended"]), "the strokes changed the outline")
    }

    /// `Shift` + click on the disc adds a region around it with its
    /// cutout; `O`, eight clicks around the disc and a click on the first
    /// point make a magnetic outline (the points drawn as the window draws
    /// them meanwhile) and a second region; `Ctrl+S`: the same masks and
    /// scene as the window's.
    func testShiftClickAndTheMagneticOutlineInThePageAreTheWindows() throws {
        let page = box.path("page"), window = box.path("window")
        try serveDiscScene(page)
        // Eight points a pixel outside the disc's edge, then the first again.
        let around = (0..<8).map { k -> Point in
            let a = Double(k) * .pi / 4
            return Point((Self.disc.x + 23 * cos(a)).rounded(), (Self.disc.y + 23 * sin(a)).rounded())
        }
        var steps: [[Any]] = [["open"], ["wait_ready"], ["seek", 0],
                              ["key_down", "Shift"], ["mouse_down", 100, 75], ["mouse_up"], ["key_up", "Shift"],
                              ["wait", "window.wobble.cutouts.length === 1"],
                              // Nothing selected (Ctrl+click off every region): the selected
                              // region's line is drawn over the overlay, here over the points.
                              ["key_down", "Control"], ["mouse_down", 10, 10], ["mouse_up"], ["key_up", "Control"],
                              ["wait", "!(window.wobble.studio.inspector && window.wobble.studio.inspector.selected)"],
                              ["key", "o"], ["wait", "window.wobble.studio.outline !== null"]]
        for (i, p) in around.enumerated() {
            steps.append(["click", p.x, p.y])
            steps.append(["wait", "window.wobble.studio.outline.length === \(i + 1)"])
        }
        steps += [["eval", "yellow", "window.wobble.overlayPixels(255, 220, 40)"], ["page_shot", "outline"],
                  ["click", around[0].x, around[0].y],
                  ["wait", "window.wobble.studio.outline === null && window.wobble.cutouts.length === 2"],
                  ["eval", "names", "window.wobble.sketches.map((s) => s.name)"],
                  ["page_shot", "outlined"], ["key", "Control+s"], ["wait_saved"]]
        let result = try drive(steps, out: box.path("shots"))
        try windowCoreSaves(window, [.strokeBegin(at: Point(100.5, 75.5), radius: 6, object: true), .strokeEnd,
                                     .select(at: Point(10.5, 10.5), radius: 6), .outline]
                            + (around + [around[0]]).map { .outlinePoint(Point($0.x + 0.5, $0.y + 0.5)) })
        try assertSameFiles(page, window, masks: ["region1.png", "region2.png"])
        XCTAssertEqual(result["names"] as? [String], ["disc", "region1", "region2"])
        // The outline's points while clicking: yellow squares (5 pixels) at
        // the points after the first, joined by yellow lines.
        let yellow = Self.pixels(result["yellow"])
        for p in around.dropFirst() { XCTAssertTrue(yellow.contains([Int(p.x) + 2, Int(p.y) + 2]), "the square at \(p)") }
        XCTAssertTrue(yellow.allSatisfy { Swift.abs(Double($0[0]) + 0.5 - Self.disc.x) <= 27 && Swift.abs(Double($0[1]) + 0.5 - Self.disc.y) <= 27 },
                      "only around the points")
        // Both masks hold the disc.
        for n in ["region1", "region2"] {
            let m = try image(page + "/s-masks/\(n).png")
            XCTAssertGreaterThan(m.pixels[(75 * m.width + 100) * 4], 127, "\(n) holds the disc's middle")
            XCTAssertLessThan(m.pixels[(75 * m.width + 60) * 4], 128, "\(n) stops outside it")
        }
    }
}
