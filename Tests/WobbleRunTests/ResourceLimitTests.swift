import Foundation
import XCTest
import WobbleCore
import WobbleMedia
#if canImport(Glibc)
import Glibc
#endif

/// Limits that batch systems and containers set: the run stops with one
/// line, or renders; it never hangs, never dies of a signal it could turn
/// into an error, and never leaves a temporary file or a child behind.
final class ResourceLimitTests: XCTestCase {
    private func box(noisy: Bool = false) throws -> Sandbox {
        let box = try Sandbox()
        if noisy {
            // Noise compresses badly: the frames are large files.
            var px = [UInt8](repeating: 255, count: 600 * 400 * 4)
            var x: UInt32 = 1
            for i in 0..<(600 * 400) {
                for c in 0..<3 { x = x &* 1_664_525 &+ 1_013_904_223; px[i * 4 + c] = UInt8(x >> 24) }
            }
            try box.writeImage("img.png", RGBAImage(width: 600, height: 400, pixels: px))
        } else {
            try box.writeImage("img.png", Sandbox.pattern(width: 64, height: 48))
        }
        try box.write("s.lua", """
        image("img.png") local s = addSketch{x = 10, y = 10, w = 40, h = 30} prepare() impulse(s, 1, 0) wait(2)
        """)
        return box
    }

    /// Runs `wobble-run ARGS` under `sh -c PREFIX; exec …`.
    private func limited(_ prefix: String, _ args: [String], in box: Sandbox) throws -> Tool.Result {
        try Tool.run(["-c", prefix + "; exec \"$0\" \"$@\"", Tool.executable.path] + args, cwd: box.url, executable: "/bin/sh")
    }

    func testAFileSizeLimitFailsTheWriteCleanly() throws {
        let box = try box(noisy: true)
        try box.write("old.gif", "old")
        for out in ["fx/", "old.gif"] {
            let r = try limited("ulimit -f 300", ["s.lua", "--backend", "cpu", "-q", "--loop", "-1", "-o", out], in: box)
            XCTAssertEqual(r.status, 1, "\(out): \(r.stderr)")
            XCTAssertTrue(r.firstError.hasPrefix("wobble-run: write '") && r.firstError.hasSuffix("': File too large"), r.firstError)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("fx")))
        XCTAssertEqual(try String(contentsOfFile: box.path("old.gif"), encoding: .utf8), "old")
        XCTAssertEqual(box.leftovers(), [])
    }

    func testASoftCPULimitStopsLikeSIGTERM() throws {
        let box = try box(noisy: true)
        try box.write("old.gif", "old")
        // A long render: the soft limit of 1 s of CPU time ends it.
        try box.write("long.lua", """
        image("img.png") local s = addSketch{x = 10, y = 10, w = 500, h = 300} prepare() impulse(s, 1, 0) wait(60)
        """)
        let r = try limited("ulimit -S -t 1", ["long.lua", "--backend", "cpu", "-q", "-o", "old.gif"], in: box)
        XCTAssertEqual(r.status, 128 + SIGXCPU, r.stderr)
        XCTAssertEqual(try String(contentsOfFile: box.path("old.gif"), encoding: .utf8), "old")
        XCTAssertEqual(box.leftovers(), [])
    }

    func testAnFFmpegThatNeverAnswersOrFailsIsOneLine() throws {
        let box = try box()
        try FileManager.default.createDirectory(atPath: box.path("bin"), withIntermediateDirectories: true)
        let fake = box.path("bin/ffmpeg")
        for (script, line) in [
            ("exit 3", "wobble-run: video 'v.mp4': '\(fake) -encoders' failed (exit status 3); is this ffmpeg working?"),
            ("exec sleep 1001", "wobble-run: video 'v.mp4': '\(fake) -encoders' did not answer within 10 s; is this ffmpeg working?"),
        ] {
            try box.write("bin/ffmpeg", "#!/bin/sh\n\(script)\n")
            chmod(fake, 0o755)
            let started = Date()
            let r = try limited("PATH=\"\(box.path("bin")):$PATH\"", ["s.lua", "-q", "-o", "v.mp4"], in: box)
            XCTAssertEqual(r.status, 1)
            XCTAssertEqual(r.firstError, line)
            XCTAssertLessThan(Date().timeIntervalSince(started), 20)
        }
        // The probe was killed with its process group: nothing left running.
        let pgrep = try Tool.run(["-f", "sleep 1001"], cwd: box.url, executable: "/usr/bin/pgrep")
        XCTAssertEqual(pgrep.stdout, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("v.mp4")))
        XCTAssertEqual(box.leftovers(), [])
    }

    /// A cgroup of our own with a small `pids.max` (v1's pids hierarchy or
    /// v2), removed at the end.
    private func pidsCgroup() throws -> String {
        for root in ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"] {
            let dir = root + "/wobble-test-\(getpid())-\(UUID().uuidString.prefix(8))"
            if mkdir(dir, 0o755) == 0 {
                if FileManager.default.fileExists(atPath: dir + "/pids.max") { return dir }
                rmdir(dir)
            }
        }
        throw XCTSkip("no writable cgroup with a pids controller here (needs root and cgroupfs)")
    }

    func testAPidsLimitNeverHangs() throws {
        let box = try box()
        let group = try pidsCgroup()
        defer { rmdir(group) }
        for max in [2, 3, 4, 6] {
            try "\(max)\n".write(toFile: group + "/pids.max", atomically: false, encoding: .utf8)
            for backend in ["cpu", "gles"] {
                for out in ["o.gif", "f/"] {
                    let label = "pids.max \(max), \(backend), \(out)"
                    // `timeout` stops a hang (status 124) so that the test fails instead.
                    let r = try Tool.run(["-c", "echo $$ > \(group)/cgroup.procs; exec timeout -s KILL 60 \"$0\" \"$@\"",
                                          Tool.executable.path, "s.lua", "-q", "--loop", "-1", "--backend", backend, "-o", out],
                                         cwd: box.url, executable: "/bin/sh")
                    XCTAssertTrue(r.status == 0 || r.status == 1, "\(label): status \(r.status) \(r.stderr)")
                    if r.status == 1 {
                        XCTAssertTrue(r.firstError.hasPrefix("wobble-run: only ") && r.firstError.contains("may start here (pids.max \(max) of the cgroup"),
                                      "\(label): \(r.firstError)")
                    }
                }
            }
        }
        XCTAssertEqual(box.leftovers(), [])
    }

    func testAnOpenFilesLimitIsOneLineNeverACrash() throws {
        let box = try box()
        for limit in [6, 8, 10, 12, 14, 16, 18] {
            for backend in ["cpu", "gles"] {
                for out in ["o.gif", "f/", "v.mp4"] {
                    let label = "ulimit -n \(limit), \(backend), \(out)"
                    let r = try limited("ulimit -n \(limit)", ["s.lua", "-q", "--loop", "-1", "--backend", backend, "-o", out], in: box)
                    XCTAssertTrue(r.status == 0 || r.status == 1, "\(label): status \(r.status) \(r.stderr)")
                    if r.status == 1 {
                        XCTAssertTrue(r.firstError.hasPrefix("wobble-run: ") && r.firstError.contains("files"), "\(label): \(r.firstError)")
                    }
                }
            }
        }
        XCTAssertEqual(box.leftovers(), [])
    }

    func testAnAddressSpaceLimitIsOneLineOrARenderNeverACrashOrAHang() throws {
        // Under ulimit -v of 600–700 MB a GLES render used to crash (SIGSEGV)
        // or hang: llvmpipe's threads could not start. Now it renders or
        // says in one line that memory is short; with 2 GB it renders.
        let box = try box()
        for limit in [300_000, 600_000, 700_000, 2_000_000] {
            for out in ["o.gif", "f/"] {
                let label = "ulimit -v \(limit), \(out)"
                let r = try limited("ulimit -v \(limit)", ["s.lua", "-q", "--loop", "-1", "--backend", "gles", "-o", out], in: box)
                if limit < 400_000 {
                    XCTAssertEqual(r.status, 1, label)
                    XCTAssertTrue(r.firstError.hasPrefix("wobble-run: only ") && r.firstError.contains("MiB of address space are left (ulimit -v \(limit))"), "\(label): \(r.stderr)")
                } else if limit < 1_000_000 && r.status == 1 {
                    // Near the edge (the process's address space at the GLES
                    // start varies by a few MiB from machine to machine and
                    // build to build): the render may be refused, in one line
                    // that says what is short.
                    XCTAssertTrue(r.firstError.hasPrefix("wobble-run: a GLES render of 64×48 needs about ")
                                  && r.firstError.contains("are left (ulimit -v \(limit))")
                                  && r.stderr.split(separator: "\n").count == 1, "\(label): \(r.stderr)")
                } else {
                    XCTAssertEqual(r.status, 0, "\(label): \(r.stderr)")
                }
            }
        }
        XCTAssertEqual(box.leftovers(), [])
    }

    /// A stack limit of 32 KiB (soft and hard, as `ulimit -s 32` sets it)
    /// crashed a GLES render, PNG frames and a scene nesting `pcall` with
    /// SIGSEGV: the tool now runs with its usual stack whatever the limit,
    /// and ffmpeg, which inherits the limit, is refused in one line.
    func testATinyStackLimitStillRendersAndRefusesFFmpegInOneLine() throws {
        let box = try box()
        try box.write("deep.lua", """
        local function f(n) if n == 0 then return 0 end local ok, v = pcall(f, n - 1) return v end
        f(180)
        image("img.png") local s = addSketch{x = 10, y = 10, w = 40, h = 30} prepare() impulse(s, 1, 0) wait(0.3)
        """)
        let reference = try Tool.run(["s.lua", "-q", "--loop", "-1", "--backend", "cpu", "-o", "ref.gif"], cwd: box.url)
        XCTAssertEqual(reference.status, 0, reference.stderr)
        for (args, out) in [(["s.lua", "--backend", "gles"], "g.gif"), (["s.lua", "--backend", "gles"], "gf/"),
                            (["s.lua", "--backend", "cpu"], "c.gif"), (["deep.lua", "--backend", "cpu"], "d.gif")] {
            let r = try limited("ulimit -s 32", args + ["-q", "--loop", "-1", "-o", out], in: box)
            XCTAssertEqual(r.status, 0, "\(args) \(out): \(r.stderr)")
        }
        // The frames are the usual ones.
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("c.gif"))),
                       try Data(contentsOf: URL(fileURLWithPath: box.path("ref.gif"))))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: box.path("gf")).count, 60)
        let v = try limited("ulimit -s 32", ["s.lua", "-q", "-o", "v.mp4"], in: box)
        XCTAssertEqual(v.status, 1)
        XCTAssertEqual(v.stderr, "wobble-run: video 'v.mp4': the stack limit (ulimit -s 32) is too small for ffmpeg, which needs at least 256 KiB (ulimit -s 256 or more); write a .gif, PNG frames, .webp or .apng instead\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("v.mp4")))
        // A soft limit alone is raised for ffmpeg too: the video is written.
        let soft = try limited("ulimit -S -s 32", ["s.lua", "-q", "-o", "v.mp4"], in: box)
        XCTAssertEqual(soft.status, 0, soft.stderr)
        XCTAssertTrue(FileManager.default.fileExists(atPath: box.path("v.mp4")))
        XCTAssertEqual(box.leftovers(), [])
    }

    /// A fake ffmpeg on PATH: it lists `libx264` for `-encoders`, and
    /// otherwise runs `script`.
    private func fakeFFmpeg(in box: Sandbox, _ script: String) throws -> String {
        try FileManager.default.createDirectory(atPath: box.path("bin"), withIntermediateDirectories: true)
        let fake = box.path("bin/ffmpeg")
        try box.write("bin/ffmpeg", """
        #!/bin/sh
        for a in "$@"; do [ "$a" = -encoders ] && { echo ' V....D libx264              libx264 H.264'; exit 0; }; done
        \(script)

        """)
        chmod(fake, 0o755)
        return fake
    }

    /// ffmpeg's stderr in an error's details is escaped like every message:
    /// an ffmpeg (or a file name it quotes) cannot forge a line or move the
    /// terminal's cursor.
    func testFFmpegsStderrIsEscapedInTheDetails() throws {
        let box = try box()
        try box.write("old.mp4", "old")
        _ = try fakeFFmpeg(in: box, #"cat > /dev/null; printf 'bad \033[31mred\rwobble-run: forged\n\033]0;title\007end\n' >&2; exit 1"#)
        let path = "PATH=\"\(box.path("bin")):$PATH\""
        let r = try limited(path, ["s.lua", "-q", "-o", "old.mp4"], in: box)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, """
        wobble-run: video 'old.mp4': ffmpeg failed (ffmpeg's exit status 1)
          ffmpeg: bad \\x1B[31mred
          ffmpeg: wobble-run: forged
          ffmpeg: \\x1B]0;title\\x07end

        """)
        let j = try limited(path, ["s.lua", "-q", "-o", "old.mp4", "--json"], in: box)
        let json = try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [String: Any]
        XCTAssertEqual(json?["error"] as? String, "video 'old.mp4': ffmpeg failed (ffmpeg's exit status 1)")
        XCTAssertEqual(json?["details"] as? String, "  ffmpeg: bad \\x1B[31mred\n  ffmpeg: wobble-run: forged\n  ffmpeg: \\x1B]0;title\\x07end")
        XCTAssertEqual(try String(contentsOfFile: box.path("old.mp4"), encoding: .utf8), "old")
        XCTAssertEqual(box.leftovers(), [])
    }

    /// `--timeout S` bounds the wait for ffmpeg's `-encoders` probe too
    /// (10 s without it).
    func testTimeoutBoundsTheFFmpegProbe() throws {
        let box = try box()
        try FileManager.default.createDirectory(atPath: box.path("bin"), withIntermediateDirectories: true)
        let fake = box.path("bin/ffmpeg")
        try box.write("bin/ffmpeg", "#!/bin/sh\nexec sleep 1002\n")
        chmod(fake, 0o755)
        let started = Date()
        let r = try limited("PATH=\"\(box.path("bin")):$PATH\"", ["s.lua", "-q", "--timeout", "1.5", "-o", "v.mp4"], in: box)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stderr, "wobble-run: video 'v.mp4': '\(fake) -encoders' did not answer within 1.5 s (--timeout); is this ffmpeg working?\n")
        XCTAssertLessThan(Date().timeIntervalSince(started), 6 * Tool.slowdown)
        let pgrep = try Tool.run(["-f", "sleep 1002"], cwd: box.url, executable: "/usr/bin/pgrep")
        XCTAssertEqual(pgrep.stdout, "")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("v.mp4")))
        XCTAssertEqual(box.leftovers(), [])
    }
}
