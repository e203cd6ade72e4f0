import Foundation
import XCTest
import WobbleCore
@testable import WobbleScript

/// The inspector's saves in the scene's text: parameters written as
/// literal keys of their `addSketch{...}` (values replaced, keys added,
/// keys that no longer apply removed), locals renamed, added regions as
/// named locals; every other byte kept.
final class SketchParameterSourceTests: XCTestCase {
    func src(_ s: String) -> SketchSource { SketchSource(text: Array(s.utf8)) }

    let rect = SketchPoints(lt: Point(1, 2), rt: Point(4, 2), rb: Point(4, 6), lb: Point(1, 6))

    /// Call 0 of `text`, whose own parameters are `old`, rewritten to `new` (and `name`).
    func rewrite(_ text: String, old: WobbleParameters, new: WobbleParameters, name: String? = nil, oldName: String? = nil) throws -> String {
        let s = src(text)
        let edit = SketchSource.Edit(call: s.calls[0], old: SketchState(points: rect, parameters: old, name: oldName),
                                     new: SketchState(points: rect, parameters: new, name: name ?? oldName))
        return String(decoding: try s.rewritten([edit], added: []), as: UTF8.self)
    }

    func testValuesReplacedKeysAddedAfterTheLastField() throws {
        let text = "local a = addSketch{x = 1, y = 2, w = 3, h = 4, strength = 0.08}  -- a\n"
        var p = WobbleParameters.original
        p.strength = 0.25
        p.duration = 0.6
        XCTAssertEqual(try rewrite(text, old: .original, new: p),
                       "local a = addSketch{x = 1, y = 2, w = 3, h = 4, strength = 0.25, duration = 0.6}  -- a\n")
        // A value equal to what the text gives: nothing changes.
        XCTAssertEqual(try rewrite(text, old: .original, new: .original), text)
    }

    func testASpringDropsDecayAndAThresholdThatFollowsTheModel() throws {
        let text = "addSketch{\n  x = 1, y = 2, w = 3, h = 4,\n  decay = 0.5,\n}\n"
        var old = WobbleParameters.original
        old.decay = 0.5
        var new = WobbleParameters(motion: .spring)
        new.damping = 0.3
        let out = try rewrite(text, old: old, new: new)
        XCTAssertEqual(out, "addSketch{\n  x = 1, y = 2, w = 3, h = 4, motion = \"spring\", damping = 0.3,\n}\n")
        XCTAssertNil(LuaSyntax.problem(Array(out.utf8), name: "t.lua"))
        // Back to classic: motion and damping go, decay 0.7 is the default.
        let back = "addSketch{motion = \"spring\", x = 1, y = 2, w = 3, h = 4, damping = 0.3}"
        XCTAssertEqual(try rewrite(back, old: new, new: .original), "addSketch{motion = \"classic\", x = 1, y = 2, w = 3, h = 4}")
    }

    func testPinSetAndCleared() throws {
        var pinned = WobbleParameters.original
        pinned.pin = .bottom
        XCTAssertEqual(try rewrite("addSketch{x = 1, y = 2, w = 3, h = 4}", old: .original, new: pinned),
                       "addSketch{x = 1, y = 2, w = 3, h = 4, pin = \"bottom\"}")
        XCTAssertEqual(try rewrite("addSketch{x = 1, y = 2, w = 3, h = 4, pin = 'bottom'}", old: pinned, new: .original),
                       "addSketch{x = 1, y = 2, w = 3, h = 4}")
        var top = pinned
        top.pin = .top
        XCTAssertEqual(try rewrite("addSketch{pin = 'bottom', x = 1, y = 2, w = 3, h = 4}", old: pinned, new: top),
                       "addSketch{pin = \"top\", x = 1, y = 2, w = 3, h = 4}")
        // No argument: a constructor with the parameters.
        XCTAssertEqual(try rewrite("addSketch()", old: .original, new: pinned),
                       "addSketch{lt = {1, 2}, rt = {4, 2}, rb = {4, 6}, lb = {1, 6}, pin = \"bottom\"}")
    }

    func testNamesFoundRenamedAndRefused() throws {
        let text = "local body = addSketch{x = 1, y = 2, w = 3, h = 4}\ncloud = addSketch{x = 1, y = 2, w = 3, h = 4}\n"
            + "addSketch{x = 1, y = 2, w = 3, h = 4}\nlocal a, b = addSketch(), 1\nimpulse(cloud, 1, 0)\n"
        let s = src(text)
        XCTAssertEqual(s.calls.map { $0.declaration?.name }, ["body", "cloud", nil, nil])
        XCTAssertEqual(s.calls.map { $0.declaration?.isLocal }, [true, false, nil, nil])
        XCTAssertNil(s.renameProblem(s.calls[0], to: "rocket"))
        XCTAssertEqual(s.renameProblem(s.calls[0], to: "cloud"), "cloud is already used on line 2")
        XCTAssertEqual(s.renameProblem(s.calls[0], to: "2x"), "'2x' is not a Lua name (letters, digits and _, not starting with a digit)")
        XCTAssertEqual(s.renameProblem(s.calls[0], to: "end"), "'end' is a Lua keyword")
        // A name that would hide what the scene calls: saved, it would not run.
        XCTAssertEqual(s.renameProblem(s.calls[0], to: "_ENV"), "'_ENV' is reserved by Lua (_ and capitals)")
        XCTAssertEqual(s.renameProblem(s.calls[0], to: "print"),
                       "'print' is a function or library the scene can call: a local of that name would hide it")
        XCTAssertEqual(s.renameProblem(s.calls[0], to: "addSketch"),
                       "'addSketch' is a function or library the scene can call: a local of that name would hide it")
        XCTAssertEqual(s.renameProblem(s.calls[0], to: "math"),
                       "'math' is a function or library the scene can call: a local of that name would hide it")
        XCTAssertNil(s.renameProblem(s.calls[0], to: "_foam"))
        XCTAssertEqual(s.renameProblem(s.calls[1], to: "puff"),
                       "cloud is used on line 5: rename it there too in a text editor (the studio renames the declaration only)")
        XCTAssertNil(s.renameProblem(s.calls[2], to: "plain"), "a statement of its own gets a local")
        XCTAssertEqual(s.renameProblem(s.calls[3], to: "z"),
                       "line 4: this sketch is part of a longer statement: name it in a text editor")
        let edits = [SketchSource.Edit(call: s.calls[0], old: SketchState(points: rect, name: "body"), new: SketchState(points: rect, name: "rocket")),
                     SketchSource.Edit(call: s.calls[2], old: SketchState(points: rect), new: SketchState(points: rect, name: "plain"))]
        let out = String(decoding: try s.rewritten(edits, added: []), as: UTF8.self)
        XCTAssertEqual(out, text.replacingOccurrences(of: "local body", with: "local rocket")
            .replacingOccurrences(of: "\naddSketch{x", with: "\nlocal plain = addSketch{x"))
        XCTAssertThrowsError(try s.rewritten([SketchSource.Edit(call: s.calls[1], old: SketchState(points: rect, name: "cloud"),
                                                               new: SketchState(points: rect, name: "puff"))], added: []))
    }

    func testAddedRegionsAreNamedLocalsBeforeTheFirstStep() throws {
        let text = "image('a.png')\nlocal region1 = addSketch()\nwait(0.3) -- first\nprepare()\n"
        let s = src(text)
        XCTAssertEqual(s.nextFreeName(), "region2")
        XCTAssertEqual(s.nextFreeName(taken: ["region2"]), "region3")
        var spring = WobbleParameters(motion: .spring)
        spring.strength = 0.2
        let square = SketchPoints.square(centeredAt: Point(50, 50))
        let skew = SketchPoints(lt: Point(1, 1), rt: Point(9, 2), rb: Point(9, 9), lb: Point(1, 9), center: Point(5, 5))
        let out = String(decoding: try s.rewritten([], added: [SketchState(points: square, parameters: spring), SketchState(points: skew, name: "sail")]),
                         as: UTF8.self)
        XCTAssertEqual(out, text.replacingOccurrences(of: "wait(0.3)", with: """
            local region2 = addSketch{x = 5, y = 5, w = 90, h = 90, motion = "spring", strength = 0.2}
            local sail = addSketch{lt = {1, 1}, rt = {9, 2}, rb = {9, 9}, lb = {1, 9}, center = {5, 5}}
            wait(0.3)
            """))
        XCTAssertEqual(SketchSource.formatParameter(0.1 + 0.2), "0.3")
        XCTAssertEqual(SketchSource.formatParameter(2), "2")
        XCTAssertEqual(SketchSource.formatParameter(0.005), "0.005")
    }
}
