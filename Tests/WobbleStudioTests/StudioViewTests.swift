import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
import WobbleScript
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

private func key(_ k: StudioKey, shift: Bool = false, ctrl: Bool = false) -> StudioInput {
    .key(k, shift: shift, ctrl: ctrl)
}

/// The studio's view and its files, in-process: zoom and pan, export,
/// stills, takes that stand alone, quiet reloads, the timeline's ticks,
/// the keys' help and the status that wraps.
final class StudioViewTests: InProcessStudioCase {
    private let sceneText = """
    image("img.png")
    fps(10)
    addSketch{lt = {-15, 40}, rt = {110, 10}, rb = {110, 80}, lb = {10, 80}, duration = 5}
    prepare()
    impulse(1, 1, 0.3)
    wait(1.2)

    """

    /// Wheel notches zoom around the mouse: the picture is then the
    /// headless render at the size shown (`--width W --height H`), frame
    /// for frame; `F` fits the picture into the area, enlarging it.
    func testZoomShowsTheHeadlessFrameAtTheSizeShown() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)
        let start = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080))
        let zoomed = Layout(imageWidth: 120, imageHeight: 90, window: (start.windowWidth, start.windowHeight),
                            view: start.zoomed(by: 1.25 * 1.25 * 1.25, around: 200, 45))
        let (w, h) = (zoomed.imageRect.w, zoomed.imageRect.h)
        XCTAssertEqual(w, 234)
        XCTAssertEqual(h, 176)
        let r = try Tool.run(["s.lua", "--backend", "cpu", "--width", "\(w)", "--height", "\(h)", "--frames", "0-11", "-q", "-o", "big/"],
                             cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        let expected = try (0..<12).map { try ImageIO.load(path: box.path(String(format: "big/frame_%05d.png", $0))) }
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, _) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.h)),
            (t0 + 0.01, .wheel(x: 200, y: 45, steps: 3)),
            (t0 + 0.5, key(.f)),
            (t0 + 0.6, .quit),
        ])
        XCTAssertEqual(status, 0)
        let zoomedShown = surface.frames.filter { $0.at > t0 + 0.02 && $0.at < t0 + 0.5 }.compactMap(\.image)
        XCTAssertFalse(zoomedShown.isEmpty)
        for img in zoomedShown {
            XCTAssertEqual(img.width, w)
            XCTAssertNotNil(expected.firstIndex(of: img), "a zoomed picture is a headless frame at \(w)x\(h)")
        }
        XCTAssertGreaterThan(Set(zoomedShown.compactMap { expected.firstIndex(of: $0) }).count, 2, "it plays on while zoomed")
        // F: the whole picture as large as the area left of the inspector
        // allows (248 of its 480 px wide, 300 high: 248x186).
        XCTAssertTrue(start.pictureArea == (0, 0, 480 - Layout.panelWidth, 300))
        let fitted = try XCTUnwrap(surface.frames.last { $0.image != nil }?.image)
        XCTAssertEqual(fitted.width, 248)
        XCTAssertEqual(fitted.height, 186)
    }

    /// A handle outside the picture: drawn beside it once zoomed, grabbed
    /// there and dragged into the picture; the saved numbers are where it
    /// was dropped, in image pixels at that zoom.
    func testAHandleOutsideThePictureIsDraggedBackInAndSaved() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)
        let start = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080))
        let view = start.zoomed(by: 1.25 * 1.25 * 1.25, around: start.imageRect.x, 45)
        let zoomed = Layout(imageWidth: 120, imageHeight: 90, window: (start.windowWidth, start.windowHeight), view: view)
        let handle = zoomed.windowPoint(Point(-15, 40)), hx = handle.x, hy = handle.y
        let grab = (Int(hx.rounded()), Int(hy.rounded()))
        XCTAssertLessThan(grab.0, zoomed.imageRect.x, "the handle is left of the picture")
        XCTAssertTrue(zoomed.pictureAreaContains(grab.0, grab.1))
        let drop = (grab.0 + 50, grab.1 + 5)
        XCTAssertNotNil(zoomed.imagePoint(drop.0, drop.1), "dropped on the picture")
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.05, .wheel(x: start.imageRect.x, y: 45, steps: 3)),
            (t0 + 0.20, .mouseDown(x: grab.0, y: grab.1)),
            (t0 + 0.25, .mouseMove(x: grab.0 + 20, y: grab.1 + 2)),
            (t0 + 0.30, .mouseUp(x: drop.0, y: drop.1)),
            (t0 + 0.50, key(.s, ctrl: true)),
            (t0 + 0.60, .quit),
        ])
        XCTAssertEqual(status, 0)
        // Drawn beside the picture while it was outside.
        let shown = surface.marksPresented.contains { marks in
            marks.contains { $0.x <= grab.0 && grab.0 < $0.x + $0.w && $0.y <= grab.1 && grab.1 < $0.y + $0.h }
        }
        XCTAssertTrue(shown, "the handle outside the picture is drawn: \(surface.marksPresented.last ?? [])")
        func tenth(_ v: Double) -> String { String(format: "%g", (v * 10).rounded() / 10) }
        let x = tenth(-15 + 50 / zoomed.scale), y = tenth(40 + 5 / zoomed.scale)
        XCTAssertEqual(try read("s.lua"), sceneText.replacingOccurrences(of: "lt = {-15, 40}", with: "lt = {\(x), \(y)}"))
        XCTAssertEqual(x, "10.6")
    }

    /// `E` renders the scene's output with the headless tool in the
    /// background while the window goes on presenting: the file is byte
    /// for byte what `wobble-run s.lua` writes.
    func testTheExportKeyWritesWhatAHeadlessRenderWrites() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)
        let clock = ManualClock()
        let t0 = clock.t
        var during: String?
        var framesWhileExporting = 0
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.05, key(.e)),
            (t0 + 0.5, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.06, {
                during = app.message
                let n = surface.frames.count
                surface.holdWhile = {
                    framesWhileExporting = surface.frames.count - n
                    return app.isExporting
                }
            })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertTrue(during?.hasPrefix("exporting s.lua") ?? false, during ?? "")
        XCTAssertGreaterThan(framesWhileExporting, 0, "the window presents while the export runs")
        // The scene ends while moving: the export says so, not as a success.
        XCTAssertTrue(app.message.hasPrefix("exported in "), app.message)
        XCTAssertTrue(app.message.hasSuffix(", but warning: " + ClipWarnings.loopJump(try XCTUnwrap(app.session.clip))), app.message)
        XCTAssertTrue(app.messageIsError)
        let exported = try Data(contentsOf: box.url.appendingPathComponent("s.gif"))
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "ref.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(exported, try Data(contentsOf: box.url.appendingPathComponent("ref.gif")), "byte for byte")
        XCTAssertEqual(app.session.generation, 1, "the export's output did not reload the scene")
        _ = surface
    }

    /// `P` writes the frame shown as `s-still-N.png` (the next free N),
    /// the headless frame at the scene's size even while zoomed; the
    /// stills do not reload the scene.
    func testTheStillKeyWritesTheFrameShownWithoutReloading() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)
        let expected = try headlessFrames("s.lua", count: 4)
        try box.write("s-still-1.png", "not mine")
        // A dangling link planted at the next name: skipped, never written through.
        try FileManager.default.createSymbolicLink(atPath: box.path("s-still-2.png"), withDestinationPath: "planted.png")
        let clock = ManualClock()
        let t0 = clock.t
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.space)),
            (t0 + 0.1, key(.right)), (t0 + 0.15, key(.right)), (t0 + 0.2, key(.right)),   // frame 3
            (t0 + 0.25, .wheel(x: 200, y: 40, steps: 2)),
            (t0 + 0.3, key(.p)),
            (t0 + 0.4, key(.p)),
            (t0 + 1.0, .quit),
        ])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(try read("s-still-1.png"), "not mine", "never written over")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: box.path("s-still-2.png")), "planted.png")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("planted.png")), "written through the link")
        XCTAssertEqual(try ImageIO.load(path: box.path("s-still-3.png")), expected[3])
        XCTAssertEqual(try ImageIO.load(path: box.path("s-still-4.png")), expected[3])
        XCTAssertEqual(app.message, "wrote \(box.path("s-still-4.png"))")
        XCTAssertEqual(app.session.generation, 1, "no reload for the stills")
    }

    /// A take of a scene that names its output renders to its own file:
    /// `x.gif` stays as it was. After `R` stops, the take's pokes leave the
    /// preview (the clip is the scene's again).
    func testATakeRendersToItsOwnFileAndLeavesThePreview() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        let text = """
        image("img.png")
        output("x.gif")
        addSketch{x = 10, y = 10, w = 100, h = 70}
        prepare()
        wait(0.5)

        """
        try box.write("s.lua", text)
        try box.write("x.gif", "the scene's own output")
        let a = imageArea(120, 90)
        let clock = ManualClock()
        let t0 = clock.t
        let framesWhileRecording = 0
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, key(.r)),
            (t0 + 0.35, .mouseDown(x: a.x + 35, y: a.y + 30)),
            (t0 + 0.4, .mouseUp(x: a.x + 45, y: a.y + 40)),
            (t0 + 0.9, key(.r)),
            (t0 + 1.5, .quit),
        ]) { _, app in
            _ = app
        }
        XCTAssertEqual(status, 0)
        _ = framesWhileRecording
        let take = try read("s-take-1.lua")
        XCTAssertTrue(take.hasPrefix(text))
        XCTAssertTrue(take.contains("\noutput(\"s-take-1.gif\")\n"), take)
        XCTAssertTrue(app.session.performed.isEmpty, "the take's pokes left the preview")
        XCTAssertEqual(app.session.clip?.frameCount, 15, "the scene's own clip: 0.5 s at 30 fps")
        let r = try Tool.run(["s-take-1.lua", "--backend", "cpu", "-q", "--frames", "0-2"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try read("x.gif"), "the scene's own output", "x.gif untouched")
        XCTAssertGreaterThan(try Data(contentsOf: box.url.appendingPathComponent("s-take-1.gif")).count, 100)
        // Recording past the clip's end, the status line shows no count.
        var c = Chrome(width: 480, frame: 274, frameCount: 261, fps: 30, playhead: 9.13, clipLength: 8.7, scriptedDuration: 8.7,
                       ticks: [], recording: true, playing: true, unsavedEdits: false, message: "", messageIsError: false)
        XCTAssertEqual(c.statusLine, "frame 274  9.133 s  REC +0.4 s")
        c.recording = false
        c.frame = 12
        XCTAssertTrue(c.statusLine.hasPrefix("frame 12/261  "))
    }

    /// The studio watches what the scene reads: a PNG another program
    /// writes beside the scene reloads nothing; the trace it reads does.
    func testAPNGWrittenBesideTheSceneDoesNotReloadButItsTraceDoes() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("t.csv", "0,0,1.5\n")
        try box.write("s.lua", """
        image("img.png")
        addSketch{x = 10, y = 10, w = 100, h = 70}
        prepare()
        enableMotion("t.csv")
        wait(0.5)

        """)
        let clock = ManualClock()
        let t0 = clock.t
        var afterPNG = -1
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 1.2, .quit),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.1, {
                    try? self.box.writeImage("screenshot.png", Sandbox.pattern(width: 20, height: 20))
                    try? self.box.writeImage("frame_00000.png", Sandbox.pattern(width: 20, height: 20))
                }),
                // Long enough for the watcher to settle (it reports after 20 ms of quiet).
                (t0 + 0.6, {
                    afterPNG = app.session.generation
                    try? self.box.write("t.csv", "0,0,1.5\n0.1,1.5,0\n")
                    surface.holdWhile = { app.session.generation < 2 }
                }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(afterPNG, 1, "no reload for PNGs the scene does not read")
        XCTAssertEqual(app.message, "reloaded: t.csv changed")
    }

    /// The timeline's ticks: the script's kicks with their lines and the
    /// performed ones; hovering one names it.
    func testHoveringATickNamesItsKindAndLine() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)   // impulse on line 5 at 0 s, clip 1.2 s
        let layout = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080))
        let y = layout.chromeY + 10
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.space)),
            (t0 + 0.05, .mouseDown(x: layout.imageRect.x + 90, y: layout.imageRect.y + 60)),   // a poke at the playhead
            (t0 + 0.06, .mouseUp(x: layout.imageRect.x + 100, y: layout.imageRect.y + 65)),
            (t0 + 0.3, .mouseMove(x: Chrome.x(0, width: layout.windowWidth, length: 1.2), y: y)),
            (t0 + 0.4, .mouseMove(x: layout.windowWidth / 2, y: 20)),
            (t0 + 0.5, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.35, { self.hovered = app.hovered })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(app.session.scriptKicks, [ScriptKick(time: 0, kind: "impulse", line: 5)])
        XCTAssertEqual(hovered, "impulse at 0.000 s, s.lua line 5 (click selects, Delete deletes)")
        XCTAssertNil(app.hovered, "away from the timeline: no tick named")
        XCTAssertEqual(app.session.performed.count, 1, app.message)
        _ = surface
    }
    private var hovered: String?

    /// The mouse rests on a tick that `Delete` deletes: the status row
    /// names it no more (the window kept the deleted tick's label until
    /// the mouse moved) and says the deletion instead.
    func testAfterDeleteTheStatusRowNamesTheDeletedTickNoMore() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)   // impulse on line 5 at 0 s, clip 1.2 s
        let layout = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080))
        let y = layout.chromeY + 10, x = Chrome.x(0, width: layout.windowWidth, length: 1.2)
        let clock = ManualClock()
        let t0 = clock.t
        var before: [String] = [], after: [String] = []
        var afterHovered: String?? = .none
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, .mouseMove(x: x, y: y)),
            (t0 + 0.2, .mouseDown(x: x, y: y)),
            (t0 + 0.25, .mouseUp(x: x, y: y)),
            (t0 + 0.4, key(.delete)),
            (t0 + 0.9, key(.escape)),   // unsaved: asks
            (t0 + 1.0, key(.escape)),   // quits without saving
        ]) { surface, app in
            surface.actions = [(t0 + 0.3, { before = app.chromeRows.map(\.text) }),
                               (t0 + 0.8, { after = app.chromeRows.map(\.text); afterHovered = .some(app.hovered) })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertTrue(before.contains("impulse at 0.000 s, s.lua line 5 (click selects, Delete deletes)"), "\(before)")
        XCTAssertEqual(afterHovered, .some(nil), "the deleted tick is named no more")
        XCTAssertFalse(after.contains { $0.contains("impulse at 0.000 s") }, "\(after)")
        XCTAssertTrue(after.contains { $0.hasPrefix("deleted the kick of line 5") }, "\(after)")
    }

    /// F1 shows every key over the window (the sheet's own picture); any
    /// key closes it and the picture comes back.
    func testF1ShowsEveryKey() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)
        let layout = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080))
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: [
            (t0, key(.h)),
            (t0 + 0.1, key(.space)),
            (t0 + 0.2, key(.help)),
            (t0 + 0.4, key(.down)),
            (t0 + 0.6, key(.a)),      // closes the help; adds nothing
            (t0 + 0.8, .quit),
        ])
        XCTAssertEqual(status, 0)
        // The last message under the keys, after the scene's warnings.
        let shown = (app.session.warnings.map { "warning: " + $0 } + ["handles hidden"]).joined(separator: "\n")
        XCTAssertEqual(app.session.warnings.count, 1, "the GIF ends while moving")
        let sheet = HelpSheet.image(width: layout.windowWidth, height: layout.windowHeight, page: 0, message: shown)
        XCTAssertGreaterThan(sheet.pages, 1, "a small window pages the sheet")
        XCTAssertEqual(surface.picture(before: t0 + 0.4), sheet.image)
        let page2 = HelpSheet.image(width: layout.windowWidth, height: layout.windowHeight, page: 1, message: shown)
        XCTAssertEqual(surface.picture(before: t0 + 0.6), page2.image)
        XCTAssertEqual(surface.picture(before: t0 + 0.8)?.width, 120, "the picture is back")
        // Every key the studio answers is on the sheet.
        let all = HelpSheet.lines(columns: 200, message: "").joined(separator: "\n")
        for k in ["Space", "Left / Right", "Home", "wheel", "Space+drag", "F ", "H ", "A ", "Ctrl+S", "Ctrl+Z", "Shift+arrows",
                  "Backspace", "R ", "E ", "P ", "F1 or ?", "Esc", "C ", "Shift+drag / Alt+drag", "Shift+click", "O, then clicks", "Delete"] {
            XCTAssertTrue(all.contains(k), k)
        }
    }

    /// The status rows wrap at the window's width (nothing cut): a long
    /// message at the smallest window is whole on the rows or, past three
    /// rows, on the help sheet.
    func testTheStatusWrapsAtASmallWindow() {
        let message = "wobble-run: scene.lua:12: addSketch: corner 'lt' must be a table of two numbers {x, y}, got a string (see the README's addSketch section)"
        let c = Chrome(width: 480, frame: 0, frameCount: 10, fps: 30, playhead: 0, clipLength: 1, scriptedDuration: 1, ticks: [],
                       recording: false, playing: true, unsavedEdits: false, message: message, messageIsError: true)
        let lines = c.messageLines
        XCTAssertEqual(lines.count, 3)
        XCTAssertTrue(lines.allSatisfy { $0.count <= (480 - 16) / 7 })
        XCTAssertEqual(lines.joined(separator: " "), message)
        let narrow = Chrome(width: 200, frame: 0, frameCount: 10, fps: 30, playhead: 0, clipLength: 1, scriptedDuration: 1, ticks: [],
                            recording: false, playing: true, unsavedEdits: false, message: message, messageIsError: true)
        XCTAssertEqual(narrow.messageLines.count, 3)
        XCTAssertTrue(narrow.messageLines[2].hasSuffix("... (F1 shows it all)"))
        XCTAssertTrue(HelpSheet.lines(columns: 26, message: message).joined(separator: " ").contains("(see the README's"))
        XCTAssertEqual(Chrome.wrap("abcdefghij", width: 4), ["abcd", "efgh", "ij"])
    }

    /// The timeline's bar shows the frame the counter names: `frame 0/1`
    /// of a one-frame clip is an empty bar, whatever the playhead's time
    /// inside that frame.
    func testTheBarAgreesWithTheFrameCounter() {
        let c = Chrome(width: 480, frame: 0, frameCount: 1, fps: 30, playhead: 0.8 / 30, clipLength: 1.0 / 30, scriptedDuration: 1.0 / 30,
                       ticks: [], recording: false, playing: true, unsavedEdits: false, message: "", messageIsError: false)
        XCTAssertTrue(c.statusLine.hasPrefix("frame 0/1 "), c.statusLine)
        let img = c.image
        // Half way along the bar (y 10): the bar's empty colour, not the fill.
        let p = img.pixel(240, 10)
        XCTAssertEqual([p.r, p.g, p.b], [64, 64, 70])
        var d = c
        d.frame = 5; d.frameCount = 10; d.playhead = 5.9 / 30; d.clipLength = 10.0 / 30
        let half = Chrome.x(0.5, width: 480, length: 1)
        let q = d.image.pixel(half - 4, 10), r = d.image.pixel(half + 8, 10)
        XCTAssertEqual([q.r, q.g, q.b], [70, 110, 180], "frame 5/10: filled to half")
        XCTAssertEqual([r.r, r.g, r.b], [64, 64, 70], "and no further")
    }

    /// A scene's error and a later message: the error keeps the first
    /// rows (red), the message the last.
    func testASceneErrorKeepsItsRowsAndTheMessageComesAfter() throws {
        let error = "scene.lua:12: " + String(repeating: "this is long ", count: 12)
        let c = Chrome(width: 480, frame: 0, frameCount: 10, fps: 30, playhead: 0, clipLength: 1, scriptedDuration: 1, ticks: [],
                       recording: false, playing: true, unsavedEdits: false, message: "no region to select", messageIsError: false,
                       sceneError: error)
        let rows = c.messageRowsShown
        XCTAssertEqual(rows.map(\.kind), [.error, .error, .message])
        XCTAssertEqual(rows.last?.text, "no region to select")
        XCTAssertTrue(rows[1].text.hasSuffix("... (F1 shows it all)"))
        var same = c
        same.message = error
        XCTAssertEqual(same.messageRowsShown.map(\.kind), [.error, .error, .error])
        // A longer message (the quit question) takes two rows; the error keeps one.
        var question = c
        var guardian = QuitGuard()
        question.message = try XCTUnwrap(guardian.ask(unsavedEdits: ["body"], closing: false))
        question.messageIsError = true
        XCTAssertEqual(question.messageRowsShown.map(\.kind), [.error, .error, .error])
        XCTAssertEqual(question.messageRowsShown.dropFirst().map(\.text).joined(separator: " "), question.message)
        XCTAssertTrue(question.messageRowsShown[0].text.hasSuffix("... (F1 shows it all)"))
    }

    /// After `F`, a wheel zoom says the new zoom (not the fit's old figure).
    func testAWheelZoomReplacesTheFitMessage() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)
        let a = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080)).imageRect
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        let (status, _, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.10, .key(.f, shift: false, ctrl: false)),
            (t0 + 0.20, .wheel(x: a.x + 60, y: a.y + 45, steps: -2)),
            (t0 + 0.40, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.15, { messages.append(app.message) }), (t0 + 0.30, { messages.append(app.message) })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(messages.count, 2)
        XCTAssertTrue(messages[0].hasPrefix("fitted: "), messages[0])
        XCTAssertTrue(messages[1].hasPrefix("zoom ") && messages[1].hasSuffix("% (F fits)"), messages[1])
        XCTAssertNotEqual(messages[1].dropFirst(5).prefix(while: { $0 != "%" }), messages[0].dropFirst(8).prefix(while: { $0 != "%" }))
    }

    /// A drag with Space held pans and gives back the play/pause of that
    /// Space press; a middle drag pans and toggles nothing.
    func testSpaceDragPansAndGivesThePressBack() throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 120, height: 90))
        try box.write("s.lua", sceneText)
        let start = Layout(imageWidth: 120, imageHeight: 90, screen: (1920, 1080)).imageRect
        let clock = ManualClock()
        let t0 = clock.t
        let (status, surface, _) = try runStudio("s.lua", clock: clock, script: [
            (t0 + 0.1, key(.space)),                                  // paused...
            (t0 + 0.11, .panStart(x: 200, y: 40, space: true)),       // ...no: it was for the pan
            (t0 + 0.12, .mouseMove(x: 220, y: 45)),
            (t0 + 0.13, .panEnd(x: 240, y: 50)),
            (t0 + 0.5, .panStart(x: 240, y: 50, space: false)),
            (t0 + 0.51, .panEnd(x: 230, y: 50)),
            (t0 + 0.8, .quit),
        ])
        XCTAssertEqual(status, 0)
        let rects = zip(surface.frames, surface.frameRects).map { (at: $0.0.at - t0, rect: $0.1) }
        let afterSpacePan = rects.filter { $0.at > 0.14 && $0.at < 0.5 }
        XCTAssertTrue(afterSpacePan.allSatisfy { $0.rect.x == start.x + 40 && $0.rect.y == start.y + 10 && $0.rect.w == 120 },
                      "\(afterSpacePan.map(\.rect))")
        // Still playing (10 fps): new frames go on being presented.
        let shown = zip(surface.frames, surface.frameRects).filter { $0.0.at - t0 > 0.14 && $0.0.at - t0 < 0.5 }.compactMap(\.0.image)
        XCTAssertGreaterThanOrEqual(Set(shown.map(\.pixels)).count, 3, "the clip plays on after a Space+drag")
        XCTAssertEqual(rects.last?.rect.x, start.x + 30, "the middle drag panned back 10 px")
    }
}
