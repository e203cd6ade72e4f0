import XCTest
@testable import WobbleScript
import WobbleCore

/// The host machinery: stack balance, result counts, handles and the GC.
final class HostTests: XCTestCase {
    func testSetUpAndCallsLeaveABalancedStack() throws {
        let f = SceneFixture()
        let session = ScriptSession(options: f.options(""))
        let vm = try XCTUnwrap(LuaVM(memoryLimit: 64 << 20))
        vm.connect(session)
        defer { vm.close() }
        let lua = vm.stack
        XCTAssertNil(session.setUp(lua))
        XCTAssertEqual(lua.top, 0)
        XCTAssertTrue(lua.loadString("""
            image('cat.png')
            local s = addSketch{x = 0, y = 0, w = 10, h = 10}
            local _ = s.lt, s:contains(1, 1), tostring(s), sketchModels()
            prepare() impulse(1, 1, 0) wobbleModels() wait(0.1)
            pcall(impulse, 'x') pcall(addSketch, {bad = 1})
            """, name: "=test"))
        XCTAssertTrue(lua.protectedCall(arguments: 0, results: 0), lua.string(-1) ?? "")
        XCTAssertEqual(lua.top, 0)
        XCTAssertFalse(lua.loadString("error('x')", name: "=test") && lua.protectedCall(arguments: 0, results: 0))
        XCTAssertEqual(lua.string(-1), "test:1: x")
        XCTAssertEqual(lua.takeTraceback()?.hasPrefix("stack traceback:"), true)
        lua.pop()
        XCTAssertEqual(lua.top, 0)
        XCTAssertGreaterThan(vm.memoryUsed, 0)
    }

    func testResultCounts() throws {
        let f = SceneFixture()
        try f.run("""
            assert(select('#', image('cat.png')) == 2)
            assert(select('#', size()) == 2 and select('#', fps()) == 1 and select('#', time()) == 1)
            assert(select('#', output('o.gif')) == 0 and select('#', clear()) == 0 and select('#', reset()) == 0)
            assert(select('#', addSketch()) == 1 and select('#', sketchModels()) == 1 and select('#', prepare()) == 1)
            assert(select('#', wobbleModels()) == 1 and select('#', impulse(nil, 1, 0)) == 0)
            assert(select('#', touch(0, 0, 1, 1)) == 1 and select('#', enableMotion()) == 0)
            assert(select('#', shake(0, 0)) == 0 and select('#', overlay(true)) == 0 and select('#', wait(0)) == 0)
            assert(select('#', untilStill(0)) == 1)
            """)
    }

    func testHandlesKeepTheirIdentityAcrossCollections() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            local s = addSketch()
            for i = 1, 50 do addSketch{x = i, y = i, w = 5, h = 5} end
            collectgarbage() collectgarbage()
            assert(rawequal(sketchModels()[1], s))
            local set = {[s] = true}
            assert(set[sketchModels()[1]])
            -- handles of the other sketches were collected; new ones still work
            local h = sketchModels()[2]
            assert(h.lt.x == 1)
            h.lt = {0, 0}
            collectgarbage()
            assert(sketchModels()[2].lt.x == 0)
            local ws = prepare()
            ws = nil
            collectgarbage() collectgarbage()
            assert(wobbleModels()[2].lt.x == 0)
            impulse(s, 1, 0)
            assert(wobbleModels()[1].amplitude == 1)
            """)
    }

    func testManyRunsOfOneHostAreIndependent() throws {
        let f = SceneFixture()
        let host = ScriptHost(options: f.options(withImage + "x = (x or 0) + 1 assert(x == 1) addSketch() wait(0.1)"))
        for _ in 0..<3 {
            let r = try host.run()
            XCTAssertEqual(r.clip.timeline.snapshot(at: r.clip.duration).sketches.count, 1)
            XCTAssertEqual(r.clip.frameCount, 3)
        }
    }

    func testCoroutinesCanCallTheAPIAndYieldAroundIt() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            local co = coroutine.wrap(function()
              local s = addSketch()
              coroutine.yield(s)
              prepare()
              impulse(s, 1, 0)
              coroutine.yield(wobbleModels()[1].amplitude)
              error('inside')
            end)
            local s = co()
            assert(tostring(s) == 'sketch #1')
            assert(co() == 1)
            local ok, e = pcall(co)
            assert(not ok and e:match('inside'), e)
            local c2 = coroutine.create(function() impulse(nil, 0, 0) end)
            local ok2, e2 = coroutine.resume(c2)
            assert(not ok2 and e2:match('scene.lua:%d+: impulse: direction must be non%-zero$'), e2)
            """)
    }
}
