import Foundation
import XCTest
import WobbleCore
import WobbleMedia
#if canImport(Glibc)
import Glibc
#endif

/// The memory a render needs for its size is estimated before anything is
/// allocated: where less is left (`ulimit -v`, a cgroup's memory limit, the
/// system's available memory), the render stops with one line saying how
/// much it needs and how much is left, and writes nothing.
final class RenderMemoryTests: XCTestCase {
    var box: Sandbox!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("sq.png", Sandbox.pattern(width: 64, height: 64))
        try box.write("s.lua", "image('sq.png') local s = addSketch{x = 10, y = 10, w = 40, h = 30} prepare() impulse(s, 1, 0) wait(0.1)\n")
        try box.write("old.gif", "old")
    }

    /// Matches `line` against `pattern` (a regular expression, whole line).
    private func assertLine(_ line: String, _ pattern: String, file: StaticString = #filePath, line l: UInt = #line) {
        XCTAssertNotNil(line.range(of: "^" + pattern + "$", options: .regularExpression), line, file: file, line: l)
    }

    func testA16384SquareRenderUnderAnAddressSpaceLimitIsOneLine() throws {
        // 16384×16384 is within the size limits; a GLES frame of it needs about 6 GiB.
        for (backend, limit, need) in [("gles", 3_000_000, "6.1"), ("cpu", 1_500_000, "3.0")] {
            let r = try Tool.run(["-c", "ulimit -v \(limit); exec \"$0\" \"$@\"", Tool.executable.path,
                                  "s.lua", "-q", "--backend", backend, "--width", "16384", "-o", "old.gif", "--json"],
                                 cwd: box.url, executable: "/bin/sh")
            XCTAssertEqual(r.status, 1, r.stderr)
            let kind = backend == "gles" ? "GLES" : "CPU"
            let hint = backend == "gles" ? #"; render it smaller \(--width, --height\) or with --backend cpu \(about 3\.0 GiB\)"# : #"; render it smaller \(--width, --height\)"#
            assertLine(r.firstError, #"wobble-run: a \#(kind) render of 16384×16384 needs about \#(need) GiB of memory, and [0-9.]+ (GiB|MiB) are left \(ulimit -v \#(limit)\)"# + hint)
            let json = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
            XCTAssertEqual(json?["error"] as? String, String(r.firstError.dropFirst("wobble-run: ".count)))
            XCTAssertTrue(json?["output"] is NSNull)
        }
        XCTAssertEqual(try String(contentsOfFile: box.path("old.gif"), encoding: .utf8), "old")
        XCTAssertEqual(box.leftovers(), [])
    }

    /// An 8000×8000 PNG (a quarter of a GiB of pixels, a few hundred KB of
    /// file) read under an address-space limit too small for a render of
    /// it: one memory line, never a crash (a failed allocation of the
    /// pixels, or of a copy of the inflated stream beside them, once ended
    /// the process: "failed to allocate"). The picture's memory is checked
    /// before it is allocated, and the common RGBA PNG's rows are inflated
    /// one at a time.
    func testAHugePNGUnderAnAddressSpaceLimitIsOneLineNotACrash() throws {
        let side = 8000
        let png = try ImageIO.encodePNG(RGBAImage(width: side, height: side), compressionLevel: 1)
        try Data(png).write(to: URL(fileURLWithPath: box.path("big.png")))
        try box.write("big.lua", "image('big.png')\n")
        let r = try Tool.run(["-c", "ulimit -v 400000; exec \"$0\" \"$@\"", Tool.executable.path,
                              "big.lua", "-q", "--backend", "cpu", "--frames", "0-0", "-o", "old.gif"],
                             cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(r.status, 1, r.stderr)
        // Where the picture itself does not fit (a debug build's larger
        // start), reading it is refused; else the render is.
        // (The script's `image` call says it as a script error does, with its traceback after the line.)
        assertLine(r.firstError, #"(big\.lua:1: image: image 'big\.png': reading 8000×8000|wobble-run: a CPU render of 8000×8000) needs about [0-9]+ MiB of memory, and [0-9.]+ (GiB|MiB) are left \(ulimit -v 400000\)(; render it smaller \(--width, --height\))?"#)
        XCTAssertFalse(r.stderr.contains("Fatal error"), r.stderr)
        XCTAssertEqual(try String(contentsOfFile: box.path("old.gif"), encoding: .utf8), "old")
    }

    /// A cgroup of our own with a memory limit (v2's memory.max or v1's
    /// memory.limit_in_bytes), removed at the end.
    func testACgroupMemoryLimitIsNamed() throws {
        var made: (dir: String, file: String)?
        for (root, file) in [("/sys/fs/cgroup", "memory.max"), ("/sys/fs/cgroup/memory", "memory.limit_in_bytes")] {
            let dir = root + "/wobble-test-\(getpid())-\(UUID().uuidString.prefix(8))"
            if mkdir(dir, 0o755) == 0 {
                if FileManager.default.fileExists(atPath: dir + "/" + file) { made = (dir, file); break }
                rmdir(dir)
            }
        }
        guard let made else { throw XCTSkip("no writable cgroup with a memory controller here (needs root and cgroupfs)") }
        defer { rmdir(made.dir) }
        try "1073741824\n".write(toFile: made.dir + "/" + made.file, atomically: false, encoding: .utf8)
        // 8192×8192: about 1.6 GiB for GLES, more than the cgroup's 1 GiB.
        let r = try Tool.run(["-c", "echo $$ > \(made.dir)/cgroup.procs; exec \"$0\" \"$@\"", Tool.executable.path,
                              "s.lua", "-q", "--backend", "gles", "--width", "8192", "-o", "old.gif"], cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(r.status, 1, r.stderr)
        let group = String(made.dir.dropFirst(made.file == "memory.max" ? "/sys/fs/cgroup".count : "/sys/fs/cgroup/memory".count))
        assertLine(r.firstError, #"wobble-run: a GLES render of 8192×8192 needs about 1\.6 GiB of memory, and [0-9.]+ (GiB|MiB) are left \(\#(made.file) 1073741824 of the cgroup \#(group)\); .*"#)
        XCTAssertEqual(try String(contentsOfFile: box.path("old.gif"), encoding: .utf8), "old")
        XCTAssertEqual(box.leftovers(), [])
    }
}
