import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

/// The window's cutout gestures in-process are the studio core's commands
/// that the browser page sends for the same gestures (BrowserStudioTests'
/// `testCutoutStrokesInThePageWriteTheWindowsMaskStrokesAndScene` and
/// `testShiftClickAndTheMagneticOutlineInThePageAreTheWindows` compare the
/// page's files with these commands' files): a `Shift`/`Alt` press is
/// `strokeBegin` with a 6-pixel brush (at 1:1), each move past 3 pixels and
/// the release `strokeTo`, the release `strokeEnd`; a click while outlining
/// `outlinePoint`. Both write the same mask, strokes and scene bytes.
final class StudioCutoutPageGesturesTests: InProcessStudioCase {
    static let scene = """
    image("img.png")
    local disc = addSketch{x = 65, y = 40, w = 70, h = 70}
    prepare()
    impulse(disc, 1, 0.5)
    wait(0.5)

    """

    /// The disc scene (the picture of `StudioCutoutTests`, with the bar) in `folder`.
    func writeScene(_ folder: String) throws {
        try FileManager.default.createDirectory(atPath: box.path(folder), withIntermediateDirectories: true)
        try ImageIO.writePNG(StudioCutoutTests.picture(bar: true).0, to: box.path(folder + "/img.png"))
        try Self.scene.write(toFile: box.path(folder + "/s.lua"), atomically: true, encoding: .utf8)
    }

    /// The window in-process on `window/s.lua` doing `script` (each input
    /// after the cutout job and the run before it ended).
    func runWindow(_ script: [(at: Double, input: StudioInput)], clock: ManualClock) throws {
        try writeScene("window")
        let (status, _, _) = try runStudio("window/s.lua", clock: clock, script: script) { s, app in
            s.settle = { [unowned app] in
                XCTAssertTrue(app.cutouts.waitForJob(upTo: 120), "a cutout job did not end")
                XCTAssertTrue(app.session.waitForRun(upTo: 60), "a run of the scene did not end")
            }
        }
        XCTAssertEqual(status, 0)
    }

    /// The studio core alone on `core/s.lua` doing `commands`, then `Ctrl+S`.
    func runCore(_ commands: [StudioCommand]) throws {
        try writeScene("core")
        let clock = ManualClock()
        var options = SessionOptions(scenePath: box.path("core/s.lua"))
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

    func assertSameFiles(masks: [String], file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try read("window/s.lua"), try read("core/s.lua"), file: file, line: line)
        XCTAssertNotEqual(try read("window/s.lua"), Self.scene, "saved with the cutouts", file: file, line: line)
        XCTAssertEqual(try box.list("window/s-masks"), masks, file: file, line: line)
        XCTAssertEqual(try box.list("core/s-masks"), masks, file: file, line: line)
        for n in masks {
            let a = try Data(contentsOf: URL(fileURLWithPath: box.path("window/s-masks/" + n)))
            let b = try Data(contentsOf: URL(fileURLWithPath: box.path("core/s-masks/" + n)))
            XCTAssertTrue(a == b, "s-masks/\(n): the window's \(a.count) bytes are not the core's \(b.count)", file: file, line: line)
        }
    }

    func testStrokesAreTheCommandsThePageSends() throws {
        let a = imageArea(200, 150)
        XCTAssertEqual(Layout(imageWidth: 200, imageHeight: 150, screen: (1920, 1080)).scale, 1, "1:1, as in the page")
        let clock = ManualClock()
        let t0 = clock.t
        let x = a.x + 128
        try runWindow([
            (t0 + 0.10, .key(.home, shift: false, ctrl: false)),
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.20, .key(.c, shift: false, ctrl: false)),
            (t0 + 0.50, .strokeStart(x: x, y: a.y + 50, object: false)),
            (t0 + 0.51, .mouseMove(x: x, y: a.y + 75)), (t0 + 0.52, .mouseMove(x: x, y: a.y + 100)),
            (t0 + 0.53, .mouseUp(x: x, y: a.y + 100)),
            (t0 + 0.80, .strokeStart(x: x, y: a.y + 60, object: true)),
            (t0 + 0.81, .mouseMove(x: x, y: a.y + 90)), (t0 + 0.82, .mouseUp(x: x, y: a.y + 90)),
            (t0 + 1.10, .key(.s, shift: false, ctrl: true)),
            (t0 + 1.30, .quit),
        ], clock: clock)
        try runCore([
            .select(at: Point(100.5, 75.5), radius: 10), .cutOut,
            .strokeBegin(at: Point(128.5, 50.5), radius: 6, object: false), .strokeTo(Point(128.5, 75.5)), .strokeTo(Point(128.5, 100.5)),
            .strokeTo(Point(128.5, 100.5)), .strokeEnd,
            .strokeBegin(at: Point(128.5, 60.5), radius: 6, object: true), .strokeTo(Point(128.5, 90.5)), .strokeTo(Point(128.5, 90.5)), .strokeEnd,
        ])
        try assertSameFiles(masks: ["disc.png", "disc.strokes"])
        // (The window takes a mouse pixel at its centre.)
        let strokes = try read("window/s-masks/disc.strokes")
        XCTAssertTrue(strokes.hasSuffix("\nbackground 6 128.5,50.5 128.5,75.5 128.5,100.5 128.5,100.5\nobject 6 128.5,60.5 128.5,90.5 128.5,90.5\n"), strokes)
    }

    func testShiftClickAndTheOutlineAreTheCommandsThePageSends() throws {
        let a = imageArea(200, 150)
        let clock = ManualClock()
        let t0 = clock.t
        let around = (0..<8).map { k -> (x: Int, y: Int) in
            let angle = Double(k) * .pi / 4
            return (Int((100 + 23 * cos(angle)).rounded()), Int((75 + 23 * sin(angle)).rounded()))
        }
        var script: [(at: Double, input: StudioInput)] = [
            (t0 + 0.10, .key(.home, shift: false, ctrl: false)),
            (t0 + 0.20, .strokeStart(x: a.x + 100, y: a.y + 75, object: true)), (t0 + 0.21, .mouseUp(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.50, .key(.o, shift: false, ctrl: false)),
        ]
        for (i, p) in (around + [around[0]]).enumerated() {
            script.append((t0 + 0.60 + Double(i) * 0.02, .mouseDown(x: a.x + p.x, y: a.y + p.y)))
            script.append((t0 + 0.61 + Double(i) * 0.02, .mouseUp(x: a.x + p.x, y: a.y + p.y)))
        }
        script += [(t0 + 1.10, .key(.s, shift: false, ctrl: true)), (t0 + 1.30, .quit)]
        try runWindow(script, clock: clock)
        try runCore([.strokeBegin(at: Point(100.5, 75.5), radius: 6, object: true), .strokeEnd, .outline]
                    + (around + [around[0]]).map { .outlinePoint(Point(Double($0.x) + 0.5, Double($0.y) + 0.5)) })
        try assertSameFiles(masks: ["region1.png", "region2.png"])
    }
}
