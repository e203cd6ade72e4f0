import XCTest
@testable import WobbleScript
import WobbleCore

/// Safety: the sandbox, `--allow-io`, `require`, seeding.
final class SandboxTests: XCTestCase {
    func testUnsafeGlobalsAreAbsent() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            assert(io == nil)
            for _, k in ipairs{'execute', 'getenv', 'remove', 'rename', 'exit', 'tmpname', 'setlocale'} do
              assert(os[k] == nil, k)
            end
            assert(os.time and os.clock and os.date and os.difftime)
            local n = 0 for _ in pairs(os) do n = n + 1 end assert(n == 4)
            assert(debug.traceback and debug.sethook == nil and debug.getinfo == nil and debug.getregistry == nil)
            local m = 0 for _ in pairs(debug) do m = m + 1 end assert(m == 1)
            assert(package.loadlib == nil and package.cpath == nil and package.searchers == nil)
            assert(string and table and math and utf8 and coroutine)
            assert(type(print) == 'function' and type(pcall) == 'function')
            """)
    }

    func testLoadTakesTextChunksOnly() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            local fn, err = load(string.dump(function() return 1 end))
            assert(fn == nil and err:match('attempt to load a binary chunk'), err)
            fn, err = load(string.dump(function() return 1 end), 'x', 'b')
            assert(fn == nil and err:match('binary chunk'), err)
            assert(load('return 1 + 1')() == 2)
            assert(load('return x', 'chunk', 't', {x = 5})() == 5)
            local parts, i = {'return ', '7'}, 0
            assert(load(function() i = i + 1 return parts[i] end)() == 7)
            local g, e = load('syntax error here')
            assert(g == nil and e:match('syntax error'), e)
            """)
    }

    func testDofileAndLoadfileStayInTheScriptFolder() throws {
        let f = SceneFixture()
        f.write("lib/helper.lua", "return 40 + (... or 2)")
        f.write("../outside-\(UUID().uuidString.prefix(6)).lua", "return 1")
        try f.run(withImage + """
            assert(dofile('lib/helper.lua') == 42)
            assert(loadfile('lib/helper.lua')(1) == 41)
            assert(loadfile('lib/helper.lua', 'bt', {})() == 42)
            local fn, err = loadfile('/etc/passwd')
            assert(fn == nil and err == "loadfile: '/etc/passwd' is outside the scene's folder (sandbox; --allow-io lifts it)", err)
            fn, err = loadfile('../x.lua')
            assert(fn == nil and err:match('^cannot open .*x.lua: No such file or directory$'), err)
            fn, err = loadfile()
            assert(fn == nil and err:match('standard input is not available'), err)
            assert(dofile('lib/../lib/helper.lua') == 42)
            """)
        XCTAssertEqual(f.message(withImage + "dofile('/etc/passwd')"),
                       "scene.lua:2: dofile: '/etc/passwd' is outside the scene's folder (sandbox; --allow-io lifts it)")
        XCTAssertEqual(f.message(withImage + "dofile(5)"), "scene.lua:2: bad argument #1 to 'dofile' (string expected, got number)")
        f.write("broken.lua", "x = = 1")
        // A load error names the file, line and column, never the text.
        XCTAssertEqual(f.message(withImage + "dofile('broken.lua')"), "broken.lua:1:3: unexpected symbol")
    }

    func testSymlinkOutOfTheFolderIsRefused() throws {
        let f = SceneFixture()
        let other = SceneFixture()
        other.write("secret.lua", "return 'secret'")
        try FileManager.default.createSymbolicLink(atPath: f.dir + "/link.lua", withDestinationPath: other.dir + "/secret.lua")
        XCTAssertEqual(f.message(withImage + "dofile('link.lua')"),
                       "scene.lua:2: dofile: 'link.lua' is outside the scene's folder (sandbox; --allow-io lifts it)")
        XCTAssertEqual(f.message(withImage + "require 'link'"),
                       "scene.lua:2: module 'link' not found in the scene's folder (no file 'link.lua', no file 'link/init.lua')")
    }

    func testRequireFindsModulesInTheFolderOnly() throws {
        let f = SceneFixture()
        f.write("util.lua", "count = (count or 0) + 1 return {name = ..., answer = 42}")
        f.write("lib/geom.lua", "return {half = function(x) return x / 2 end}")
        f.write("pkg/init.lua", "return 'pkg'")
        try f.run(withImage + """
            local u = require 'util'
            assert(u.answer == 42 and u.name == 'util')
            assert(require('util') == u and count == 1)     -- loaded once
            assert(package.loaded.util == u)
            assert(require('lib.geom').half(4) == 2)
            assert(require('lib/geom') ~= nil)
            assert(require('pkg') == 'pkg')
            assert(require('string') == string)
            """)
        XCTAssertEqual(f.message(withImage + "require '../x'"),
                       "scene.lua:2: require: module name '../x' must name a file inside the scene's folder (like 'lib.util')")
        XCTAssertEqual(f.message(withImage + "require '/etc/passwd'"),
                       "scene.lua:2: require: module name '/etc/passwd' must name a file inside the scene's folder (like 'lib.util')")
        XCTAssertEqual(f.message(withImage + "require 'nope'"),
                       "scene.lua:2: module 'nope' not found in the scene's folder (no file 'nope.lua', no file 'nope/init.lua')")
        XCTAssertEqual(f.message(withImage + "require(nil)"), "scene.lua:2: bad argument #1 to 'require' (string expected, got nil)")
        f.write("bad.lua", "return = 1")
        XCTAssertTrue(f.message(withImage + "require 'bad'")?.hasPrefix("scene.lua:2: error loading module 'bad' from file") ?? false)
    }

    func testAllowIOOpensTheFullLibraries() throws {
        let f = SceneFixture()
        f.write("util.lua", "return 7")
        try f.run(withImage + """
            assert(io and io.open and io.popen and os.getenv and os.execute and package.loadlib and debug.sethook)
            assert(require('util') == 7)
            local h = io.open(arg[0]) assert(h:read('l') ~= nil) h:close()
            """) { $0.allowIO = true }
    }

    func testMathRandomIsSeeded() throws {
        let f = SceneFixture()
        f.write("out.lua", "")
        func numbers(_ seed: Int) throws -> String {
            var out = ""
            let r = try f.run(withImage + "local t = {} for i = 1, 5 do t[i] = math.random(1000000) end output(table.concat(t, '_'))") {
                $0.seed = seed
            }
            out = (r.outputPath! as NSString).lastPathComponent
            return out
        }
        XCTAssertEqual(try numbers(0), try numbers(0))
        XCTAssertEqual(try numbers(7), try numbers(7))
        XCTAssertNotEqual(try numbers(0), try numbers(7))
    }

    func testPrintDoesNotFail() throws {
        let f = SceneFixture()
        try f.run(withImage + "print('to stdout', 1, nil, {}, setmetatable({}, {__tostring = function() return 'x' end}))")
    }
}
