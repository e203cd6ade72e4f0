import Foundation
import XCTest
import WobbleMedia
#if canImport(Glibc)
import Glibc
#endif

/// Issue 9: `--image fifo.png --timeout 2` blocked forever. `--timeout`
/// now bounds every read of an input (the scene, `--image`, the script's
/// images, `--assemble`'s frames): a read still blocked at the deadline is
/// one line naming the file, exit 1, nothing written.
final class InputTimeoutTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("scene.lua", Sandbox.poke)
    }

    func fifo(_ name: String) {
        XCTAssertEqual(mkfifo(box.path(name), 0o644), 0, String(cString: strerror(errno)))
    }

    /// Runs the tool, which must stop on its own, soon after `timeout`.
    func expectTimeout(_ args: [String], timeout: Double, _ firstLine: String,
                       file: StaticString = #filePath, line: UInt = #line) throws {
        let before = box.files()
        let start = Date()
        let r = try Tool.run(args, cwd: box.url)
        let took = Date().timeIntervalSince(start)
        XCTAssertEqual(r.status, 1, "\(args): \(r.stderr)", file: file, line: line)
        XCTAssertEqual(r.firstError, firstLine, file: file, line: line)
        XCTAssertGreaterThanOrEqual(took, timeout - 0.05, file: file, line: line)
        XCTAssertLessThan(took, timeout + 2, "\(args) took \(took) s", file: file, line: line)
        XCTAssertEqual(box.files(), before, file: file, line: line)
        XCTAssertEqual(box.leftovers(), [], file: file, line: line)
    }

    func testImageOptionFIFOTimesOut() throws {
        fifo("fifo.png")
        try expectTimeout(["scene.lua", "--image", "fifo.png", "--timeout", "1", "--check"], timeout: 1,
                          "wobble-run: image 'fifo.png': not read within 1 s (--timeout)")
        try expectTimeout(["scene.lua", "--image", "fifo.png", "--timeout", "0.5", "--backend", "cpu", "-o", "out.gif"], timeout: 0.5,
                          "wobble-run: image 'fifo.png': not read within 0.5 s (--timeout)")
    }

    func testSceneFIFOTimesOut() throws {
        fifo("fifo.lua")
        try expectTimeout(["fifo.lua", "--timeout", "1", "--check"], timeout: 1,
                          "wobble-run: scene 'fifo.lua': not read within 1 s (--timeout)")
    }

    func testScriptImageFIFOTimesOut() throws {
        fifo("fifo.png")
        try box.write("own.lua", "image('fifo.png') wait(0.1)")
        // Sandboxed, the path policy refuses a FIFO at once (regular files only) ...
        let r = try Tool.run(["own.lua", "--timeout", "1", "--backend", "cpu", "-o", "out.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(r.firstError, "own.lua:1: image: path 'fifo.png' is not a regular file (it is a FIFO); a scene reads files only (use --image for a pipe)")
        // ... and with --allow-io the deadline bounds the read.
        try expectTimeout(["own.lua", "--allow-io", "--timeout", "1", "--backend", "cpu", "-o", "out.gif"], timeout: 1,
                          "wobble-run: image 'fifo.png': not read within 1 s (--timeout)")
    }

    func testAssembleFrameFIFOTimesOut() throws {
        try FileManager.default.createDirectory(atPath: box.path("slice"), withIntermediateDirectories: false)
        fifo("slice/frame_00000.png")
        try expectTimeout(["--assemble", "slice", "--timeout", "1", "-o", "a.gif"], timeout: 1,
                          "wobble-run: image 'slice/frame_00000.png': not read within 1 s (--timeout)")
    }

    /// A FIFO that delivers in time is a fine input.
    func testFIFOThatDeliversInTimeIsRead() throws {
        fifo("fifo.png")
        let png = try Data(contentsOf: box.url.appendingPathComponent("img.png"))
        let path = box.path("fifo.png")
        let writer = Thread {
            // Non-blocking open: retry until the tool opens its end (at most 10 s).
            var fd: Int32 = -1
            for _ in 0..<1000 where fd < 0 {
                fd = open(path, O_WRONLY | O_NONBLOCK)
                if fd < 0 { usleep(10_000) }
            }
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFL, 0)
            usleep(200_000)
            png.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        writer.start()
        let r = try Tool.run(["scene.lua", "--image", "fifo.png", "--timeout", "5", "--check"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.firstError, "ok: 9 frames, 0.3 s at 30 fps, 40×30")
    }
}
