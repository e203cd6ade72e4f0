import Foundation
import XCTest
import WobbleCore
import WobbleMedia

/// Issue 9, "crashes on input": numbers a user sizes (script coordinates,
/// `--width`/`--height`, pattern widths, frame indices in names) are
/// checked where they become integers. Each case ran into a trap (exit 132)
/// or a 64 GiB allocation before; now it is one clear line, the documented
/// exit status, no output and no temporary file.
final class CheckedNumbersTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
    }

    /// Runs the tool and checks the status, the first stderr line, that
    /// nothing but the inputs is in the sandbox and no temporary is left.
    func expectFailure(_ args: [String], status: Int32, _ firstLine: String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let before = box.files()
        let r = try Tool.run(args, cwd: box.url)
        XCTAssertEqual(r.status, status, "\(args): \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.firstError, firstLine, "\(args)", file: file, line: line)
        XCTAssertEqual(box.files(), before, "\(args): files appeared", file: file, line: line)
        XCTAssertEqual(box.leftovers(), [], "\(args)", file: file, line: line)
    }

    // MARK: - Coordinates

    func testHugeCoordinatesAreAnErrorInBothBackendsAndCheck() throws {
        try box.write("scene.lua", """
        image("img.png") addSketch{x=-1e19,y=-1e19,w=2e19,h=2e19} prepare() impulse(nil,1,0) wait(0.2)
        """)
        let message = "scene.lua:1: addSketch: x is -1e+19, outside ±1000000 (image pixels)"
        for extra in [["--backend", "cpu", "-o", "out.gif"], ["--backend", "gles", "-o", "out.gif"],
                      ["--backend", "cpu", "-o", "frames/"], ["--check"]] {
            try expectFailure(["scene.lua"] + extra, status: 1, message)
        }
    }

    func testEveryWayOfGivingAPointIsLimited() throws {
        let cases: [(String, String)] = [
            ("addSketch{x = 0, y = 0, w = 1e308, h = 1}", "addSketch: x + w is 1e+308, outside ±1000000 (image pixels)"),
            ("addSketch{x = 0, y = 0, w = 1, h = math.huge}", "addSketch: h must be a finite number, got inf"),
            ("addSketch{x = 0/0, y = 0, w = 1, h = 1}", "addSketch: x must be a finite number, got nan"),
            ("addSketch{lt = {-1e300, 0}, rt = {1, 0}, rb = {1, 1}, lb = {0, 1}}", "addSketch: lt[1] is -1e+300, outside ±1000000 (image pixels)"),
            ("addSketch{center = {x = 2^63, y = 0}}", "addSketch: center.x is 9.223372036854776e+18, outside ±1000000 (image pixels)"),
            ("local s = addSketch() s.lb = {x = 0, y = 1e19}", "sketch: lb.y is 1e+19, outside ±1000000 (image pixels)"),
            ("local s = addSketch() s.center = {1/0, 0}", "sketch: center[1] must be a finite number, got inf"),
            ("local s = addSketch() s.center = {math.maxinteger, 0}", "sketch: center[1] is 9.223372036854776e+18, outside ±1000000 (image pixels)"),
        ]
        for (code, message) in cases {
            try box.write("scene.lua", "image('img.png') \(code) prepare() impulse(nil, 1, 0) wait(0.1)")
            try expectFailure(["scene.lua", "--check"], status: 1, "scene.lua:1: " + message)
            try expectFailure(["scene.lua", "--backend", "cpu", "-o", "out.gif"], status: 1, "scene.lua:1: " + message)
        }
    }

    /// At the limit a region is far bigger than the image: both backends
    /// render it (the pixel bounds clamp to the frame) and agree with --check.
    func testRegionsAtTheCoordinateLimitRender() throws {
        try box.write("scene.lua", """
        image("img.png")
        addSketch{x = -1e6, y = -1e6, w = 2e6, h = 2e6}
        local s = addSketch{x = 1, y = 1, w = 5, h = 5}
        s.rb = {1e6, -1e6} s.center = {-0.0, 5e-324}
        prepare() impulse(nil, 1, 0) wait(0.2)
        """)
        for backend in ["cpu", "gles"] {
            let r = try Tool.run(["scene.lua", "--backend", backend, "--overlay", "-o", "\(backend).gif"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("\(backend).gif")), backend)
        }
        let check = try Tool.run(["scene.lua", "--check"], cwd: box.url)
        XCTAssertEqual(check.status, 0, check.stderr)
        XCTAssertEqual(box.leftovers(), [])
    }

    // MARK: - Output size

    func testDerivedOutputSizeIsCheckedBeforeAllocating() throws {
        try box.writeImage("tall.png", Sandbox.pattern(width: 1, height: 64))
        try box.writeImage("wide.png", Sandbox.pattern(width: 64, height: 1))
        try box.write("tall.lua", "image('tall.png') wait(0.1)")
        try box.write("wide.lua", "image('wide.png') wait(0.1)")
        let tall = "wobble-run: output size 16384×1048576 is larger than the limit of 16384 pixels per side (--width 16384 on a 1×64 image)"
        for extra in [["--backend", "cpu", "-o", "out.gif"], ["--backend", "gles", "-o", "out.gif"], ["--format", "null"], ["--check"]] {
            try expectFailure(["tall.lua", "--width", "16384"] + extra, status: 2, tall)
        }
        try expectFailure(["wide.lua", "--height", "300", "--check"], status: 2,
                          "wobble-run: output size 19200×300 is larger than the limit of 16384 pixels per side (--height 300 on a 64×1 image)")
        // --image gives the size before the script runs: the same check.
        try expectFailure(["wide.lua", "--image", "tall.png", "--width", "16384", "--check"], status: 2, tall)
        // The side limit is also the pixel limit (16384² = 2^28): the largest size passes --check.
        try box.writeImage("sq.png", Sandbox.pattern(width: 3, height: 2))
        try box.write("sq.lua", "image('sq.png') wait(0.1)")
        try expectFailure(["sq.lua", "--width", "16384", "--height", "16385", "--check"], status: 2,
                          "wobble-run: --height: 16385 is out of range (1...16384)")
        let largest = try Tool.run(["sq.lua", "--width", "16384", "--height", "16384", "--check"], cwd: box.url)
        XCTAssertEqual(largest.firstError, "ok: 3 frames, 0.1 s at 30 fps, 16384×16384")
        // --assemble derives its size the same way.
        try FileManager.default.createDirectory(atPath: box.path("slice"), withIntermediateDirectories: false)
        try ImageIO.writePNG(Sandbox.pattern(width: 1, height: 64), to: box.path("slice/frame_00000.png"))
        try expectFailure(["--assemble", "slice", "--width", "16384", "-o", "a.gif"], status: 2, tall)
        // A size that fits still renders.
        let ok = try Tool.run(["tall.lua", "--width", "256", "--check"], cwd: box.url)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        XCTAssertEqual(ok.firstError, "ok: 3 frames, 0.1 s at 30 fps, 256×16384")
    }

    // MARK: - Frame ranges

    func testFrameRangesAreDigitsThatFit() throws {
        try box.write("scene.lua", Sandbox.poke)
        for v in ["+1-+2", "99999999999999999999", "0-99999999999999999999", "1e3", "\u{0663}-\u{0664}", " 1", "-5", "0x1"] {
            try expectFailure(["scene.lua", "--frames", v, "--check"], status: 2,
                              "wobble-run: --frames: '\(v)' is not a range A-B of frame numbers (0-based)")
        }
        try expectFailure(["scene.lua", "--frames", "9223372036854775807", "--check"], status: 1,
                          "wobble-run: --frames 9223372036854775807- selects no frame: the clip has 9 frames (0-8)")   // (one frame at Int.max reads as the open range it equals)
        let r = try Tool.run(["scene.lua", "--frames", "7-9223372036854775807", "--check"], cwd: box.url)   // (the 2 frames selected play 0.067 s)
        XCTAssertEqual(r.firstError, "ok: 2 frames, 0.067 s at 30 fps, 40×30")
    }

    // MARK: - Frame rates

    /// `--fps 1e-300` passed --check ("ok: 1 frame") but made ffmpeg fail
    /// on the rate "0/1000": rates below 0.01 are refused in both.
    func testFrameRatesAreLimited() throws {
        try box.write("scene.lua", Sandbox.poke)
        for v in ["1e-300", "5e-324", "0.001", "-0", "0"] {
            for extra in [["--check"], ["-o", "out.mp4"], ["-o", "out.gif"]] {
                try expectFailure(["scene.lua", "--fps", v] + extra, status: 2,
                                  "wobble-run: --fps: \(v) must be greater than or equal to 0.01")
            }
        }
        try expectFailure(["scene.lua", "--fps", "1e308", "--check"], status: 2, "wobble-run: --fps: 1e308 is more than 1000")
        try box.write("slow.lua", "fps(0.001) " + Sandbox.poke)
        try expectFailure(["slow.lua", "--check"], status: 1, "slow.lua:1: fps: frames per second must be a number in [0.01, 1000]")
        let r = try Tool.run(["scene.lua", "--fps", "0.01", "--check"], cwd: box.url)
        XCTAssertEqual(r.firstError, "ok: 1 frame, 100 s at 0.01 fps, 40×30", "one frame at 0.01 fps plays 100 s")
    }

    // MARK: - File-name patterns and frame indices

    func testPatternWidthsAreLimited() throws {
        try box.write("scene.lua", Sandbox.poke)
        let help = "use %d or %0Nd (such as %04d) for the frame number, and %% for a literal %"
        for (pattern, shown) in [("out_%0123456789012345678901d.png", "%0123456789012345678901d"),
                                 ("out_%011d.png", "%011d"), ("out_%00d.png", "%00d"),
                                 ("out_%0999999999999999999999999999999999999d.png", "%0999999999999999999999…")] {
            let message = "wobble-run: output '\(pattern)': unsupported conversion '\(shown)' in the file name pattern; \(help)"
            try expectFailure(["scene.lua", "--backend", "cpu", "-o", pattern], status: 2, message)
            try expectFailure(["scene.lua", "--check", "-o", pattern], status: 2, message)
        }
        // The same pattern from output(...) is the scene's error (1).
        try box.write("own.lua", Sandbox.poke + "\noutput('o_%0123456789012345678901d.png')")
        try expectFailure(["own.lua", "--backend", "cpu"], status: 1,
                          "wobble-run: output 'o_%0123456789012345678901d.png': unsupported conversion '%0123456789012345678901d' in the file name pattern; \(help)")
        // The widest allowed pattern works.
        let r = try Tool.run(["scene.lua", "--backend", "cpu", "--frames", "8", "-o", "w_%010d.png"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("w_0000000008.png")))
    }

    func testAssembleRefusesFrameIndicesBeyondTheLimit() throws {
        try FileManager.default.createDirectory(atPath: box.path("asm"), withIntermediateDirectories: false)
        let frame = Sandbox.pattern(width: 8, height: 6)
        for name in ["frame_9223372036854775807.png", "frame_99999999999999999999999.png", "frame_2147483648.png"] {
            try ImageIO.writePNG(frame, to: box.path("asm/\(name)"))
            for extra in [["-o", "a.gif"], ["--check"]] {
                try expectFailure(["--assemble", "asm"] + extra, status: 1,
                                  "wobble-run: --assemble 'asm': '\(name)': the frame index is more than 2147483647")
            }
            try FileManager.default.removeItem(atPath: box.path("asm/\(name)"))
        }
        // The largest index assembles, with its timeline delay.
        try ImageIO.writePNG(frame, to: box.path("asm/frame_2147483647.png"))
        let r = try Tool.run(["--assemble", "asm", "-o", "a.gif", "-q"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("a.gif")))
        XCTAssertEqual(box.leftovers(), [])
    }

    // MARK: - The mechanism itself

    func testCheckedConversions() {
        XCTAssertNil(Int(checked: .nan))
        XCTAssertNil(Int(checked: .infinity))
        XCTAssertNil(Int(checked: 9.223372036854775807e18))   // == 2^63
        XCTAssertEqual(Int(checked: -9.223372036854775808e18), Int.min)
        XCTAssertEqual(Int(checked: 2.5, rounding: .down), 2)
        XCTAssertEqual(Int(checked: -0.0), 0)
        XCTAssertEqual(Int(clamping: 1e19, to: -1...10, rounding: .up), 10)
        XCTAssertEqual(Int(clamping: -1e19, to: -1...10, rounding: .down), -1)
        XCTAssertEqual(Int(clamping: .nan, to: -1...10, rounding: .down), -1)
        XCTAssertEqual(Int(clamping: 3.2, to: -1...10, rounding: .up), 4)
        XCTAssertEqual(Int(digits: "00042"), 42)
        XCTAssertEqual(Int(digits: "9223372036854775807"), Int.max)
        XCTAssertNil(Int(digits: "9223372036854775808"))
        XCTAssertNil(Int(digits: "+5"))
        XCTAssertNil(Int(digits: ""))
        XCTAssertNil(Int(digits: "١٢"))   // Arabic-Indic digits are not ASCII digits
        // Decimal numbers only: what an option or --at reads.
        for (text, value) in [("12", 12.0), ("-0.5", -0.5), (".5", 0.5), ("3.", 3.0), ("+7", 7.0), ("1e3", 1000.0), ("2.5E-2", 0.025)] {
            XCTAssertEqual(Double(decimal: text), value, text)
        }
        for text in ["", "0x10", "0x1p4", "inf", "-inf", "nan", "1.5\u{0}9", " 1", "1 ", "1e", "e3", ".", "-", "1.2.3", "١٢", "1_000"] {
            XCTAssertNil(Double(decimal: text), text)
        }
        XCTAssertEqual(Double(decimal: "1e999"), .infinity)   // read, and refused by callers as not finite
        XCTAssertTrue((0...65535).contains(GIFSink.delay(index: Int.max, fps: 30)))   // no overflow at Int.max
        XCTAssertNil(CheckedNumbers.coordinateProblem(-1e6))
        XCTAssertEqual(CheckedNumbers.coordinateProblem(-1e6 - 1), "is -1000001.0, outside ±1000000 (image pixels)")
    }
}
