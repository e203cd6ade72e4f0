import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleScript
@testable import WobbleEngine

/// Part 2 of the studio without a window: the calls that made the
/// sketches, shapes dragged (overrides), added sketches, saving.
final class SketchEditTests: SessionTestCase {
    /// A flat 200×150 picture: room for the sketches.
    override func image() -> RGBAImage {
        RGBAImage(width: 200, height: 150, pixels: [UInt8](repeating: 200, count: 200 * 150 * 4))
    }

    static let text = """
    image("img.png")
    local a = addSketch{x = 10, y = 10, w = 50, h = 40}   -- a
    for i = 1, 2 do addSketch{x = 80 + i * 30, y = 10, w = 20, h = 20} end
    addSketch() addSketch{lt = {10, 80}, rt = {60, 80}, rb = {60, 120}, lb = {10, 120}, center = {30, 100}}
    local m = prepare()
    impulse(a, 1, 0)
    wait(0.3)

    """

    func testCallsAreRecordedAndMatchedToTheirText() throws {
        let path = try scene(SketchEditTests.text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.sketchCalls.map(\.line), [2, 3, 3, 4, 4])
        XCTAssertNotNil(s.editableCall(0).call)
        XCTAssertEqual(s.editableCall(1).problem, "\(path):3: this sketch is computed; edit the script")
        XCTAssertEqual(s.editableCall(2).problem, "\(path):3: this sketch is computed; edit the script")
        XCTAssertEqual(s.editableCall(3).call?.argument, .absent)
        XCTAssertNotNil(s.editableCall(4).call)
        // The live models know their calls.
        let shapes = s.handleShapes(atFrame: 0)
        XCTAssertEqual(shapes.map { $0.origin?.kind }, (0..<5).map { .call($0) })
        XCTAssertEqual(shapes.map { $0.origin?.line }, [2, 3, 3, 4, 4])
    }

    func testOverridesChangeTheShapeImpulsesStillApplyAndSaveWritesOnlyThem() throws {
        let path = try scene(SketchEditTests.text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        let before = s.frameState(5)?.regions.first?.shape
        var p = s.sketchCalls[0].points
        p.rt = Point(p.rt.x + 20, p.rt.y + 15)
        s.sketchOverrides[0] = p
        var q = s.sketchCalls[4].points
        q.lt = Point(5, 75)
        s.sketchOverrides[4] = q
        s.addedSketches = [.square(centeredAt: Point(150, 100))]
        XCTAssertTrue(s.run())
        let after = try XCTUnwrap(s.frameState(5)?.regions.first)
        XCTAssertEqual(after.shape.rt, Point(80, 25))
        XCTAssertNotEqual(after.shape, before)
        XCTAssertGreaterThan(after.peak, 0, "the scene's impulse still applies")
        XCTAssertEqual(s.handleShapes(atFrame: 0).count, 6, "the added sketch is prepared with the others")
        XCTAssertEqual(s.handleShapes(atFrame: 0).last?.origin?.kind, .added(0))

        let saved = try s.saveEdits()
        XCTAssertEqual(saved.edited, 2)
        XCTAssertEqual(saved.added, 1)
        XCTAssertFalse(s.hasUnsavedEdits)
        let out = try String(contentsOfFile: path, encoding: .utf8)
        let expected = SketchEditTests.text
            .replacingOccurrences(of: "addSketch{x = 10, y = 10, w = 50, h = 40}",
                                  with: "addSketch{lt = {10, 10}, rt = {80, 25}, rb = {60, 50}, lb = {10, 50}}")
            .replacingOccurrences(of: "lt = {10, 80}, rt", with: "lt = {5, 75}, rt")
            .replacingOccurrences(of: "local m = prepare()",
                                  with: "local region1 = addSketch{x = 105, y = 55, w = 90, h = 90}\nlocal m = prepare()")
        XCTAssertEqual(out, expected)
        // The saved scene runs to the same shapes (the picture does not jump).
        XCTAssertEqual(s.frameState(5)?.regions.first?.shape.rt, Point(80, 25))
        XCTAssertEqual(s.handleShapes(atFrame: 0).count, 6)
        XCTAssertEqual(s.handleShapes(atFrame: 0)[4].shape.center, Point(30, 100), "a center that was set stays")
    }

    func testASaveByAnotherProgramIsMergedUnlessItChangedTheSameConstructor() throws {
        let path = try scene(SketchEditTests.text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var p = s.sketchCalls[0].points
        p.lt = Point(0, 0)
        s.sketchOverrides[0] = p
        // A comment appended elsewhere: the edit goes into the new text.
        let commented = SketchEditTests.text + "-- edited elsewhere\n"
        try commented.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertNil(s.mergeProblem())
        try s.saveEdits(runAfter: false)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8),
                       commented.replacingOccurrences(of: "addSketch{x = 10, y = 10, w = 50, h = 40}",
                                                      with: "addSketch{lt = {0, 0}, rt = {60, 10}, rb = {60, 50}, lb = {10, 50}}"))
        XCTAssertFalse(s.hasUnsavedEdits)

        // The same constructor changed on disk too: refused, named, nothing written.
        try SketchEditTests.text.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(s.run())
        p = s.sketchCalls[0].points
        p.lt = Point(1, 1)
        s.sketchOverrides[0] = p
        let changed = SketchEditTests.text.replacingOccurrences(of: "w = 50, h = 40}", with: "w = 55, h = 40}")
        try changed.write(toFile: path, atomically: true, encoding: .utf8)
        let expected = "not saved: a (\(path):2) was changed on disk as well; the edits stay pending (Ctrl+Z undoes them)"
        XCTAssertEqual(s.mergeProblem(), expected)
        XCTAssertThrowsError(try s.saveEdits()) { e in XCTAssertEqual("\(e)", expected) }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), changed, "nothing written")
        XCTAssertTrue(s.hasUnsavedEdits)
        // Undoing the edit leaves nothing to save.
        s.sketchOverrides = [:]
        XCTAssertNil(s.editBase)
    }

    /// A call edited only after another program changed it (and the scene
    /// ran again) was edited on the new text: no conflict, though another
    /// call's edit is older than that change.
    func testACallEditedAfterTheReloadOfItsChangeIsNoConflict() throws {
        let path = try scene(SketchEditTests.text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        // A pending edit of the last sketch (the corner form, call 4).
        var p = s.sketchCalls[4].points
        p.lt = Point(5, 75)
        s.sketchOverrides[4] = p
        // Another program changes `a`; the scene runs again (the studio reloads).
        let changed = SketchEditTests.text.replacingOccurrences(of: "w = 50, h = 40}", with: "w = 55, h = 40}")
        try changed.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(s.run())
        // Now `a` is edited, on the text with w = 55.
        var q = s.sketchCalls[0].points
        XCTAssertEqual(q.rt, Point(65, 10))
        q.lt = Point(0, 0)
        s.sketchOverrides[0] = q
        XCTAssertNil(s.mergeProblem())
        try s.saveEdits(runAfter: false)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8),
                       changed.replacingOccurrences(of: "addSketch{x = 10, y = 10, w = 55, h = 40}",
                                                    with: "addSketch{lt = {0, 0}, rt = {65, 10}, rb = {65, 50}, lb = {10, 50}}")
                           .replacingOccurrences(of: "lt = {10, 80}", with: "lt = {5, 75}"))
    }

    /// Another program inserts an `addSketch` before an edited one: the
    /// edit follows its call (the preview and the save have it on `a`, not
    /// on the new sketch); an edit the new text makes itself is no edit.
    func testAnEditFollowsItsCallWhenAnotherProgramInsertsOneBeforeIt() throws {
        let path = try scene(SketchEditTests.text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var p = s.sketchCalls[0].points
        p.lt = Point(0, 0)
        s.sketchOverrides[0] = p
        var q = s.sketchCalls[4].points
        q.lt = Point(5, 75)
        s.sketchOverrides[4] = q
        let inserted = SketchEditTests.text.replacingOccurrences(
            of: "local a = ", with: "addSketch{x = 150, y = 100, w = 30, h = 30}\nlocal a = ")
        try inserted.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.sketchCalls.count, 6)
        XCTAssertEqual(s.edits.calls.keys.sorted(), [1, 5], "the edits moved with their calls")
        let shapes = s.handleShapes(atFrame: 0)
        XCTAssertEqual(shapes.first { $0.origin?.kind == .call(0) }?.shape.lt, Point(150, 100), "the new sketch is as written")
        XCTAssertEqual(shapes.first { $0.origin?.kind == .call(1) }?.shape.lt, Point(0, 0), "a has its edit")
        XCTAssertNil(s.mergeProblem())
        try s.saveEdits(runAfter: false)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8),
                       inserted.replacingOccurrences(of: "addSketch{x = 10, y = 10, w = 50, h = 40}",
                                                     with: "addSketch{lt = {0, 0}, rt = {60, 10}, rb = {60, 50}, lb = {10, 50}}")
                           .replacingOccurrences(of: "lt = {10, 80}", with: "lt = {5, 75}"))

        // Another program writes what the edit is: nothing is left to save.
        XCTAssertTrue(s.run())
        var r = s.sketchCalls[1].points
        r.lt = Point(2, 2)
        s.sketchOverrides[1] = r
        let same = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "lt = {0, 0}", with: "lt = {2, 2}")
        try same.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertTrue(s.run())
        XCTAssertFalse(s.hasUnsavedEdits)
        XCTAssertNil(s.editBase)
    }

    func testSketchesFromAnotherFileOrPcallAreLocked() throws {
        try "return function() addSketch{x = 1, y = 1, w = 9, h = 9} end\n"
            .write(toFile: dir.appendingPathComponent("mod.lua").path, atomically: true, encoding: .utf8)
        let path = try scene("""
        image("img.png")
        require("mod")()
        pcall(addSketch, {x = 5, y = 5, w = 9, h = 9})
        local addSketch = function(t) return _G.addSketch(t) end
        addSketch{x = 1, y = 1, w = 2, h = 2}
        """)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run(), s.error?.message ?? "")
        XCTAssertEqual(s.sketchCalls.count, 3)
        XCTAssertTrue(s.editableCall(0).problem?.contains("mod.lua:1: this sketch is made in another file") ?? false, "\(s.editableCall(0))")
        XCTAssertEqual(s.editableCall(1).problem, "\(path): this sketch is computed; edit the script")
        XCTAssertEqual(s.editableCall(2).problem, "\(path):4: this sketch is computed; edit the script")
    }

    func testACenterNeverSetFollowsTheCornersOneSetStays() throws {
        let path = try scene(SketchEditTests.text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var a = s.sketchCalls[0].points      // x = 10, y = 10, w = 50, h = 40: no center
        XCTAssertNil(a.center)
        a.rb = Point(80, 70)
        s.sketchOverrides[0] = a
        var c = s.sketchCalls[4].points      // center = {30, 100}
        c.rb = Point(90, 140)
        s.sketchOverrides[4] = c
        XCTAssertTrue(s.run())
        let shapes = s.handleShapes(atFrame: 0)
        XCTAssertEqual(shapes[0].shape.center, Point((10 + 60 + 80 + 10) / 4.0, (10 + 10 + 70 + 50) / 4.0))
        XCTAssertEqual(shapes[4].shape.center, Point(30, 100))
        try s.saveEdits()
        let out = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(out.contains("local a = addSketch{lt = {10, 10}, rt = {60, 10}, rb = {80, 70}, lb = {10, 50}}   -- a"), out)
        XCTAssertTrue(out.contains("rb = {90, 140}, lb = {10, 120}, center = {30, 100}}"), out)
    }
}
