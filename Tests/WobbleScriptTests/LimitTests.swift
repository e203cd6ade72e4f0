import XCTest
@testable import WobbleScript
import WobbleCore

/// --timeout, interruption and the memory limit.
final class LimitTests: XCTestCase {
    func timedOut(_ source: String, line: Int, file: StaticString = #filePath, testLine: UInt = #line) {
        let f = SceneFixture()
        let start = ContinuousClock.now
        let e = f.failure(source, { $0.timeout = 0.2 }, file: file, line: testLine)
        let elapsed = ContinuousClock.now - start
        XCTAssertEqual(e?.kind, .timeout, file: file, line: testLine)
        XCTAssertEqual(e?.message.replacingOccurrences(of: f.dir + "/", with: ""),
                       "scene.lua:\(line): script timed out after 0.2 s (--timeout)", file: file, line: testLine)
        XCTAssertLessThan(elapsed, .seconds(3), file: file, line: testLine)
    }

    func testTimeoutStopsABusyLoop() {
        timedOut("local x = 0\nwhile true do\n  x = x + 1\nend", line: 3)
    }

    func testTimeoutCannotBeCaughtByPcall() {
        timedOut("while true do\n  pcall(function() while true do end end)\nend", line: 2)
        timedOut("while true do\n  local ok = pcall(error, 'x')\nend", line: 2)
        timedOut("local ok, e = pcall(function() while true do end end)\nreturn", line: 2)
        timedOut("while true do\n  xpcall(function() while true do end end, function() while true do end end)\nend", line: 2)
    }

    func testTimeoutStopsCoroutines() {
        let f = SceneFixture()
        let e = f.failure("local co = coroutine.wrap(function()\n  while true do end\nend)\nco()") { $0.timeout = 0.2 }
        XCTAssertEqual(e?.kind, .timeout)
        XCTAssertEqual(e?.message.replacingOccurrences(of: f.dir + "/", with: ""),
                       "scene.lua:2: script timed out after 0.2 s (--timeout)", "one position: where it was running, not one per coroutine.wrap")
        timedOut("while true do\n  local co = coroutine.create(function() while true do end end)\n  coroutine.resume(co)\nend", line: 3)
    }

    func testAFastScriptIsNotStopped() throws {
        let f = SceneFixture()
        XCTAssertNoThrow(try f.run(withImage + "for i = 1, 1000 do wait(0.001) end") { $0.timeout = 30 })
    }

    func testShouldAbortInterrupts() {
        let f = SceneFixture()
        nonisolated(unsafe) var polls = 0
        let e = f.failure("while true do end") {
            $0.shouldAbort = {
                polls += 1
                return polls > 3
            }
        }
        XCTAssertEqual(e?.kind, .interrupted)
        XCTAssertEqual(e?.message.replacingOccurrences(of: f.dir + "/", with: ""), "scene.lua:1: interrupted")
    }

    func testMemoryLimit() throws {
        let f = SceneFixture()
        let limit: (inout ScriptOptions) -> Void = { $0.memoryLimit = 32 << 20 }
        var e = f.failure("local t = {} for i = 1, 1e9 do t[i] = {i} end", limit)
        XCTAssertEqual(e?.kind, .runtime)
        let expected = "scene.lua: not enough memory (a script gets at most 32 MiB of Lua memory)"
        XCTAssertEqual(e?.message.replacingOccurrences(of: f.dir + "/", with: ""), expected)
        e = f.failure("local s = string.rep('x', 100 * 1024 * 1024)", limit)
        XCTAssertEqual(e?.message.replacingOccurrences(of: f.dir + "/", with: ""), expected)
        // Caught, freed, and the script goes on.
        XCTAssertNoThrow(try f.run(withImage + """
            local ok, err = pcall(function() local t = {} for i = 1, 1e9 do t[i] = {i} end end)
            assert(not ok and err == 'not enough memory', err)
            collectgarbage()
            addSketch() prepare() impulse(1, 1, 0) wait(1)
            """, limit))
        // Host functions that push large results go past the limit only
        // while they run; the error is raised after they return.
        XCTAssertNoThrow(try f.run(withImage + """
            for i = 1, 10000 do addSketch() end
            local keep = {}
            local ok, err = pcall(function()
              for i = 1, 1e9 do keep[#keep + 1] = sketchModels() end
            end)
            assert(not ok and (err == 'not enough memory' or err:match('not enough memory')), err)
            keep = nil
            collectgarbage()
            """, limit))
    }
}

/// Paths where Lua runs script code with hooks off.
final class HookHoleTests: XCTestCase {
    func testGCMetamethodsAreRefusedInTheSandbox() throws {
        let f = SceneFixture()
        XCTAssertEqual(f.message("setmetatable({}, {__gc = function() while true do end end})"),
                       "scene.lua:1: setmetatable: __gc metamethods are not available in the sandbox"
                       + " (--timeout could not stop them; --allow-io lifts the sandbox)")
        try f.run(withImage + """
            local t = setmetatable({}, {__index = function(_, k) return k .. '!' end})
            assert(t.x == 'x!')
            local mt = {} setmetatable(t, mt) mt.__gc = function() end   -- added later: never called
            """)
    }

    func testXpcallHandlersStillWork() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            local ok, v = xpcall(function() error('boom', 0) end, function(e) return 'handled ' .. e end)
            assert(not ok and v == 'handled boom', v)
            assert(select('#', xpcall(function(...) return ... end, print, 1, 2, 3)) == 4)
            local co = coroutine.wrap(function() return xpcall(function() coroutine.yield(5) return 6 end, print) end)
            assert(co() == 5)
            local ok2, r = co()
            assert(ok2 and r == 6)
            """)
        XCTAssertEqual(f.message("xpcall(print)"), "scene.lua:1: bad argument #2 to 'xpcall' (function expected, got no value)")
    }
}
