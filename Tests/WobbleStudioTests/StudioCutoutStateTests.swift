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

/// A cutout's state in the studio, in-process (the fake surface, a manual
/// clock): its strokes saved beside its mask and read back by the next
/// session, one mask file per region (the old one removed when the scene
/// no longer names it), a region's handles moved recutting it inside the
/// region, and `Delete` on a selected region.
final class StudioCutoutStateTests: InProcessStudioCase {
    typealias Pic = StudioCutoutTests
    let w = StudioCutoutTests.w, h = StudioCutoutTests.h

    override func setUpWithError() throws {
        try super.setUpWithError()
        try box.writeImage("img.png", Pic.picture(bar: true).0)
        try box.write("s.lua", Pic.scene)
    }

    func runCutoutStudio(_ script: [(at: Double, input: StudioInput)], clock: ManualClock,
                         actions: [(at: Double, run: (StudioApp) -> Void)] = []) throws -> StudioApp {
        let (status, _, app) = try runStudio("s.lua", clock: clock, script: script) { s, app in
            s.settle = { [unowned app] in
                XCTAssertTrue(app.cutouts.waitForJob(upTo: 60), "a cutout job did not end")
                XCTAssertTrue(app.session.waitForRun(upTo: 60), "a run of the scene did not end")
            }
            s.actions = actions.map { a in (a.at, { [unowned app] in a.run(app) }) }
        }
        XCTAssertEqual(status, 0)
        return app
    }

    func masksFolder() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: box.path("s-masks"))) ?? []).sorted()
    }

    func savedMask(_ name: String) throws -> [UInt8] {
        let saved = try ImageIO.load(path: box.path("s-masks/\(name)"))
        return stride(from: 0, to: saved.pixels.count, by: 4).map { saved.pixels[$0] }
    }

    /// The bar (x 122 to 134, y 60 to 90) against the disc: GrabCut from the
    /// region alone takes it; a background stroke down it takes it out.
    func barPixelsInMask(_ m: GreyMask) -> Int {
        var n = 0
        for y in 60..<90 { for x in 122..<134 where m.pixels[y * w + x] > 127 { n += 1 } }
        return n
    }

    /// A background stroke, saved; the studio closed and opened again; an
    /// object stroke then reruns GrabCut with both (the bar stays out), and
    /// the save replaces the region's one mask file and its strokes.
    func testStrokesSurviveASaveAndAReload() throws {
        let a = imageArea(w, h)
        let sx = a.x + 128
        var clock = ManualClock()
        var t0 = clock.t
        var carved: MaskImage?
        _ = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.20, key(.c)),
            (t0 + 0.50, .strokeStart(x: sx, y: a.y + 50, object: false)),
            (t0 + 0.51, .mouseMove(x: sx, y: a.y + 75)),
            (t0 + 0.52, .mouseUp(x: sx, y: a.y + 100)),
            (t0 + 0.80, key(.s, ctrl: true)),
            (t0 + 1.00, .quit),
        ], clock: clock, actions: [
            (t0 + 0.75, { app in carved = Pic.memoryMask(app, .call(0)) }),
        ])
        let m1 = try XCTUnwrap(carved)
        XCTAssertEqual(m1.strokes.count, 1)
        XCTAssertEqual(barPixelsInMask(m1.mask), 0, "the background stroke took the bar out")
        XCTAssertEqual(masksFolder(), ["disc.png", "disc.strokes"])
        XCTAssertEqual(try CutoutStrokesFile.parse(try read("s-masks/disc.strokes")), m1.strokes)
        XCTAssertEqual(try savedMask("disc.png"), m1.mask.pixels)

        // Another session on the saved scene: an object stroke on the disc.
        clock = ManualClock()
        t0 = clock.t
        var mended: MaskImage?
        let app = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.20, .strokeStart(x: a.x + 95, y: a.y + 70, object: true)),
            (t0 + 0.21, .mouseMove(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.22, .mouseUp(x: a.x + 105, y: a.y + 80)),
            (t0 + 0.60, key(.s, ctrl: true)),
            (t0 + 0.90, .quit),
        ], clock: clock, actions: [
            (t0 + 0.50, { app in mended = Pic.memoryMask(app, .call(0)) }),
        ])
        let m2 = try XCTUnwrap(mended, "the stroke refined the saved cutout")
        XCTAssertEqual(app.cutouts.jobsRun, 1)
        XCTAssertEqual(m2.strokes.count, 2, "the saved stroke and the new one")
        XCTAssertEqual(m2.strokes.first, m1.strokes.first)
        XCTAssertEqual(barPixelsInMask(m2.mask), 0, "the saved background stroke still holds the bar out")
        XCTAssertGreaterThanOrEqual(Pic.iou(m2.mask, Pic.picture().1), 0.9)
        XCTAssertEqual(masksFolder(), ["disc.png", "disc.strokes"], "one mask file for the region, replaced")
        XCTAssertEqual(try CutoutStrokesFile.parse(try read("s-masks/disc.strokes")), m2.strokes)
        XCTAssertEqual(try savedMask("disc.png"), m2.mask.pixels)
        XCTAssertEqual(try read("s.lua"), Pic.scene.replacingOccurrences(of: "h = 70}", with: "h = 70, cutout = \"s-masks/disc.png\"}"))
    }

    /// The cut region's lower right corner dragged left into the disc:
    /// GrabCut runs again from the new region (no undo step of its own)
    /// and no pixel of the mask lies outside the region's curves; `Ctrl+Z`
    /// gives the region and its mask back as they were.
    func testMovingACutRegionsHandlesRecutsItInsideTheRegion() throws {
        try box.writeImage("img.png", Pic.picture().0)
        let a = imageArea(w, h)
        let clock = ManualClock()
        let t0 = clock.t
        var first: MaskImage?, recut: SketchState?, undone: SketchState?
        let app = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.20, key(.c)),
            (t0 + 0.50, .mouseDown(x: a.x + 135, y: a.y + 110)),      // rb
            (t0 + 0.51, .mouseMove(x: a.x + 120, y: a.y + 110)),
            (t0 + 0.52, .mouseUp(x: a.x + 100, y: a.y + 110)),
            (t0 + 0.90, key(.z, ctrl: true)),
            (t0 + 1.10, key(.s, ctrl: true)),
            (t0 + 1.30, .quit),
        ], clock: clock, actions: [
            (t0 + 0.45, { app in first = Pic.memoryMask(app, .call(0)) }),
            (t0 + 0.85, { app in recut = app.session.currentState(.call(0)) }),
            (t0 + 1.00, { app in undone = app.session.currentState(.call(0)) }),
        ])
        let m0 = try XCTUnwrap(first)
        let state = try XCTUnwrap(recut)
        XCTAssertEqual(state.points.rb, Point(100, 110))
        guard case .memory(let m1)? = state.parameters.cutout?.source else { return XCTFail("the region keeps a cutout in memory") }
        XCTAssertEqual(app.cutouts.jobsRun, 2, "C, then the recut")
        XCTAssertNotEqual(m1.mask, m0.mask)
        let shape = state.points.shape
        var inside = 0
        for y in 0..<h {
            for x in 0..<w where m1.mask.pixels[y * w + x] != 0 {
                XCTAssertTrue(shape.contains(Point(Double(x) + 0.5, Double(y) + 0.5)), "(\(x), \(y)) of the mask is inside the region")
                inside += 1
            }
        }
        XCTAssertGreaterThan(inside, 800, "the disc's part inside the region is the object")
        // (113, 90): the disc's, outside the moved region (its right edge is at x 110 there).
        XCTAssertFalse(shape.contains(Point(113.5, 90.5)))
        XCTAssertEqual(m0.mask.pixels[90 * w + 113], 255, "the first mask had the disc's lower right")
        XCTAssertEqual(m1.mask.pixels[90 * w + 113], 0, "outside the moved region it is gone")
        // One undo step: the drag and the recut together.
        XCTAssertEqual(undone?.points.rb, Point(135, 110))
        guard case .memory(let back)? = undone?.parameters.cutout?.source else { return XCTFail("undone: the first cutout") }
        XCTAssertEqual(back.mask, m0.mask)
        XCTAssertEqual(try savedMask("disc.png"), m0.mask.pixels)
    }

    /// `Delete` on a region a `Shift`+click added deletes it (`Ctrl+Z`
    /// brings it back); deleted again and saved, the scene has no line for
    /// it and no mask is written; `Delete` on the scene's own region, which
    /// its `impulse` line uses, says so and deletes nothing.
    func testDeleteDeletesTheSelectedRegionUndoesAndSavesWithoutIt() throws {
        try box.writeImage("img.png", Pic.picture().0)
        let a = imageArea(w, h)
        let clock = ManualClock()
        let t0 = clock.t
        var counts: [Int] = [], message = ""
        let app = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.20, .strokeStart(x: a.x + 100, y: a.y + 75, object: true)),
            (t0 + 0.21, .mouseUp(x: a.x + 100, y: a.y + 75)),            // a click: region1
            (t0 + 0.50, key(.delete)),
            (t0 + 0.60, key(.z, ctrl: true)),
            // region1 again, inside it away from its handles (its centre
            // handle is where the disc's is: a click there is the disc's)
            (t0 + 0.68, .select(x: a.x + 112, y: a.y + 62)),
            (t0 + 0.70, key(.delete)),
            (t0 + 0.80, key(.s, ctrl: true)),
            (t0 + 1.00, .select(x: a.x + 67, y: a.y + 108)),             // the scene's disc
            (t0 + 1.10, key(.delete)),
            (t0 + 1.30, .quit),
        ], clock: clock, actions: [
            (t0 + 0.45, { app in counts.append(app.session.edits.added.count) }),
            (t0 + 0.55, { app in counts.append(app.session.edits.added.count) }),
            (t0 + 0.65, { app in counts.append(app.session.edits.added.count) }),
            (t0 + 0.75, { app in counts.append(app.session.edits.added.count) }),
            (t0 + 1.20, { app in message = app.message }),
        ])
        XCTAssertEqual(counts, [1, 0, 1, 0])
        XCTAssertEqual(try read("s.lua"), Pic.scene, "saved without the deleted region")
        XCTAssertEqual(masksFolder(), [], "no mask written for it")
        XCTAssertTrue(message.hasPrefix("cannot delete disc (") && message.hasSuffix("s.lua:2): line 4 uses disc; delete that line first (a touch, impulse or shake: its tick on the timeline), or edit the scene in a text editor"), message)
        XCTAssertEqual(app.session.sketchCalls.count, 1)
    }

    /// `Delete` on the scene's own cut region in the window: the picture
    /// is at once the saved scene's headless frame (paused at frame 5,
    /// handles hidden); `Ctrl+S` takes its line out and removes its mask
    /// and strokes from `s-masks`.
    func testDeleteOnTheScenesOwnRegionShowsTheSavedSceneAndSaveRemovesItsLineAndMask() throws {
        let (img, disc) = Pic.picture()
        try box.writeImage("img.png", img)
        try FileManager.default.createDirectory(atPath: box.path("s-masks"), withIntermediateDirectories: true)
        try Data(try ImageIO.encodeMaskPNG(disc)).write(to: URL(fileURLWithPath: box.path("s-masks/disc.png")))
        try box.write("s-masks/disc.strokes", CutoutStrokesFile.text([CutoutStroke(points: [Point(100, 75)], radius: 6, object: true)]))
        let text = """
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "s-masks/disc.png"}
        local corner = addSketch{x = 150, y = 10, w = 40, h = 40}
        prepare()
        touch(100, 75, 112, 75)
        touch(170, 30, 180, 30)
        wait(0.5)

        """
        try box.write("s.lua", text)
        let original = try headlessFrames("s.lua", count: 6, folder: "orig")[5]
        let a = imageArea(w, h)
        let clock = ManualClock()
        let t0 = clock.t
        var script: [(at: Double, input: StudioInput)] = [(t0, key(.space))]
        for i in 0..<5 { script.append((t0 + 0.05 + Double(i) * 0.01, key(.right))) }
        script += [
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 46)),
            (t0 + 0.20, key(.delete)),
            (t0 + 0.30, key(.h)),
            (t0 + 0.50, key(.s, ctrl: true)),
            (t0 + 0.80, .quit),
        ]
        var said = ""
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: script) { s, app in
            s.settle = { [unowned app] in
                XCTAssertTrue(app.cutouts.waitForJob(upTo: 60), "a cutout job did not end")
                XCTAssertTrue(app.session.waitForRun(upTo: 60), "a run of the scene did not end")
            }
            s.actions = [(t0 + 0.25, { [unowned app] in said = app.message })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(said, "deleted disc (line 2); Ctrl+S takes its line out of the scene, Ctrl+Z brings it back")
        let saved = text.replacingOccurrences(of: "local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = \"s-masks/disc.png\"}\n", with: "")
        XCTAssertEqual(try read("s.lua"), saved)
        XCTAssertEqual(app.message, "saved s.lua: 1 deleted, disc.png removed from s-masks")
        XCTAssertEqual(masksFolder(), [], "its mask and strokes, named by no region now")
        try box.write("saved.lua", saved)
        let expected = try headlessFrames("saved.lua", count: 6)
        XCTAssertEqual(surface.picture(before: t0 + 0.5), expected[5], "the saved scene's frame 5, before the save")
        XCTAssertNotEqual(original, expected[5], "the disc moves at frame 5 in the scene as it was")
    }

    /// `O` and eight clicks 2 pixels outside the disc's edge, then a click
    /// on the first point: the path snaps to the disc and a region fitted
    /// around it is added with that cutout (one undo step); the clicks
    /// poked nothing. `O` with fewer than three points leaves the outline.
    func testOAndClicksAlongTheEdgeMakeAMagneticOutline() throws {
        try box.writeImage("img.png", Pic.picture().0)
        let a = imageArea(w, h)
        let clock = ManualClock()
        let t0 = clock.t
        var script: [(at: Double, input: StudioInput)] = [(t0 + 0.10, key(.space)), (t0 + 0.15, key(.o)),
                                                          (t0 + 0.16, .mouseDown(x: a.x + 10, y: a.y + 10)),
                                                          (t0 + 0.17, .mouseUp(x: a.x + 10, y: a.y + 10)),
                                                          (t0 + 0.18, key(.o)),          // one point: left
                                                          (t0 + 0.20, key(.o))]
        var clicks: [(Int, Int)] = []
        for k in 0..<8 {
            let angle = Double(k) * .pi / 4 + 0.3
            clicks.append((a.x + Int((Pic.centre.x + 24 * cos(angle)).rounded()), a.y + Int((Pic.centre.y + 24 * sin(angle)).rounded())))
        }
        clicks.append(clicks[0])                                              // the first point again: closes
        for (n, c) in clicks.enumerated() {
            let t = t0 + 0.30 + Double(n) * 0.02
            script += [(t, .mouseDown(x: c.0, y: c.1)), (t + 0.01, .mouseUp(x: c.0, y: c.1))]
        }
        script += [(t0 + 0.80, key(.z, ctrl: true)), (t0 + 1.00, .quit), (t0 + 1.01, .quit)]
        var left = "", outlining = false, added: SketchState?, afterUndo = -1
        let app = try runCutoutStudio(script, clock: clock, actions: [
            (t0 + 0.19, { app in left = app.message; outlining = app.cutouts.isOutlining }),
            (t0 + 0.75, { app in added = app.session.edits.added.first }),
            (t0 + 0.90, { app in afterUndo = app.session.edits.added.count }),
        ])
        XCTAssertEqual(left, "outline left (it needs three points or more)")
        XCTAssertFalse(outlining)
        let region = try XCTUnwrap(added, "the outline added a region")
        guard case .memory(let m)? = region.parameters.cutout?.source else { return XCTFail("with the outline's cutout") }
        let iou = Pic.iou(m.mask, Pic.picture().1)
        print("studio magnetic outline: IoU \(String(format: "%.3f", iou)) with the disc")
        XCTAssertGreaterThanOrEqual(iou, 0.85, "a 22-pixel disc: a pixel of the edge is a tenth of the IoU")
        XCTAssertEqual(app.cutouts.jobsRun, 1)
        XCTAssertEqual(afterUndo, 0, "one undo step")
        XCTAssertTrue(app.session.performed.isEmpty, "the clicks poked nothing")
    }
}
