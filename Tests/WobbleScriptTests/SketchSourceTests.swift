import Foundation
import XCTest
import WobbleCore
@testable import WobbleScript

/// The studio's save: `addSketch` calls found in a scene's text and their
/// constructors rewritten, every other byte kept.
final class SketchSourceTests: XCTestCase {
    func src(_ s: String) -> SketchSource { SketchSource(text: Array(s.utf8)) }

    /// Rewrites call `i` of `text` from `old` to `new`.
    func rewrite(_ text: String, call i: Int = 0, old: SketchPoints, new: SketchPoints, added: [SketchPoints] = []) throws -> String {
        let s = src(text)
        let edits = i < 0 ? [] : [(call: s.calls[i], old: old, new: new)]
        return String(decoding: try s.rewritten(edits: edits, added: added), as: UTF8.self)
    }

    func pts(_ lt: (Double, Double), _ rt: (Double, Double), _ rb: (Double, Double), _ lb: (Double, Double),
             center: (Double, Double)? = nil) -> SketchPoints {
        SketchPoints(lt: Point(lt.0, lt.1), rt: Point(rt.0, rt.1), rb: Point(rb.0, rb.1), lb: Point(lb.0, lb.1),
                     center: center.map { Point($0.0, $0.1) })
    }

    func rect(_ x: Double, _ y: Double, _ w: Double, _ h: Double) -> SketchPoints {
        pts((x, y), (x + w, y), (x + w, y + h), (x, y + h))
    }

    func testCornerFormChangesOnlyTheMovedNumbers() throws {
        let text = """
        -- a comment with addSketch{lt = {1, 2}} in it
        local s = addSketch{
          lt = {95, 160}, rt = {225, 172}, rb = {222, 278}, lb = {92, 286},   -- trailing
        }
        prepare()
        """
        var new = pts((95, 160), (225, 172), (222, 278), (92, 286))
        let old = new
        new.rt = Point(245, 187)
        let out = try rewrite(text, old: old, new: new)
        XCTAssertEqual(out, text.replacingOccurrences(of: "rt = {225, 172}", with: "rt = {245, 187}"))
        XCTAssertEqual(src(text).calls.count, 1, "the call in the comment is not a call")
    }

    func testShorthandKeptWhileStillARectangle() throws {
        let text = "addSketch{ x = 190, y = 10, w = 150, h = 100 }  -- forehead\n"
        let out = try rewrite(text, old: rect(190, 10, 150, 100), new: rect(200, 10, 140, 100.25))
        XCTAssertEqual(out, "addSketch{ x = 200, y = 10, w = 140, h = 100.3 }  -- forehead\n")
    }

    func testShorthandBecomesCornersOtherKeysKept() throws {
        let text = "addSketch{motion = \"spring\", x = 10, y = 20, w = 30, h = 40, damping = 0.5}\n"
        var new = rect(10, 20, 30, 40)
        new.rb = Point(45.04, 66)
        let out = try rewrite(text, old: rect(10, 20, 30, 40), new: new)
        XCTAssertEqual(out, "addSketch{motion = \"spring\", lt = {10, 20}, rt = {40, 20}, rb = {45, 66}, lb = {10, 60}, damping = 0.5}\n")
        // x, y, w, h last: no stray separator.
        let last = try rewrite("addSketch{duration = 2; x = 1, y = 2, w = 3, h = 4}", old: rect(1, 2, 3, 4),
                               new: pts((0, 0), (4, 2), (4, 6), (1, 6)))
        XCTAssertEqual(last, "addSketch{duration = 2; lt = {0, 0}, rt = {4, 2}, rb = {4, 6}, lb = {1, 6}}")
        XCTAssertNil(LuaSyntax.problem(Array(out.utf8), name: "t.lua"))
        XCTAssertNil(LuaSyntax.problem(Array(last.utf8), name: "t.lua"))
    }

    func testAPinKeyIsKeptWhenTheShorthandBecomesCorners() throws {
        let text = "local rocket = addSketch{x = 10, y = 20, w = 30, h = 40, pin = \"bottom\", motion = \"spring\"}\n"
        XCTAssertNil(SketchSource.problem(src(text).calls[0]))
        var new = rect(10, 20, 30, 40)
        new.rb = Point(45, 66)
        let out = try rewrite(text, old: rect(10, 20, 30, 40), new: new)
        XCTAssertEqual(out, "local rocket = addSketch{lt = {10, 20}, rt = {40, 20}, rb = {45, 66}, lb = {10, 60}, pin = \"bottom\", motion = \"spring\"}\n")
    }

    func testCenterKeptOmittedOrAdded() throws {
        // Never set: the corners move, no center is written.
        let a = try rewrite("addSketch{x=0,y=0,w=10,h=10}", old: rect(0, 0, 10, 10), new: rect(5, 0, 5, 10))
        XCTAssertEqual(a, "addSketch{x=5,y=0,w=5,h=10}")
        // Set: it stays where it was when a corner moves.
        var old = pts((0, 0), (10, 0), (10, 10), (0, 10), center: (3, 4))
        var new = old
        new.lt = Point(-2, -1)
        let b = try rewrite("addSketch{lt={0,0}, rt={10,0}, rb={10,10}, lb={0,10}, center={x = 3, y = 4}}", old: old, new: new)
        XCTAssertEqual(b, "addSketch{lt={-2,-1}, rt={10,0}, rb={10,10}, lb={0,10}, center={x = 3, y = 4}}")
        // Dragged into being: added after the last field.
        old = rect(0, 0, 10, 10)
        new = old
        new.center = Point(6.5, 5)
        let c = try rewrite("addSketch{x = 0, y = 0, w = 10, h = 10,}", old: old, new: new)
        XCTAssertEqual(c, "addSketch{x = 0, y = 0, w = 10, h = 10, center = {6.5, 5},}")
    }

    func testNoArgumentAndEmptyTable() throws {
        let d = SketchPoints.defaultSketch
        var new = d
        new.lb = Point(12, 120)
        XCTAssertEqual(try rewrite("local s = addSketch ( )\n", old: d, new: new),
                       "local s = addSketch {lt = {10, 10}, rt = {100, 10}, rb = {100, 100}, lb = {12, 120}}\n")
        XCTAssertEqual(try rewrite("addSketch{}", old: d, new: new), "addSketch{lt = {10, 10}, rt = {100, 10}, rb = {100, 100}, lb = {12, 120}}")
        XCTAssertEqual(try rewrite("addSketch{duration = 3}", old: d, new: new),
                       "addSketch{lt = {10, 10}, rt = {100, 10}, rb = {100, 100}, lb = {12, 120}, duration = 3}")
        XCTAssertEqual(try rewrite("addSketch({ x = 1, y = 1, w = 2, h = 2 })", old: rect(1, 1, 2, 2), new: rect(1, 1, 3, 2)),
                       "addSketch({ x = 1, y = 1, w = 3, h = 2 })")
    }

    func testSeveralOnOneLineCommentsAndOddSpacing() throws {
        let text = "addSketch{x=1,y=1,w=5,h=5} --[[ addSketch{x=9} ]] addSketch  {  lt = { 1 , 2 } ; rt={ 3,4 }, --[==[ ]] ]==]\n rb = {x=5, y = 6}, lb = {7,8} } addSketch\"s\"\n"
        let s = src(text)
        XCTAssertEqual(s.calls.count, 3)
        XCTAssertEqual(s.calls.map(\.line), [1, 1, 2])
        XCTAssertNil(SketchSource.problem(s.calls[0]))
        XCTAssertNil(SketchSource.problem(s.calls[1]))
        XCTAssertNotNil(SketchSource.problem(s.calls[2]), "a string argument is not a constructor")
        let old = pts((1, 2), (3, 4), (5, 6), (7, 8))
        var new = old
        new.rb = Point(15, 16)
        new.lt = Point(1, -2.5)
        let out = try rewrite(text, call: 1, old: old, new: new)
        XCTAssertEqual(out, text.replacingOccurrences(of: "{x=5, y = 6}", with: "{x=15, y = 16}")
            .replacingOccurrences(of: "{ 1 , 2 }", with: "{ 1 , -2.5 }"))
    }

    func testComputedAndLockedCalls() throws {
        let text = """
        local w = 30
        for i = 1, 3 do addSketch{x = i * 10, y = 0, w = 5, h = 5} end
        addSketch{x = 1, y = 2, w = w, h = 4}
        local a = addSketch; a{x = 1, y = 1, w = 1, h = 1}
        local t = {x = 1, y = 1, w = 1, h = 1}; addSketch(t)
        obj.addSketch{x = 1, y = 1, w = 1, h = 1}
        addSketch{x = 1, y = 1, w = 1}
        addSketch{x = 1e400, y = 1, w = 1, h = 1}
        addSketch{[1] = 2}
        addSketch{lt = {1, 2}, rt = {3, 4}, rb = {5, 6}, lb = {7, 8}, x = 1, y = 2, w = 3, h = 4}
        """
        let s = src(text)
        XCTAssertEqual(s.calls.map(\.line), [2, 3, 5, 7, 8, 9, 10])
        for c in s.calls { XCTAssertNotNil(SketchSource.problem(c), "line \(c.line)") }
        XCTAssertThrowsError(try s.rewritten(edits: [(s.calls[0], rect(0, 0, 1, 1), rect(0, 0, 2, 2))], added: []))
    }

    func testHostileTextNeverTraps() {
        let texts = ["addSketch{", "addSketch(", "addSketch{x = \"unterminated", "--[[ never closed addSketch{}",
                     "addSketch{x = 1e999999999999, y = 1, w = 1, h = 1}", "addSketch{lt = {1}}", "addSketch{lt = {1, 2, 3}}",
                     "[==[ addSketch{} ]=]", "addSketch{x = - - 1}", "'\\", "addSketch", "\u{0}\u{ff}addSketch{}",
                     String(repeating: "{", count: 5000) + "addSketch{}"]
        for t in texts {
            let s = src(t)
            for c in s.calls { _ = SketchSource.problem(c) }
            _ = try? s.rewritten(edits: s.calls.map { ($0, SketchPoints.defaultSketch, SketchPoints.defaultSketch) }, added: [.defaultSketch])
        }
        XCTAssertTrue(src("--[[ never closed addSketch{}").calls.isEmpty)
        XCTAssertTrue(src("x = 'a\naddSketch{}").calls.isEmpty, "an unterminated string ends the scan")
    }

    func testAddedSketchesBeforeTheFirstTopLevelPrepare() throws {
        let text = """
        local function setup()
          prepare()
        end
        addSketch{x = 1, y = 1, w = 5, h = 5}
        prepare() -- here
        prepare()
        """
        let out = try rewrite(text, call: -1, old: .defaultSketch, new: .defaultSketch, added: [.square(centeredAt: Point(100, 50.04))])
        XCTAssertEqual(out, text.replacingOccurrences(of: "prepare() -- here",
                                                      with: "local region1 = addSketch{x = 55, y = 5, w = 90, h = 90}\nprepare() -- here"))
        let end = try rewrite("image('a.png')", call: -1, old: .defaultSketch, new: .defaultSketch, added: [.square(centeredAt: Point(45, 45))])
        XCTAssertEqual(end, "image('a.png')\nlocal region1 = addSketch{x = 0, y = 0, w = 90, h = 90}\n")
    }

    /// The comment lines right above `prepare()` stay with it: an added
    /// region goes above them (a blank line or code ends the comment; a
    /// `--` line inside a long string is no comment).
    func testAnAddedRegionGoesAboveTheCommentOfPrepare() throws {
        let text = """
        image('a.png')

          -- set the regions up
          -- (all of them)
          prepare()
        wait(1)
        """
        let out = try rewrite(text, call: -1, old: .defaultSketch, new: .defaultSketch, added: [.square(centeredAt: Point(45, 45))])
        XCTAssertEqual(out, text.replacingOccurrences(of: "  -- set the regions up",
                                                      with: "  local region1 = addSketch{x = 0, y = 0, w = 90, h = 90}\n  -- set the regions up"))
        let inString = "local s = [[\n-- not a comment\n]]\nprepare()\n"
        let out2 = try rewrite(inString, call: -1, old: .defaultSketch, new: .defaultSketch, added: [.square(centeredAt: Point(45, 45))])
        XCTAssertEqual(out2, "local s = [[\n-- not a comment\n]]\nlocal region1 = addSketch{x = 0, y = 0, w = 90, h = 90}\nprepare()\n")
    }

    func testNumbersWithAtMostOneDecimal() {
        XCTAssertEqual(SketchSource.format(12), "12")
        XCTAssertEqual(SketchSource.format(12.04), "12")
        XCTAssertEqual(SketchSource.format(12.06), "12.1")
        XCTAssertEqual(SketchSource.format(-0.01), "0")
        XCTAssertEqual(SketchSource.format(-3.25), "-3.3")
    }
}

/// The rewritten text runs, and its sketches read back the new points.
final class SketchSourceRunTests: XCTestCase {
    func testRewrittenSceneRunsWithTheNewPoints() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wobble-rewrite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let text = """
        addSketch{x = 10, y = 10, w = 40, h = 30} --[[ a ]] addSketch() ;
        addSketch{ lt = {60, 10}, rt = {90, 12}, rb = {92, 40}, lb = {58, 44}, center = {70, 25}, duration = 3 }
        for i = 1, 2 do addSketch{x = i, y = 1, w = 1, h = 1} end
        local got = {}
        for _, s in ipairs(sketchModels()) do got[#got + 1] = string.format('%g,%g %g,%g %g,%g', s.lt.x, s.lt.y, s.rb.x, s.rb.y, s.center.x, s.center.y) end
        assert(table.concat(got, ' | ') == EXPECTED, table.concat(got, ' | '))
        prepare()
        local m = wobbleModels()
        assert(#m == 6 and m[6].lt.x == 55 and m[6].rb.y == 145, 'the added sketch is the sixth model')
        """
        let src = SketchSource(text: Array(text.utf8))
        XCTAssertEqual(src.calls.count, 4)
        var a = SketchPoints(lt: Point(10, 10), rt: Point(50, 10), rb: Point(50, 40), lb: Point(10, 40))
        a.rb = Point(55.5, 42)   // no longer a rectangle: corner form
        var b = SketchPoints.defaultSketch
        b.center = Point(50, 50)
        let c0 = SketchPoints(lt: Point(60, 10), rt: Point(90, 12), rb: Point(92, 40), lb: Point(58, 44), center: Point(70, 25))
        var c = c0
        c.lt = Point(61, 11)
        let out = try src.rewritten(edits: [(src.calls[0], SketchPoints(lt: Point(10, 10), rt: Point(50, 10), rb: Point(50, 40), lb: Point(10, 40)), a),
                                            (src.calls[1], .defaultSketch, b), (src.calls[2], c0, c)],
                                    added: [.square(centeredAt: Point(100, 100))])
        let expected = "10,10 55.5,42 31.375,25.5 | 10,10 100,100 50,50 | 61,11 92,40 70,25 | 1,1 2,2 1.5,1.5 | 2,1 3,2 2.5,1.5"
        let scene = dir.appendingPathComponent("s.lua").path
        try Data(("EXPECTED = '\(expected)'\n" + String(decoding: out, as: UTF8.self)).utf8).write(to: URL(fileURLWithPath: scene))
        var o = ScriptOptions(scriptPath: scene) { _ in (200, 200) }
        o.imageOverride = (200, 200)
        XCTAssertNoThrow(try ScriptHost(options: o).run())
        // Every other byte stays.
        let rest = String(decoding: out, as: UTF8.self)
        XCTAssertTrue(rest.contains("--[[ a ]] addSketch {lt = {10, 10}, rt = {100, 10}, rb = {100, 100}, lb = {10, 100}, center = {50, 50}} ;") ||
                      rest.contains("--[[ a ]] addSketch{lt = {10, 10}, rt = {100, 10}, rb = {100, 100}, lb = {10, 100}, center = {50, 50}} ;"), rest)
        XCTAssertTrue(rest.contains("for i = 1, 2 do addSketch{x = i, y = 1, w = 1, h = 1} end"))
    }

    // MARK: Deleting a region's statement

    /// What deleting call `i` of `text` gives: the text without it, or the problem.
    func deleting(_ text: String, call i: Int = 0, ignoring: Set<Int> = []) -> Result<String, SketchSource.DeletionProblem> {
        let s = SketchSource(text: Array(text.utf8))
        return s.deletion(s.calls[i], ignoringLines: ignoring).flatMap { r in
            var cut = Array(text.utf8)
            cut.removeSubrange(r)
            let out = String(decoding: cut, as: UTF8.self)
            // (A save takes the ignored lines out first.)
            if ignoring.isEmpty {
                let rewritten = (try? s.rewritten([], added: [], deleted: [s.calls[i]])).map { String(decoding: $0, as: UTF8.self) }
                XCTAssertEqual(rewritten, out, "rewritten takes out the same bytes")
            }
            return .success(out)
        }
    }

    /// A statement alone on its lines goes whole: a local, an unnamed
    /// call, a `;` and a comment after it, a constructor over several
    /// lines, one inside a block; the comment above and every other byte stay.
    func testADeletedRegionsStatementGoesWithItsWholeLines() throws {
        XCTAssertEqual(try deleting("image(\"a.png\")\n-- the cap\nlocal cap = addSketch{x = 1, y = 2, w = 3, h = 4}\nprepare()\n").get(),
                       "image(\"a.png\")\n-- the cap\nprepare()\n")
        XCTAssertEqual(try deleting("addSketch{x = 1, y = 2, w = 3, h = 4}; -- gone\nprepare()").get(), "prepare()")
        XCTAssertEqual(try deleting("local a = addSketch()\n  local cap = addSketch{\n    x = 1, y = 2,\n    w = 3, h = 4,\n  }\nwait(1)\n", call: 1).get(),
                       "local a = addSketch()\nwait(1)\n")
        XCTAssertEqual(try deleting("if big then\n  local r = addSketch{x = 1, y = 2, w = 3, h = 4}\nend\n").get(), "if big then\nend\n")
        XCTAssertEqual(try deleting("local r = addSketch{x = 1, y = 2, w = 3, h = 4}").get(), "", "the last line, without a newline")
        // A field of another table named like the local is no use of it.
        XCTAssertEqual(try deleting("local r = addSketch()\nprint(t.r, t:r())\n").get(), "print(t.r, t:r())\n")
    }

    /// A statement that holds more than the call or shares its lines, a
    /// global, and a local another line names are not deleted (uses on
    /// lines a save takes out too do not count).
    func testARegionTheStudioCannotTakeOutSaysWhy() {
        XCTAssertEqual(deleting("local r = addSketch() prepare()\n"), .failure(.notAlone(line: 1)))
        XCTAssertEqual(deleting("prepare() addSketch()\n"), .failure(.notAlone(line: 1)))
        XCTAssertEqual(deleting("local t = {\n  addSketch(),\n}\n"), .failure(.notAlone(line: 2)))
        XCTAssertEqual(deleting("local t = {\n  1,\n  addSketch()\n}\n"), .failure(.notAlone(line: 3)))
        XCTAssertEqual(deleting("local function f()\n  return\n  addSketch()\nend\n"), .failure(.notAlone(line: 3)))
        XCTAssertEqual(deleting("local r = addSketch{x = 1, y = 2, w = 3, h = 4}\n  :contains(1, 2)\n"), .failure(.notAlone(line: 1)))
        XCTAssertEqual(deleting("local r = addSketch() or x\n"), .failure(.notAlone(line: 1)))
        XCTAssertEqual(deleting("local r = addSketch() --[[ a long\ncomment ]] prepare()\n"), .failure(.notAlone(line: 1)))
        XCTAssertEqual(deleting("--[[ a long\ncomment ]] local r = addSketch()\n"), .failure(.notAlone(line: 2)))
        XCTAssertEqual(deleting("cap = addSketch()\n"), .failure(.notLocal("cap")))
        XCTAssertEqual(deleting("local cap = addSketch()\nprepare()\nimpulse(cap, 1, 0.5)\ncap.damping = 2\n"), .failure(.used("cap", line: 3)))
        XCTAssertEqual(deleting("local cap = addSketch()\nprepare()\nimpulse(cap, 1, 0.5)\ncap.damping = 2\n", ignoring: [3]),
                       .failure(.used("cap", line: 4)))
        XCTAssertEqual(try? deleting("local cap = addSketch()\nimpulse(cap, 1, 0.5)\n", ignoring: [2]).get(), "impulse(cap, 1, 0.5)\n",
                       "the use on an ignored line stays for its own edit to take out")
        XCTAssertEqual(SketchSource.DeletionProblem.used("cap", line: 3).reason,
                       "line 3 uses cap; delete that line first (a touch, impulse or shake: its tick on the timeline), or edit the scene in a text editor")
        let s = SketchSource(text: Array("cap = addSketch()\n".utf8))
        XCTAssertThrowsError(try s.rewritten([], added: [], deleted: [s.calls[0]])) { e in
            XCTAssertEqual("\(e)", "cannot delete cap: cap is not a local (another file may use it); delete its line in a text editor")
        }
    }

    /// A table's key named like the region (`h = 80` in another region's
    /// constructor, `{h = 1}`) and another `local h` are not uses of it;
    /// a read of it, an assignment to it (also in a block inside a table),
    /// a value `{h}` or `{k = h}` are.
    func testATableKeyOrAnotherLocalOfTheSameNameIsNoUse() throws {
        let text = "local h = addSketch{x = 1, y = 2, w = 3, h = 4}\nlocal b = addSketch{x = 10, y = 20, w = 30, h = 80}\nlocal t = {h = 1; w = 2, {h = 3}}\nlocal h = 5\n"
        XCTAssertEqual(try? deleting(text).get(), "local b = addSketch{x = 10, y = 20, w = 30, h = 80}\nlocal t = {h = 1; w = 2, {h = 3}}\nlocal h = 5\n")
        XCTAssertEqual(deleting("local h = addSketch()\nprint(h)\n"), .failure(.used("h", line: 2)))
        XCTAssertEqual(deleting("local h = addSketch()\nlocal t = {h}\n"), .failure(.used("h", line: 2)))
        XCTAssertEqual(deleting("local h = addSketch()\nlocal t = {k = h}\n"), .failure(.used("h", line: 2)))
        XCTAssertEqual(deleting("local h = addSketch()\nlocal t = {f = function() local a; a, h = 1, 2 end}\n"), .failure(.used("h", line: 2)))
        XCTAssertEqual(deleting("local h = addSketch()\nif h == 1 then end\n"), .failure(.used("h", line: 2)))
        XCTAssertEqual(deleting("local h = addSketch()\nlocal h = h\n"), .failure(.used("h", line: 2)), "the value is the region")
    }

    /// A statement after a line that ends with `;` starts a statement: the
    /// region on the next lines (a comment inside its braces and after
    /// them) is deleted with its whole lines.
    func testARegionAfterALineEndingWithASemicolonIsDeleted() throws {
        let text = "local one = addSketch{x = 1, y = 2, w = 3, h = 4};\nlocal two = addSketch{ -- inline\n  x = 10, y = 20, -- position\n  w = 30, h = 40,\n} -- after\nprepare()\n"
        XCTAssertEqual(try? deleting(text, call: 1).get(), "local one = addSketch{x = 1, y = 2, w = 3, h = 4};\nprepare()\n")
        XCTAssertEqual(try? deleting(text).get(), "local two = addSketch{ -- inline\n  x = 10, y = 20, -- position\n  w = 30, h = 40,\n} -- after\nprepare()\n")
    }
}
