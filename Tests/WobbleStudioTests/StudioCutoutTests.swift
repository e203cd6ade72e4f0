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

/// Cutouts in the studio, in-process: `C` on the selected region (GrabCut
/// on the worker, its outline drawn), `Alt`/`Shift`+drag strokes refining
/// it, `Shift`+click fitting a new region around the object, undo and
/// redo of each, and `Ctrl+S` writing the mask beside the scene and the
/// `cutout` key into the call.
final class StudioCutoutTests: InProcessStudioCase {
    static let w = 200, h = 150
    static let centre = (x: 100.0, y: 75.0), radius = 22.0

    /// A textured background with a bright disc, and the disc's mask;
    /// `bar`: a dark bar against the disc's right side too (x 122 to 134,
    /// y 60 to 90), inside the region, not in the mask.
    static func picture(bar: Bool = false) -> (RGBAImage, GreyMask) {
        var img = Sandbox.pattern(width: w, height: h, checker: 5)
        if bar {
            for y in 60..<90 { for x in 122..<134 { let i = (y * w + x) * 4; img.pixels[i] = 10; img.pixels[i + 1] = 12 + UInt8(x % 3) * 4; img.pixels[i + 2] = 14 } }
        }
        var mask = GreyMask(width: w, height: h)
        for y in 0..<h {
            for x in 0..<w {
                let dx = Double(x) + 0.5 - centre.x, dy = Double(y) + 0.5 - centre.y
                guard dx * dx + dy * dy <= radius * radius else { continue }
                let i = (y * w + x) * 4
                img.pixels[i] = 250; img.pixels[i + 1] = 240; img.pixels[i + 2] = 40 + UInt8(x % 4) * 10
                mask.pixels[y * w + x] = 255
            }
        }
        return (img, mask)
    }

    static let scene = """
    image("img.png")
    local disc = addSketch{x = 65, y = 40, w = 70, h = 70}
    prepare()
    impulse(disc, 1, 0.5)
    wait(0.5)

    """

    static func iou(_ a: GreyMask, _ b: GreyMask) -> Double {
        var inter = 0, union = 0
        for (x, y) in zip(a.pixels, b.pixels) {
            if x > 127 && y > 127 { inter += 1 }
            if x > 127 || y > 127 { union += 1 }
        }
        return union == 0 ? 0 : Double(inter) / Double(union)
    }

    override func setUpWithError() throws {
        try super.setUpWithError()
        try box.writeImage("img.png", Self.picture().0)
        try box.write("s.lua", Self.scene)
    }

    /// Runs the studio, each wait letting the cutout job and the scene's
    /// run in flight finish first.
    func runCutoutStudio(_ script: [(at: Double, input: StudioInput)], clock: ManualClock,
                         actions: [(at: Double, run: (StudioApp) -> Void)] = []) throws -> (FakeSurface, StudioApp) {
        let (status, surface, app) = try runStudio("s.lua", clock: clock, script: script) { s, app in
            s.settle = { [unowned app] in
                XCTAssertTrue(app.cutouts.waitForJob(upTo: 60), "a cutout job did not end")
                XCTAssertTrue(app.core.recorder.waitForWrite(upTo: 60), "a take's write did not end")
                XCTAssertTrue(app.session.waitForRun(upTo: 60), "a run of the scene did not end")
            }
            s.actions = actions.map { a in (a.at, { [unowned app] in a.run(app) }) }
        }
        XCTAssertEqual(status, 0)
        return (surface, app)
    }

    /// The studio's mask of `kind` (nil: none in memory).
    static func memoryMask(_ app: StudioApp, _ kind: SketchOrigin.Kind) -> MaskImage? {
        if case .memory(let m)? = app.session.currentState(kind)?.parameters.cutout?.source { return m }
        return nil
    }

    func testCCutsOutTheSelectedRegionShowsItsOutlineUndoesAndCtrlSWritesTheMask() throws {
        let truth = Self.picture().1
        let a = imageArea(Self.w, Self.h)
        let clock = ManualClock()
        let t0 = clock.t
        var cut: MaskImage?, undone: MaskImage?? = .none, redone: MaskImage?
        var made = (0, 0)
        let (surface, app) = try runCutoutStudio([
            (t0 + 0.10, key(.space)),                               // paused
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 75)),        // the disc's region
            (t0 + 0.20, key(.c)),
            // A poke runs the scene again: the cutout is not made again.
            (t0 + 0.60, .mouseDown(x: a.x + 80, y: a.y + 60)), (t0 + 0.62, .mouseUp(x: a.x + 90, y: a.y + 60)),
            (t0 + 0.80, key(.z, ctrl: true)),
            (t0 + 0.90, key(.z, shift: true, ctrl: true)),
            (t0 + 1.00, key(.s, ctrl: true)),
            (t0 + 1.30, .quit),
        ], clock: clock, actions: [
            (t0 + 0.50, { app in cut = Self.memoryMask(app, .call(0)); made.0 = app.session.cutoutsMade }),
            (t0 + 0.75, { app in made.1 = app.session.cutoutsMade }),
            (t0 + 0.85, { app in undone = .some(Self.memoryMask(app, .call(0))) }),
            (t0 + 0.95, { app in redone = Self.memoryMask(app, .call(0)) }),
        ])
        let mask = try XCTUnwrap(cut, "C gave the region a mask")
        let iou = Self.iou(mask.mask, truth)
        print("studio C: IoU \(String(format: "%.3f", iou)) with the disc")
        XCTAssertGreaterThanOrEqual(iou, 0.9)
        XCTAssertEqual(app.cutouts.jobsRun, 1)
        XCTAssertEqual(made.0, 1, "the run made the layer of the studio's mask once")
        XCTAssertEqual(made.1, 1, "a poke's rerun found it again")
        XCTAssertEqual(undone, .some(nil), "Ctrl+Z took the cutout away")
        XCTAssertEqual(redone, mask, "Ctrl+Shift+Z gave it back")
        // The outline: magenta dashes on the mask's edge (the disc's) in the frame shown.
        let shown = try XCTUnwrap(surface.picture(before: t0 + 0.6))
        let outline = Set(CutoutEditor.outline(mask.mask))
        var onEdge = 0, offMask = 0, nearDisc = 0
        for y in 0..<shown.height {
            for x in 0..<shown.width {
                let i = (y * shown.width + x) * 4
                guard shown.pixels[i] == 255, shown.pixels[i + 1] == 40, shown.pixels[i + 2] == 200 else { continue }
                if outline.contains(y * shown.width + x) { onEdge += 1 } else { offMask += 1 }
                let d = ((Double(x) + 0.5 - Self.centre.x) * (Double(x) + 0.5 - Self.centre.x)
                         + (Double(y) + 0.5 - Self.centre.y) * (Double(y) + 0.5 - Self.centre.y)).squareRoot()
                if abs(d - Self.radius) <= 3 { nearDisc += 1 }
            }
        }
        XCTAssertGreaterThan(onEdge, 40, "the outline is drawn")
        XCTAssertEqual(offMask, 0, "only on the mask's edge")
        XCTAssertGreaterThan(Double(nearDisc), 0.9 * Double(onEdge), "which is the disc's")
        // Saved: the mask beside the scene, the key in the call.
        let saved = try ImageIO.load(path: box.path("s-masks/disc.png"))
        XCTAssertEqual(stride(from: 0, to: saved.pixels.count, by: 4).map { saved.pixels[$0] }, mask.mask.pixels)
        XCTAssertEqual(try read("s.lua"), Self.scene.replacingOccurrences(of: "h = 70}", with: "h = 70, cutout = \"s-masks/disc.png\"}"))
        XCTAssertTrue(app.statusRows.joined().contains("disc.png written in s-masks") || app.message.contains("disc.png written in s-masks"),
                      app.message)
    }

    /// Undo across a save: the saved cutout is taken out of the call again,
    /// and the save after it removes the mask file (and its strokes) that
    /// the scene no longer names.
    func testCtrlZAfterASaveTakesTheCutoutKeyOutAgain() throws {
        let a = imageArea(Self.w, Self.h)
        let clock = ManualClock()
        let t0 = clock.t
        var saved = ""
        let (_, app) = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.20, key(.c)),
            (t0 + 0.50, key(.s, ctrl: true)),
            (t0 + 0.70, key(.z, ctrl: true)),
            (t0 + 0.80, key(.s, ctrl: true)),
            (t0 + 1.00, .quit),
        ], clock: clock, actions: [
            (t0 + 0.60, { _ in saved = (try? self.read("s.lua")) ?? "" }),
        ])
        XCTAssertEqual(saved, Self.scene.replacingOccurrences(of: "h = 70}", with: "h = 70, cutout = \"s-masks/disc.png\"}"))
        XCTAssertEqual(try read("s.lua"), Self.scene, "undone and saved: the scene as it was")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("s-masks/disc.png")), "the scene no longer names it")
        XCTAssertFalse(app.session.hasUnsavedEdits)
        XCTAssertTrue(app.session.clip?.cutouts.isEmpty ?? false, "no cutout plays")
    }

    func testAltAndShiftStrokesRefineTheCutoutEachAnUndoStep() throws {
        let a = imageArea(Self.w, Self.h)
        let clock = ManualClock()
        let t0 = clock.t
        try box.writeImage("img.png", Self.picture(bar: true).0)
        var first: MaskImage?, carved: MaskImage?, mended: MaskImage?, undone: MaskImage?
        // A vertical stroke down the bar, x = 128.
        let sx = a.x + 128
        let (_, app) = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.20, key(.c)),
            (t0 + 0.50, .strokeStart(x: sx, y: a.y + 50, object: false)),
            (t0 + 0.51, .mouseMove(x: sx, y: a.y + 75)),
            (t0 + 0.52, .mouseUp(x: sx, y: a.y + 100)),
            (t0 + 0.80, .strokeStart(x: sx, y: a.y + 60, object: true)),
            (t0 + 0.81, .mouseUp(x: sx, y: a.y + 90)),
            (t0 + 1.10, key(.z, ctrl: true)),
            (t0 + 1.30, .quit), (t0 + 1.31, .quit),     // unsaved: asked, then quits
        ], clock: clock, actions: [
            (t0 + 0.45, { app in first = Self.memoryMask(app, .call(0)) }),
            (t0 + 0.75, { app in carved = Self.memoryMask(app, .call(0)) }),
            (t0 + 1.05, { app in mended = Self.memoryMask(app, .call(0)) }),
            (t0 + 1.20, { app in undone = Self.memoryMask(app, .call(0)) }),
        ])
        XCTAssertEqual(app.cutouts.jobsRun, 3)
        let m0 = try XCTUnwrap(first), m1 = try XCTUnwrap(carved), m2 = try XCTUnwrap(mended)
        let w = Self.w
        func value(_ m: MaskImage, _ x: Int, _ y: Int) -> UInt8 { m.mask.pixels[y * w + x] }
        XCTAssertGreaterThan(value(m0, 100, 75), 127, "C found the disc")
        XCTAssertGreaterThan(value(m0, 128, 75), 127, "and took the bar for object too")
        XCTAssertEqual(m1.strokes.count, 1)
        XCTAssertEqual(m1.strokes.first?.object, false)
        for y in 60..<90 { for x in 122..<134 { XCTAssertEqual(value(m1, x, y), 0, "the background stroke took the bar out at (\(x), \(y))") } }
        XCTAssertGreaterThanOrEqual(Self.iou(m1.mask, Self.picture().1), 0.9, "the disc stays")
        XCTAssertEqual(m2.strokes.count, 2)
        for y in 62...88 { XCTAssertGreaterThan(value(m2, 128, y), 127, "the later object stroke wins at y \(y)") }
        XCTAssertEqual(undone, m1, "Ctrl+Z undid the last stroke only")
    }

    /// A `Shift` stroke on the region's boundary, on a part of the object
    /// that runs on past it (a bright bar hanging from the disc down to
    /// y 140; the region ends at y 110), grows the region: its handles move
    /// out and the bar comes in (before, the stroke's cutout was cleared
    /// outside the region's curves and the bar past them never came).
    func testAShiftStrokePastTheRegionGrowsItAndBringsThePart() throws {
        let a = imageArea(Self.w, Self.h)
        let clock = ManualClock()
        let t0 = clock.t
        var img = Self.picture().0
        for y in 95 ..< 140 {
            for x in 96 ..< 104 {
                let i = (y * Self.w + x) * 4
                img.pixels[i] = 250; img.pixels[i + 1] = 240; img.pixels[i + 2] = 40 + UInt8(x % 4) * 10
            }
        }
        try box.writeImage("img.png", img)
        var cut: (MaskImage, SketchPoints)?, grown: (MaskImage, SketchPoints)?
        let (_, app) = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.15, .select(x: a.x + 100, y: a.y + 75)),
            (t0 + 0.20, key(.c)),
            (t0 + 0.50, .strokeStart(x: a.x + 100, y: a.y + 106, object: true)),
            (t0 + 0.51, .mouseUp(x: a.x + 100, y: a.y + 112)),
            (t0 + 1.30, .quit), (t0 + 1.31, .quit),
        ], clock: clock, actions: [
            (t0 + 0.45, { app in cut = Self.memoryMask(app, .call(0)).flatMap { m in app.session.currentState(.call(0)).map { (m, $0.points) } } }),
            (t0 + 1.20, { app in grown = Self.memoryMask(app, .call(0)).flatMap { m in app.session.currentState(.call(0)).map { (m, $0.points) } } }),
        ])
        XCTAssertEqual(app.cutouts.jobsRun, 2)
        let (m0, p0) = try XCTUnwrap(cut), (m1, p1) = try XCTUnwrap(grown)
        let w = Self.w
        XCTAssertEqual(m0.mask.pixels[130 * w + 100], 0, "the bar past the region is not in C's cutout")
        XCTAssertLessThanOrEqual(p0.shape.bbox.maxY, 111)
        XCTAssertGreaterThan(p1.shape.bbox.maxY, 125, "the region grew down the bar")
        XCTAssertGreaterThan(m1.mask.pixels[120 * w + 100], 127, "the bar past the old region came in")
        XCTAssertGreaterThan(m1.mask.pixels[75 * w + 100], 127, "the disc stays")
        XCTAssertEqual(m1.mask.pixels[120 * w + 80], 0, "the background beside the bar stays out")
    }

    func testShiftClickFitsARegionAroundTheObjectWithItsCutout() throws {
        let truth = Self.picture().1
        let a = imageArea(Self.w, Self.h)
        let clock = ManualClock()
        let t0 = clock.t
        var added: SketchState?, afterUndo = -1
        let (_, app) = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.20, .strokeStart(x: a.x + 100, y: a.y + 75, object: true)),
            (t0 + 0.21, .mouseUp(x: a.x + 101, y: a.y + 75)),           // a click (under 3 px)
            (t0 + 0.60, key(.z, ctrl: true)),
            (t0 + 0.70, key(.z, shift: true, ctrl: true)),
            (t0 + 0.80, key(.s, ctrl: true)),
            (t0 + 1.10, .quit),
        ], clock: clock, actions: [
            (t0 + 0.50, { app in added = app.session.edits.added.first }),
            (t0 + 0.65, { app in afterUndo = app.session.edits.added.count }),
        ])
        let region = try XCTUnwrap(added, "Shift+click added a region")
        XCTAssertEqual(region.name, "region1")
        XCTAssertEqual(afterUndo, 0, "Ctrl+Z took it away")
        guard case .memory(let m)? = region.parameters.cutout?.source else { return XCTFail("the region has the click's cutout") }
        XCTAssertGreaterThanOrEqual(Self.iou(m.mask, truth), 0.9)
        // The region's boundary holds the object.
        let shape = region.points.shape
        for y in 0..<Self.h {
            for x in 0..<Self.w where truth.pixels[y * Self.w + x] > 127 {
                XCTAssertTrue(shape.contains(Point(Double(x) + 0.5, Double(y) + 0.5)), "(\(x), \(y)) is inside the fitted region")
            }
        }
        XCTAssertEqual(app.cutouts.jobsRun, 1)
        let text = try read("s.lua")
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("local region1 = addSketch{") }, text)
        XCTAssertTrue(line.hasSuffix(", cutout = \"s-masks/region1.png\"}"), String(line))
        XCTAssertEqual(text.replacingOccurrences(of: line + "\n", with: ""), Self.scene, "every other byte stays")
        let saved = try ImageIO.load(path: box.path("s-masks/region1.png"))
        XCTAssertEqual(stride(from: 0, to: saved.pixels.count, by: 4).map { saved.pixels[$0] }, m.mask.pixels)
    }

    /// A small grey mirror just below a grey shelf, its dark stem leaving
    /// its right end towards the handlebar, clutter around both (what a
    /// click on a motorcycle's mirror in a garage meets): 320x240, the
    /// mirror an ellipse at (160, 78) of radii 20 and 12 with a bright rim,
    /// the stem rows 76 to 80 from x 178 to 240, the shelf rows 48 to 59;
    /// the mirror's mask.
    static func mirrorPicture() -> (RGBAImage, GreyMask) {
        let w = 320, h = 240
        var img = RGBAImage(width: w, height: h)
        var mask = GreyMask(width: w, height: h)
        func hash(_ a: Int, _ b: Int) -> Int { ((a &* 73_856_093) ^ (b &* 19_349_663)) & 0xffff }
        let clutter: [(UInt8, UInt8, UInt8)] = [(128, 96, 60), (40, 60, 150), (200, 190, 60), (110, 112, 118), (70, 50, 40), (180, 60, 50), (140, 140, 150)]
        for y in 0..<h {
            for x in 0..<w {
                var c: (UInt8, UInt8, UInt8)
                if (48..<60).contains(y) {
                    c = (120, 124, 132 + UInt8(x % 3))                            // the shelf
                } else {
                    c = clutter[hash(x / 8, y / 8) % clutter.count]               // boxes and tools
                    c.0 &+= UInt8((x + y) % 5)
                }
                let dx = (Double(x) + 0.5 - 160) / 20, dy = (Double(y) + 0.5 - 78) / 12
                let e = dx * dx + dy * dy
                if (178..<240).contains(x) && (76..<81).contains(y) { c = (60, 62, 68) }   // the stem
                if e <= 1 {
                    c = e > 0.75 ? (205, 205, 210) : (150, 142, 128 + UInt8(x % 2) * 6)   // rim, glass
                    mask.pixels[y * w + x] = 255
                }
                let i = (y * w + x) * 4
                img.pixels[i] = c.0; img.pixels[i + 1] = c.1; img.pixels[i + 2] = c.2; img.pixels[i + 3] = 255
            }
        }
        return (img, mask)
    }

    /// The motorcycle's mirror, in small: `Shift`+click on it gives a region
    /// around the mirror alone (not the shelf just above), `Shift`+click
    /// there again the next object without GrabCut again, `Ctrl+Z` the
    /// mirror back; the inspector pins it at the right (its stem) and
    /// `Ctrl+S` saves; the saved scene, rendered headless, sways the mirror
    /// while every pixel of the shelf and the clutter above it stays the
    /// source's in every frame.
    func testShiftClickFindsASmallMirrorBelowAShelfThatSwaysFromItsStem() throws {
        let (picture, truth) = Self.mirrorPicture()
        let w = picture.width, h = picture.height
        try box.writeImage("mirror.png", picture)
        let scene = """
        image("mirror.png") fps(10) enableMotion()
        prepare()
        shake(1.5, 0)
        wait(1)

        """
        try box.write("m.lua", scene)
        let a = imageArea(w, h)
        // Window pixels of an image point (the view may scale the picture).
        func win(_ x: Double, _ y: Double) -> (x: Int, y: Int) {
            (a.x + Int(x * Double(a.w) / Double(w)), a.y + Int(y * Double(a.h) / Double(h)))
        }
        let p1 = win(160.5, 78.5), p2 = win(161.5, 78.5)
        let clock = ManualClock()
        let t0 = clock.t
        var first: MaskImage?, second: MaskImage?, undone: MaskImage?, statusAfterSecond = ""
        let (status, _, app) = try runStudio("m.lua", clock: clock, script: [
            (t0 + 0.10, key(.space)),
            (t0 + 0.20, .strokeStart(x: p1.x, y: p1.y, object: true)),
            (t0 + 0.21, .mouseUp(x: p1.x, y: p1.y)),
            (t0 + 0.40, .strokeStart(x: p2.x, y: p2.y, object: true)),     // there again
            (t0 + 0.41, .mouseUp(x: p2.x, y: p2.y)),
            (t0 + 0.60, key(.z, ctrl: true)),
            (t0 + 0.70, key(.down)), (t0 + 0.71, key(.down)), (t0 + 0.72, key(.down)),
            (t0 + 0.73, key(.down)), (t0 + 0.74, key(.down)), (t0 + 0.75, key(.down)),   // the pin row
            (t0 + 0.76, key(.plus)), (t0 + 0.77, key(.plus)),
            (t0 + 0.78, key(.plus)), (t0 + 0.79, key(.plus)),                             // pin = "right"
            (t0 + 0.90, key(.s, ctrl: true)),
            (t0 + 1.20, .quit),
        ]) { s, app in
            s.settle = { [unowned app] in
                XCTAssertTrue(app.cutouts.waitForJob(upTo: 60), "a cutout job did not end")
                XCTAssertTrue(app.core.recorder.waitForWrite(upTo: 60), "a take's write did not end")
                XCTAssertTrue(app.session.waitForRun(upTo: 60), "a run of the scene did not end")
            }
            s.actions = [
                (t0 + 0.30, { [unowned app] in first = Self.memoryMask(app, .added(0)) }),
                (t0 + 0.50, { [unowned app] in second = Self.memoryMask(app, .added(0)); statusAfterSecond = app.message }),
                (t0 + 0.65, { [unowned app] in undone = Self.memoryMask(app, .added(0)) }),
            ]
        }
        XCTAssertEqual(status, 0)
        let m1 = try XCTUnwrap(first, "Shift+click added a region with a cutout")
        let iou = Self.iou(m1.mask, truth)
        print("studio Shift+click on the mirror: IoU \(String(format: "%.3f", iou)) with the mirror")
        XCTAssertGreaterThanOrEqual(iou, 0.85)
        for y in 0..<60 { for x in 0..<w { XCTAssertEqual(m1.mask.pixels[y * w + x], 0, "(\(x), \(y)) of the shelf is not in the mask") } }
        let m2 = try XCTUnwrap(second)
        XCTAssertNotEqual(m2.mask, m1.mask, "Shift+click there again: another object")
        XCTAssertTrue(statusAfterSecond.contains("object 2 of "), statusAfterSecond)
        XCTAssertEqual(app.cutouts.jobsRun, 1, "the second click ran no GrabCut")
        // Both objects matted (a soft edge, no hard line to show where the object moves).
        XCTAssertTrue(m1.mask.pixels.contains { $0 > 0 && $0 < 255 }, "the first object has a soft edge")
        XCTAssertTrue(m2.mask.pixels.contains { $0 > 0 && $0 < 255 }, "the second object has a soft edge as the first")
        XCTAssertEqual(undone?.mask, m1.mask, "Ctrl+Z: the mirror again")
        let text = try read("m.lua")
        let line = try XCTUnwrap(text.split(separator: "\n").first { $0.hasPrefix("local region1 = addSketch{") }, text)
        XCTAssertTrue(line.hasSuffix(", pin = \"right\", cutout = \"m-masks/region1.png\"}"), String(line))
        // Rendered headless: the shelf and everything above it are the
        // source in every frame; the mirror moves.
        let frames = try headlessFrames("m.lua", count: 10)
        var moved = 0
        for (n, f) in frames.enumerated() {
            XCTAssertEqual(Array(f.pixels[0 ..< 60 * w * 4]), Array(picture.pixels[0 ..< 60 * w * 4]), "frame \(n): the shelf stays")
            for y in 66..<90 { for x in 140..<180 where f.pixels[(y * w + x) * 4] != picture.pixels[(y * w + x) * 4] { moved += 1 } }
        }
        XCTAssertGreaterThan(moved, 200, "the mirror sways")
    }

    func testAStrokeWithoutARegionAndCWithoutASelectionSaySo() throws {
        let a = imageArea(Self.w, Self.h)
        let clock = ManualClock()
        let t0 = clock.t
        var messages: [String] = []
        let (_, app) = try runCutoutStudio([
            (t0 + 0.10, key(.space)),
            (t0 + 0.20, key(.c)),
            (t0 + 0.30, .strokeStart(x: a.x + 10, y: a.y + 10, object: false)),
            (t0 + 0.31, .mouseUp(x: a.x + 30, y: a.y + 10)),
            (t0 + 0.50, .quit),
        ], clock: clock, actions: [
            (t0 + 0.25, { app in messages.append(app.message) }),
            (t0 + 0.40, { app in messages.append(app.message) }),
        ])
        XCTAssertEqual(messages, ["C cuts out the selected region: select one first (Ctrl+click or Tab)",
                                  "Alt+drag marks background in a region's cutout: select the region first (Ctrl+click)"])
        XCTAssertEqual(app.cutouts.jobsRun, 0)
        XCTAssertFalse(app.session.hasUnsavedEdits)
    }
}
