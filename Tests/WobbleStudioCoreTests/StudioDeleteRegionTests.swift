import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleTestSupport
@testable import WobbleStudioCore
import WobbleSystem

/// `Delete` (or `Backspace`) on a selected region of the scene's own text,
/// in the studio core on a manual clock: the preview loses it at once,
/// `Ctrl+Z` / `Ctrl+Y` bring it back and take it again, `Ctrl+S` writes
/// the scene without its statement and removes its mask file and strokes
/// when no other region names them; a region the script's other lines use,
/// or one made in a loop or a function, is not deleted and the status says
/// why, nothing changed.
final class StudioDeleteRegionTests: StudioCoreTestCase {
    static let w = 200, h = 150

    /// The disc's mask (a disc of radius 22 at (100, 75)), as a grey picture.
    static var discMask: RGBAImage {
        var img = RGBAImage(width: w, height: h)
        for y in 0..<h {
            for x in 0..<w {
                let dx = Double(x) + 0.5 - 100, dy = Double(y) + 0.5 - 75
                let v: UInt8 = dx * dx + dy * dy <= 22 * 22 ? 255 : 0
                let i = (y * w + x) * 4
                img.pixels[i] = v; img.pixels[i + 1] = v; img.pixels[i + 2] = v; img.pixels[i + 3] = 255
            }
        }
        return img
    }

    /// The checker picture with the disc painted yellow on it (what
    /// GrabCut can find from a stroke on it).
    static var discPicture: RGBAImage {
        var img = Sandbox.pattern(width: w, height: h, checker: 5)
        let mask = discMask
        for i in stride(from: 0, to: img.pixels.count, by: 4) where mask.pixels[i] == 255 {
            img.pixels[i] = 250; img.pixels[i + 1] = 240; img.pixels[i + 2] = 60
        }
        return img
    }

    /// Two cut regions naming the one studio mask, and a bar; each touched.
    static let scene = """
    image("img.png")
    -- the disc, cut out
    local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = "s-masks/disc.png"}
    local twin = addSketch{x = 60, y = 35, w = 80, h = 80, cutout = "s-masks/disc.png"}
    local bar = addSketch{x = 150, y = 20, w = 40, h = 100}
    prepare()
    touch(100, 75, 112, 75)
    touch(170, 70, 182, 70)
    wait(0.5)

    """

    func makeCore(_ text: String, masks: Bool = false) throws -> StudioCore {
        try box.writeImage("img.png", Sandbox.pattern(width: Self.w, height: Self.h, checker: 5))
        if masks {
            try FileManager.default.createDirectory(atPath: box.path("s-masks"), withIntermediateDirectories: true)
            try box.writeImage("s-masks/disc.png", Self.discMask)
            try box.write("s-masks/disc.strokes", CutoutStrokesFile.text([CutoutStroke(points: [Point(100, 75), Point(104, 75)], radius: 6, object: true)]))
        }
        try box.write("s.lua", text)
        let core = startedCore()
        XCTAssertNil(core.session.error.map { "\($0)" })
        return core
    }

    /// The core's preview of frame `k` (the CPU renderer, as a headless render).
    func preview(_ core: StudioCore, _ k: Int) throws -> RGBAImage {
        try core.frames.render(try XCTUnwrap(core.session.frameState(k)))
    }

    /// Frame `k` of `text` run on its own (in `want/`, with the same picture and masks).
    func render(_ text: String, _ k: Int) throws -> RGBAImage {
        try FileManager.default.createDirectory(atPath: box.path("want/s-masks"), withIntermediateDirectories: true)
        try box.writeImage("want/img.png", Sandbox.pattern(width: Self.w, height: Self.h, checker: 5))
        try box.writeImage("want/s-masks/disc.png", Self.discMask)
        try box.write("want/s.lua", text)
        var options = SessionOptions(scenePath: box.path("want/s.lua"))
        options.backend = .cpu
        let s = LiveSession(options: options)
        XCTAssertTrue(s.run(), s.error.map { "\($0)" } ?? "")
        return try s.render(try XCTUnwrap(s.frameState(k)))
    }

    func select(_ core: StudioCore, _ p: Point) {
        core.perform(.select(at: p, radius: 10))
    }

    /// Delete, undo, redo, save: the preview is the saved scene's frame at
    /// once; the file loses the disc's line only (its comment stays); the
    /// mask the twin still names stays. The twin deleted and saved: its
    /// mask and strokes go, and undo stops at that save.
    func testDeleteTakesTheScenesRegionOutAndSaveRemovesItsLineAndThenItsMask() throws {
        let core = try makeCore(Self.scene, masks: true)
        let before = try preview(core, 5)
        XCTAssertEqual(core.session.handleShapes(atFrame: 0).count, 3)
        select(core, Point(100, 46))               // inside the disc's region, off its handles
        XCTAssertEqual(core.inspector.selected, .call(0))
        core.perform(.deleteSelected)
        settle(core)
        XCTAssertEqual(core.message, "deleted disc (line 3); Ctrl+S takes its line out of the scene, Ctrl+Z brings it back")
        XCTAssertNil(core.inspector.selected)
        XCTAssertEqual(core.session.edits.deleted, [0])
        XCTAssertEqual(core.session.handleShapes(atFrame: 0).map { $0.origin?.kind }, [.call(1), .call(2)])
        let saved = Self.scene.replacingOccurrences(of: "local disc = addSketch{x = 65, y = 40, w = 70, h = 70, cutout = \"s-masks/disc.png\"}\n", with: "")
        XCTAssertNotEqual(saved, Self.scene)
        let deleted = try preview(core, 5)
        XCTAssertTrue(deleted == (try render(saved, 5)), "the preview is the saved scene's frame at once")
        XCTAssertFalse(deleted == before, "the disc's wobble is gone from frame 5")

        core.perform(.undo)
        settle(core)
        XCTAssertEqual(core.session.edits.deleted, [])
        XCTAssertTrue(try preview(core, 5) == before, "Ctrl+Z: the disc is back")
        core.perform(.redo)
        settle(core)
        XCTAssertEqual(core.session.edits.deleted, [0])
        XCTAssertEqual(try read("s.lua"), Self.scene, "nothing written before Ctrl+S")

        core.perform(.save)
        settle(core)
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted")
        XCTAssertEqual(try read("s.lua"), saved)
        XCTAssertEqual(try box.list("s-masks"), ["disc.png", "disc.strokes"], "the twin names the mask still")
        XCTAssertFalse(core.session.hasUnsavedEdits)
        XCTAssertTrue(try preview(core, 5) == deleted, "the saved scene plays on as it was shown")

        // The twin (now the first call), with Backspace's command.
        select(core, Point(100, 40))
        XCTAssertEqual(core.inspector.selected, .call(0))
        XCTAssertEqual(StudioKeyMap.command(.backspace, shift: false, ctrl: false, addAt: { .zero }), .deleteSelected)
        core.perform(.deleteSelected)
        settle(core)
        core.perform(.save)
        settle(core)
        XCTAssertEqual(core.message, "saved s.lua: 1 deleted, disc.png removed from s-masks")
        XCTAssertEqual(try read("s.lua"), saved.replacingOccurrences(of: "local twin = addSketch{x = 60, y = 35, w = 80, h = 80, cutout = \"s-masks/disc.png\"}\n", with: ""))
        XCTAssertEqual(try box.list("s-masks"), [], "the mask and its strokes, named by no region now")
        core.perform(.undo)
        XCTAssertEqual(core.message, "undo stops at the save that deleted twin (line 3: local twin = addSketch{x = 60, y = 35, w = 80, h = 80, cutout = \"s-masks/disc.p…): "
                       + "write its line in the scene again to bring it back")
        XCTAssertEqual(core.session.handleShapes(atFrame: 0).count, 1)
        core.finish()
    }

    /// A region whose local a line of the script uses is not deleted (the
    /// status names the line); once that kick is deleted on the timeline,
    /// it is, and the save takes out both lines.
    func testARegionTheScriptUsesIsDeletedOnlyAfterTheLineThatUsesIt() throws {
        let text = """
        image("img.png")
        local disc = addSketch{x = 65, y = 40, w = 70, h = 70}
        local bar = addSketch{x = 150, y = 20, w = 40, h = 100}
        prepare()
        impulse(disc, 1, 0.5)
        touch(170, 70, 182, 70)
        wait(0.5)

        """
        let core = try makeCore(text)
        select(core, Point(100, 46))
        core.perform(.deleteSelected)
        settle(core)
        XCTAssertEqual(core.message, "cannot delete disc (\(box.path("s.lua")):2): line 5 uses disc; delete that line first "
                       + "(a touch, impulse or shake: its tick on the timeline), or edit the scene in a text editor")
        XCTAssertFalse(core.session.hasUnsavedEdits, "nothing deleted")
        XCTAssertEqual(core.session.handleShapes(atFrame: 0).count, 2)

        let tick = try XCTUnwrap(core.ticks.first { $0.label.contains("line 5") }, "\(core.ticks.map(\.label))")
        core.perform(.pressTick(tick))
        core.perform(.deleteSelected)
        settle(core)
        XCTAssertEqual(core.session.edits.removedKicks, [5])
        select(core, Point(100, 46))
        core.perform(.deleteSelected)
        settle(core)
        XCTAssertEqual(core.session.edits.deleted, [0], core.message)
        XCTAssertEqual(core.session.handleShapes(atFrame: 0).count, 1)
        core.perform(.save)
        settle(core)
        XCTAssertNil(core.session.error.map { "\($0)" })
        XCTAssertEqual(try read("s.lua"), text.replacingOccurrences(of: "local disc = addSketch{x = 65, y = 40, w = 70, h = 70}\n", with: "")
                        .replacingOccurrences(of: "impulse(disc, 1, 0.5)\n", with: ""))
        // Undo stops there, saying both what the save deleted and the line to write again.
        core.perform(.undo)
        XCTAssertEqual(core.message, "undo stops at the save that deleted disc (line 2: local disc = addSketch{x = 65, y = 40, w = 70, h = 70}): "
                       + "write its line in the scene again to bring it back; and that wrote the loop, the baked events or the deleted kicks: "
                       + "L, B and the timeline change them again")
        core.finish()
    }

    /// Regions made in a loop, by a function's `return`, or in a statement
    /// with more on its line are not deleted: the status says why and where,
    /// and nothing is pending or written.
    func testARegionBuiltInALoopOrAFunctionIsNotDeleted() throws {
        let text = """
        image("img.png")
        for i = 0, 2 do
          addSketch{x = 10 + 60 * i, y = 10, w = 40, h = 40}
        end
        local function big() return addSketch{x = 20, y = 80, w = 60, h = 60} end
        big()
        local r = addSketch{x = 120, y = 80, w = 40, h = 40} r.damping = 0.5
        prepare()
        wait(0.5)

        """
        let core = try makeCore(text)
        let scene = box.path("s.lua")
        var said: [String] = []
        for p in [Point(70, 12), Point(50, 82), Point(140, 82)] {
            select(core, p)
            XCTAssertNotNil(core.inspector.selected, "\(p)")
            core.perform(.deleteSelected)
            settle(core)
            said.append(core.message)
        }
        XCTAssertEqual(said, [
            "cannot delete the region of \(scene):3: line 3 makes 3 regions (a loop or a function); delete it in a text editor",
            "cannot delete the sketch of \(scene):5: line 5 holds more than its addSketch{...}; delete it in a text editor",
            "cannot delete r (\(scene):7): line 7 holds more than its addSketch{...}; delete it in a text editor",
        ])
        XCTAssertFalse(core.session.hasUnsavedEdits)
        XCTAssertEqual(core.session.handleShapes(atFrame: 0).count, 5)
        core.perform(.save)
        XCTAssertEqual(core.message, "nothing to save")
        XCTAssertEqual(try read("s.lua"), text)
        core.finish()
    }

    func read(_ name: String) throws -> String { try String(contentsOfFile: box.path(name), encoding: .utf8) }
}
