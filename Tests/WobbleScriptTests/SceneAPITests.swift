import XCTest
@testable import WobbleScript
import WobbleCore

/// The scene globals: image, size, fps, output, arg; errors and their format.
final class SceneAPITests: XCTestCase {
    func testImageResolvesAgainstTheScriptFolderAndReturnsTheSize() throws {
        let f = SceneFixture()
        let r = try f.run("""
            local w, h = image('cat.png')
            assert(w == 200 and h == 100)
            local w2, h2 = size()
            assert(w2 == 200 and h2 == 100)
            assert(select('#', image('sub/big.png')) == 2)
            """)
        XCTAssertEqual(f.loadedImages, [f.dir + "/cat.png", f.dir + "/sub/big.png"])
        XCTAssertEqual(r.imagePath, f.dir + "/sub/big.png")
        XCTAssertEqual(r.clip.imageWidth, 640)
        XCTAssertEqual(r.clip.imageHeight, 480)
    }

    func testImageErrors() {
        let f = SceneFixture()
        XCTAssertEqual(f.message("image(3)"), "scene.lua:1: bad argument #1 to 'image' (string expected, got number)")
        XCTAssertEqual(f.message("image()"), "scene.lua:1: bad argument #1 to 'image' (string expected, got no value)")
        XCTAssertEqual(f.message("image('')"), "scene.lua:1: bad argument #1 to 'image' (empty path)")
        XCTAssertEqual(f.message("\nimage('bad.png')"), "scene.lua:2: image: image 'bad.png': not a PNG or JPEG file")
        XCTAssertEqual(f.message("image('cat.png') wait(0.1)\nimage('big.png')"),
                       "scene.lua:2: image: cannot change the image to 'big.png' once a frame has been recorded")
        XCTAssertEqual(f.message("size()"), "scene.lua:1: size: no image yet: call image(path) first (or pass --image)")
    }

    func testSameImageAfterTheFirstFrameIsFineAndNotReloaded() throws {
        let f = SceneFixture()
        try f.run("image('cat.png') wait(0.1) assert(select(2, image('cat.png')) == 100)")
        XCTAssertEqual(f.loadedImages.count, 1)
    }

    func testImageOverride() throws {
        let f = SceneFixture()
        let r = try f.run("local w, h = image('whatever.png') assert(w == 30 and h == 20) wait(1) image('other.png')") {
            $0.imageOverride = (30, 20)
        }
        XCTAssertEqual(f.loadedImages, [])
        XCTAssertNil(r.imagePath)
        XCTAssertEqual(r.clip.imageWidth, 30)
        // --image alone is enough: no image() call needed.
        XCTAssertEqual(try f.run("wait(0.5) local w, h = size() assert(w == 30)") { $0.imageOverride = (30, 20) }
            .clip.frameCount, 15)
    }

    func testFPS() throws {
        let f = SceneFixture()
        let r = try f.run(withImage + "assert(fps() == 30) assert(fps(24) == 24) wait(1) assert(fps(24) == 24)")
        XCTAssertEqual(r.clip.fps, 24)
        XCTAssertEqual(r.clip.frameCount, 24)
        XCTAssertEqual(f.message(withImage + "wait(1) fps(25)"),
                       "scene.lua:2: fps: cannot change the frame rate (30) once a frame has been recorded")
        XCTAssertEqual(f.message("fps('x')"), "scene.lua:1: bad argument #1 to 'fps' (number expected, got string)")
        XCTAssertEqual(f.message("fps(0/0)"), "scene.lua:1: fps: frames per second must be a number in [0.01, 1000]")
        XCTAssertEqual(f.message("fps(1e-300)"), "scene.lua:1: fps: frames per second must be a number in [0.01, 1000]")
        XCTAssertEqual(f.message("fps(0.0099)"), "scene.lua:1: fps: frames per second must be a number in [0.01, 1000]")
        XCTAssertEqual(f.message("fps(1000.001)"), "scene.lua:1: fps: frames per second must be a number in [0.01, 1000]")
        let fixed = try f.run(withImage + "assert(fps(50) == 10) wait(1) fps(60)") { $0.fixedFPS = 10 }
        XCTAssertEqual(fixed.clip.frameCount, 10)
    }

    func testOutputResolvesAgainstTheScriptFolder() throws {
        let f = SceneFixture()
        XCTAssertEqual(try f.run(withImage + "output('out/x.gif')").outputPath, f.dir + "/out/x.gif")
        XCTAssertEqual(try f.run(withImage + "output('\(f.dir)/abs/x.gif')").outputPath, f.dir + "/abs/x.gif")
        // Outside the folder only with --allow-io (PathPolicyTests has the rest).
        XCTAssertEqual(try f.run(withImage + "output('/abs/x.gif')") { $0.allowIO = true }.outputPath, "/abs/x.gif")
        XCTAssertNil(try f.run(withImage).outputPath)
        XCTAssertEqual(f.message("output({})"), "scene.lua:1: bad argument #1 to 'output' (string expected, got table)")
    }

    func testPathsOfAScriptGivenWithoutAFolder() {
        XCTAssertEqual(ScriptSession.folder(of: "scene.lua"), "")
        XCTAssertEqual(ScriptSession.folder(of: "a/b/scene.lua"), "a/b")
        XCTAssertEqual(ScriptSession.folder(of: "/scene.lua"), "/")
        let s = ScriptSession(options: ScriptOptions(scriptPath: "scene.lua") { _ in (1, 1) })
        XCTAssertEqual(s.resolve("x.png"), "x.png")
        XCTAssertEqual(s.resolve("/x.png"), "/x.png")
        let t = ScriptSession(options: ScriptOptions(scriptPath: "scenes/a.lua") { _ in (1, 1) })
        XCTAssertEqual(t.resolve("x.png"), "scenes/x.png")
    }

    func testArgTableAndVarargs() throws {
        let f = SceneFixture()
        try f.run(withImage + """
            assert(#arg == 2 and arg[1] == 'a b' and arg[2] == '7')
            assert(arg[0]:match('scene.lua$'))
            local x, y = ...
            assert(x == 'a b' and y == '7')
            """) { $0.arguments = ["a b", "7"] }
        try f.run(withImage + "assert(#arg == 0 and select('#', ...) == 0)")
    }

    /// A model whose rest is further than the frame limit (a duration of
    /// an hour): `untilStill()` says when it rests and what to do.
    func testUntilStillPastTheFrameLimitSaysWhatToDo() {
        let f = SceneFixture()
        let e = f.failure(withImage + "local r = addSketch{x = 1, y = 1, w = 5, h = 5, duration = 3600}\nprepare()\nimpulse(r, 1, 0)\nuntilStill()")
        let message = e?.message.replacingOccurrences(of: f.dir + "/", with: "") ?? ""
        XCTAssertTrue(message.hasPrefix("scene.lua:5: untilStill: the clip would have "), message)
        XCTAssertTrue(message.contains(" frames, more than the limit of 100000 (--max-frames); the models come to rest at "), message)
        XCTAssertTrue(message.hasSuffix(" s: give untilStill(maxSeconds), a shorter duration, or a larger --max-frames"), message)
        // With maxSeconds it ends there: no error.
        XCTAssertNoThrow(try f.run(withImage + "local r = addSketch{x = 1, y = 1, w = 5, h = 5, duration = 3600}\nprepare()\nimpulse(r, 1, 0)\nuntilStill(2)"))
    }

    func testErrorFormatsAndKinds() {
        let f = SceneFixture()
        // Lua's own runtime error, with the traceback in the details.
        var e = f.failure("local x\n\nx.y = 1")
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertEqual(e?.message, f.scriptPath + ":3: attempt to index a nil value (local 'x')")
        XCTAssertTrue(e?.details?.hasPrefix("stack traceback:") ?? false, e?.details ?? "")
        // error() with a table value, and with a number.
        XCTAssertEqual(f.message("error({})"), "(error object is a table value)")
        XCTAssertEqual(f.message("error(setmetatable({}, {__tostring = function() return 'custom' end}))"), "custom")
        XCTAssertEqual(f.message("error(42)"), "42")
        XCTAssertEqual(f.message("error('plain', 0)"), "plain")
        // Syntax errors: kind load.
        e = f.failure("x = = 1")
        XCTAssertEqual(e?.kind, .load)
        XCTAssertEqual(e?.message, f.scriptPath + ":1: unexpected symbol near '='")
        XCTAssertNil(e?.details)
        // A missing script.
        var o = f.options("")
        o.scriptPath = f.dir + "/missing.lua"
        XCTAssertThrowsError(try ScriptHost(options: o).run()) { err in
            let e = err as? ScriptError
            XCTAssertEqual(e?.kind, .load)
            XCTAssertEqual(e?.message, "wobble-run: cannot open \(f.dir)/missing.lua: No such file or directory")
        }
        // After the script: wobble-run: <message>, kind finish.
        e = f.failure("addSketch()")
        XCTAssertEqual(e?.kind, .finish)
        XCTAssertEqual(e?.message, "wobble-run: no image: the scene calls no image(path) and no --image was given")
        e = f.failure(withImage + "wait(2)") { $0.maxFrames = 10 }
        XCTAssertEqual(e?.kind, .runtime)
        XCTAssertEqual(e?.message.replacingOccurrences(of: f.dir + "/", with: ""),
                       "scene.lua:2: wait: the clip would have 60 frames, more than the limit of 10 (--max-frames)")
        // An API error caught by pcall is a plain value.
        XCTAssertNoThrow(try f.run(withImage + """
            local ok, msg = pcall(impulse, nil, 0, 0)
            assert(not ok and msg == 'impulse: direction must be non-zero', msg)
            local ok2, msg2 = pcall(function() impulse(nil, 0, 0) end)
            assert(msg2:match('^.*scene.lua:4: impulse: direction must be non%-zero$'), msg2)
            """))
    }

    func testEveryGlobalOfTheAPIExists() throws {
        let f = SceneFixture()
        let names = ["image", "size", "fps", "output", "addSketch", "sketchModels", "clear", "prepare", "wobbleModels",
                     "impulse", "touch", "enableMotion", "shake", "reset", "overlay", "wait", "time", "untilStill"]
        try f.run(withImage + "for _, n in ipairs{\(names.map { "'\($0)'" }.joined(separator: ","))} do assert(type(_G[n]) == 'function', n) end")
    }
}
