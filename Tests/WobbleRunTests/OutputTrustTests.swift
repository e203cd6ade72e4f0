import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// Issue 9, "outputs are never lost or corrupted": every kind of output
/// (GIF, PNG file, PNG folder, pattern, MP4, WebM, pipe) under faults — a
/// full file system, a read-only folder, a folder that vanishes mid-render,
/// ffmpeg killed mid-encode, SIGKILL — and the output-path policy (links,
/// devices, a closed stdout, long and non-UTF-8 names). After each fault:
/// exit status non-zero, the old output byte-identical, no temporary files.
///
/// The file-system faults run in a private mount namespace
/// (`unshare -m sh -c 'mount -t tmpfs …'`), so nothing outside the test
/// sees the small tmpfs; where `unshare` is not permitted they are skipped
/// with a message saying so.
final class OutputTrustTests: XCTestCase {
    var box: Sandbox!
    var tool: String { Tool.executable.path }

    override func setUpWithError() throws {
        box = try Sandbox()
        // 96×72 noise: new outputs of 10 KB or more, more than the 4 KB
        // left free on the full disk.
        try box.writeImage("noise.png", Self.noise(width: 96, height: 72))
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("s.lua", Sandbox.poke)
        try box.write("n.lua", """
        image("noise.png")
        addSketch{x = 8, y = 6, w = 60, h = 50}
        prepare()
        impulse(1, 1, 0)
        wait(0.3)
        """)
        try box.write("one.lua", "image('noise.png')\n")
        var alpha = Self.noise(width: 96, height: 72)
        for i in 0..<(96 * 72) { alpha.pixels[i * 4 + 3] = UInt8(i % 256) }
        try box.writeImage("noise-alpha.png", alpha)
        try box.write("na.lua", """
        image("noise-alpha.png")
        addSketch{x = 8, y = 6, w = 60, h = 50}
        prepare()
        impulse(1, 1, 0)
        wait(0.3)
        """)
        try box.writeImage("smooth-alpha.png", FormatsTests.alphaRamp(width: 160, height: 120))
        try box.write("long-alpha.lua", """
        image("smooth-alpha.png")
        addSketch{x = 8, y = 6, w = 100, h = 80}
        prepare()
        impulse(1, 1, 0)
        wait(1)
        """)
        try box.write("small-one.lua", "image('img.png')\n")
        // Long enough to be caught mid-render (30 frames of a smooth
        // picture, well under a second; noise makes GIF encoding slow).
        try box.writeImage("smooth.png", Sandbox.pattern(width: 160, height: 120))
        try box.write("long.lua", """
        image("smooth.png")
        addSketch{x = 8, y = 6, w = 100, h = 80}
        prepare()
        impulse(1, 1, 0)
        wait(1)
        """)
    }

    override func tearDown() { box = nil }

    static func noise(width w: Int, height h: Int) -> RGBAImage {
        var px = [UInt8](repeating: 255, count: w * h * 4)
        var x: UInt32 = 12345
        for i in 0..<(w * h) {
            for c in 0..<3 {
                x = x &* 1_103_515_245 &+ 12345
                px[i * 4 + c] = UInt8(truncatingIfNeeded: x >> 16)
            }
        }
        return RGBAImage(width: w, height: h, pixels: px)
    }

    /// The outputs, with `-o` and the scene that makes them.
    struct Kind {
        var name: String
        var output: String
        var scene = "n.lua"
        var video = false
    }

    static let kinds: [Kind] = [
        Kind(name: "gif", output: "keep.gif"),
        Kind(name: "png file", output: "one.png", scene: "one.lua"),
        Kind(name: "png folder", output: "frames/"),
        Kind(name: "pattern", output: "pat/x_%02d.png"),
        Kind(name: "mp4", output: "keep.mp4", video: true),
        Kind(name: "webm", output: "keep.webm", video: true),
        Kind(name: "webp", output: "keep.webp"),
        Kind(name: "apng", output: "keep.apng"),
        // A source with alpha: ProRes 4444 through ffmpeg.
        Kind(name: "mov alpha", output: "keep.mov", scene: "na.lua", video: true),
    ]

    var hasFFmpeg: Bool { ChildProcess.findExecutable("ffmpeg") != nil }

    /// Makes the old outputs (small, from another picture than the runs
    /// under test, so "unchanged" is visible) in `dir` of the sandbox.
    func makeOldOutputs(in dir: String, only names: Set<String>? = nil) throws {
        let fm = FileManager.default
        if fm.fileExists(atPath: box.path("old")), dir != "old", names == nil {
            try fm.copyItem(atPath: box.path("old"), toPath: box.path(dir))   // made once per test
            return
        }
        try fm.createDirectory(atPath: box.path(dir + "/pat"), withIntermediateDirectories: true)
        for k in Self.kinds where (!k.video || hasFFmpeg) && names?.contains(k.name) ?? true {
            let scene = k.scene == "one.lua" ? "small-one.lua" : "s.lua"
            let r = try Tool.run([scene, "--backend", "cpu", "-q", "-o", dir + "/" + k.output], cwd: box.url)
            XCTAssertEqual(r.status, 0, "old \(k.name): \(r.stderr)")
        }
        if fm.fileExists(atPath: box.path(dir + "/frames")) {
            try "notes".write(toFile: box.path(dir + "/frames/notes.txt"), atomically: false, encoding: .utf8)
        }
    }

    /// Whether this machine lets us make a private mount namespace.
    static let canUnshare: Bool = {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "unshare -m sh -c 'mkdir -p /tmp/.wobble-unshare-probe && mount -t tmpfs -o size=64k tmpfs /tmp/.wobble-unshare-probe && umount /tmp/.wobble-unshare-probe' 2>/dev/null; s=$?; rmdir /tmp/.wobble-unshare-probe 2>/dev/null; exit $s"]
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return false }
        p.waitUntilExit()
        return p.terminationStatus == 0
    }()

    /// Runs `script` with sh in a private mount namespace; `$T` is the
    /// tool, `$D` a mount point in the sandbox.
    func unshared(_ script: String) throws -> Tool.Result {
        guard Self.canUnshare else {
            throw XCTSkip("unshare -m / mount -t tmpfs is not permitted here: the full-disk and read-only fault tests need a private mount namespace")
        }
        try FileManager.default.createDirectory(atPath: box.path("mnt"), withIntermediateDirectories: true)
        let full = "set -u\nT='\(tool)'\nD='\(box.path("mnt"))'\ncd '\(box.url.path)'\n" + script
        return try Tool.run(["-c", "exec unshare -m sh -c \"$0\"", full], cwd: box.url, executable: "/bin/sh")
    }

    /// The fault script for one kind: a fresh 2 MiB tmpfs holding the old
    /// outputs, then `fault` (fill it up, or remount it read-only), the
    /// run, and a report line `RESULT <kind> rc=<n> same=<0|1> temps=<n>`.
    func faultScript(_ k: Kind, fault: String) -> String {
        let base = k.output.hasSuffix("/") ? String(k.output.dropLast()) : k.output
        let compared = k.output.hasPrefix("pat/") ? "pat" : base
        return """
        mount -t tmpfs -o size=2m tmpfs "$D" || exit 90
        cp -a old/. "$D/"
        \(fault)
        "$T" \(k.scene) --backend cpu -q -o "$D/\(k.output)" 2>"$D.err"; rc=$?
        if diff -r "old/\(compared)" "$D/\(compared)" >/dev/null 2>&1; then same=1; else same=0; fi
        temps=$(find "$D" -name '*wobble-tmp*' | wc -l)
        echo "RESULT \(k.name) rc=$rc same=$same temps=$temps err=$(head -n 1 "$D.err")"
        umount "$D"

        """
    }

    struct FaultResult {
        var rc: Int, same: Bool, temps: Int, error: String
    }

    func parse(_ out: String) -> [String: FaultResult] {
        var results: [String: FaultResult] = [:]
        for line in out.split(separator: "\n") where line.hasPrefix("RESULT ") {
            let s = String(line.dropFirst(7))
            guard let rcRange = s.range(of: " rc=") else { continue }
            let name = String(s[..<rcRange.lowerBound])
            let rest = s[rcRange.upperBound...]
            let fields = rest.split(separator: " ", maxSplits: 3)
            guard fields.count >= 3 else { continue }
            let err = fields.count > 3 ? String(fields[3].dropFirst(4)) : ""
            results[name] = FaultResult(rc: Int(fields[0]) ?? -1, same: fields[1] == "same=1",
                                        temps: Int(fields[2].dropFirst(6)) ?? -1, error: err)
        }
        return results
    }

    func assertFailedCleanly(_ results: [String: FaultResult], _ out: Tool.Result, expect: String,
                             file: StaticString = #filePath, line: UInt = #line) {
        for k in Self.kinds where !k.video || hasFFmpeg {
            guard let r = results[k.name] else {
                XCTFail("\(k.name): no result; \(out.stdout) \(out.stderr)", file: file, line: line)
                continue
            }
            XCTAssertEqual(r.rc, 1, "\(k.name): exit status (\(r.error))", file: file, line: line)
            XCTAssertTrue(r.same, "\(k.name): the old output changed (\(r.error))", file: file, line: line)
            XCTAssertEqual(r.temps, 0, "\(k.name): temporary files left", file: file, line: line)
            XCTAssertTrue(r.error.hasPrefix("wobble-run: "), "\(k.name): \(r.error)", file: file, line: line)
            XCTAssertTrue(expect.isEmpty || r.error.contains(expect), "\(k.name): \(r.error)", file: file, line: line)
        }
    }

    // MARK: - File-system faults

    /// A nearly full disk: 4 KB left. MP4 and WebM were replaced by a
    /// truncated file with exit 0 (ffmpeg 5 exits 0 when its writes fail).
    func testFullDiskFailsEveryKindAndKeepsTheOldOutput() throws {
        try makeOldOutputs(in: "old")
        let fill = #"dd if=/dev/zero of="$D/fill" bs=4k count=$(( ($(df -k --output=avail "$D" | tail -n 1) - 4) / 4 )) 2>/dev/null"#
        let script = Self.kinds.filter { !$0.video || hasFFmpeg }.map { faultScript($0, fault: fill) }.joined()
        let out = try unshared(script)
        let results = parse(out.stdout)
        assertFailedCleanly(results, out, expect: "")
        for (name, r) in results where !r.error.contains("No space left on device") && !r.error.contains("is the disk full?") {
            XCTFail("\(name): the message does not say the disk is full: \(r.error)")
        }
    }

    /// A read-only folder (a tmpfs remounted read-only).
    func testReadOnlyFolderFailsEveryKindAndKeepsTheOldOutput() throws {
        try makeOldOutputs(in: "old")
        let script = Self.kinds.filter { !$0.video || hasFFmpeg }.map { faultScript($0, fault: #"mount -o remount,ro "$D""#) }.joined()
        let out = try unshared(script)
        assertFailedCleanly(parse(out.stdout), out, expect: "Read-only file system")
    }

    /// `/dev/full` (every write fails with ENOSPC) as a pipe-like target.
    func testDevFullIsAWriteError() throws {
        for format in ["gif"] + (hasFFmpeg ? ["mp4", "webm"] : []) {
            let r = try Tool.run(["n.lua", "--backend", "cpu", "-q", "-o", "/dev/full", "--format", format], cwd: box.url)
            XCTAssertEqual(r.status, 1, format)
            XCTAssertTrue(r.firstError.contains("write '/dev/full': No space left on device"), "\(format): \(r.stderr)")
        }
        XCTAssertEqual(Posix.kind("/dev/full"), .characterDevice, "/dev/full must stay a device")
    }

    // MARK: - Mid-render faults

    /// Starts a long render into `output`, waits until its temporary output
    /// exists in `where` (a sandbox folder), stops it, runs `fault`,
    /// resumes it, and returns its exit status and stderr.
    func interrupt(_ args: [String], tempIn folder: String, video: Bool = false,
                   fault: (_ pid: Int32) throws -> Void) throws -> (Int32, String) {
        let (p, _, err) = try Tool.start(args, cwd: box.url)
        nonisolated(unsafe) var errData = Data()
        let g = DispatchGroup()
        g.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); g.leave() }
        let deadline = Date().addingTimeInterval(20)
        func started() -> Bool {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: box.path(folder))) ?? []
            return names.contains { $0.contains("wobble-tmp") } && (!video || Self.ffmpegChild(of: p.processIdentifier) != nil)
        }
        while !started() && Date() < deadline && p.isRunning { usleep(5_000) }
        XCTAssertTrue(p.isRunning, "the render ended before the fault")
        kill(p.processIdentifier, SIGSTOP)
        try fault(p.processIdentifier)
        kill(p.processIdentifier, SIGCONT)
        p.waitUntilExit()
        g.wait()
        return (p.terminationStatus, String(decoding: errData, as: UTF8.self))
    }

    /// The pid of the encoding ffmpeg that `pid` started, if any.
    static func ffmpegChild(of pid: Int32) -> Int32? {
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        for c in children.split(separator: " ").compactMap({ Int32($0) }) {
            let cmd = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(c)/cmdline"))) ?? Data()
            if String(decoding: cmd, as: UTF8.self).contains("rawvideo") { return c }
        }
        return nil
    }

    /// Whether `pid` has ended (gone, or a zombie waiting to be reaped).
    static func ended(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }

    func temps(_ folder: String) -> [String] {
        let e = FileManager.default.enumerator(atPath: box.path(folder))
        var out: [String] = []
        while let f = e?.nextObject() as? String {
            if f.contains("wobble-tmp") { out.append(f) }
        }
        return out
    }

    /// The folder holding the output is moved away (or removed) while the
    /// run renders: the run fails, nothing appears at the old place, the
    /// moved folder keeps its old output and gets no temporary files.
    func testFolderThatVanishesMidRender() throws {
        let fm = FileManager.default
        try makeOldOutputs(in: "old")
        for k in Self.kinds where k.name != "png file" && (!k.video || hasFFmpeg) {
            try? fm.removeItem(atPath: box.path("d"))
            try? fm.removeItem(atPath: box.path("moved"))
            try makeOldOutputs(in: "d")
            let before = try snapshotTree("d")
            let (status, err) = try interrupt([k.scene == "na.lua" ? "long-alpha.lua" : "long.lua", "--backend", "cpu", "-q", "-o", "d/" + k.output],
                                              tempIn: k.output == "frames/" ? "d/frames" : k.output.hasPrefix("pat/") ? "d/pat" : "d",
                                              video: k.video) { _ in
                try fm.moveItem(atPath: box.path("d"), toPath: box.path("moved"))
            }
            XCTAssertEqual(status, 1, "\(k.name): \(err)")
            XCTAssertTrue(err.hasPrefix("wobble-run: ") && err.contains("was moved or removed during the render"), "\(k.name): \(err)")
            XCTAssertFalse(fm.fileExists(atPath: box.path("d")), "\(k.name): the old place was recreated")
            XCTAssertEqual(try snapshotTree("moved"), before, "\(k.name): the moved folder changed")
            XCTAssertEqual(temps("moved"), [], k.name)
        }
        // Removed outright: an error, nothing recreated.
        try? fm.removeItem(atPath: box.path("moved"))
        try makeOldOutputs(in: "d")
        let (status, err) = try interrupt(["long.lua", "--backend", "cpu", "-q", "-o", "d/keep.gif"], tempIn: "d") { _ in
            try fm.removeItem(atPath: box.path("d"))
        }
        XCTAssertEqual(status, 1, err)
        XCTAssertFalse(fm.fileExists(atPath: box.path("d")))
    }

    /// ffmpeg killed mid-encode: a clear error, the old video kept.
    func testFFmpegKilledMidEncode() throws {
        guard hasFFmpeg else { throw XCTSkip("ffmpeg is not installed") }
        try makeOldOutputs(in: "d", only: ["mp4", "webm"])
        for out in ["keep.mp4", "keep.webm"] {
            let before = try Data(contentsOf: URL(fileURLWithPath: box.path("d/" + out)))
            let (status, err) = try interrupt(["long.lua", "--backend", "cpu", "-q", "-o", "d/" + out], tempIn: "d", video: true) { pid in
                guard let ff = Self.ffmpegChild(of: pid) else { return XCTFail("no ffmpeg child") }
                kill(ff, SIGKILL)
            }
            XCTAssertEqual(status, 1, err)
            XCTAssertTrue(err.hasPrefix("wobble-run: video 'd/\(out)': "), err)
            XCTAssertTrue(err.contains("killed by signal 9"), err)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("d/" + out))), before, out)
            XCTAssertEqual(temps("d"), [])
        }
    }

    /// SIGKILL mid-encode: ffmpeg dies with us; the next run into the same
    /// target removes the temporary file the killed run left.
    func testSIGKILLLeavesNoOrphanAndTheNextRunCleansUp() throws {
        guard hasFFmpeg else { throw XCTSkip("ffmpeg is not installed") }
        try makeOldOutputs(in: "d", only: ["mp4"])
        var ffmpeg: Int32?
        _ = try interrupt(["long.lua", "--backend", "cpu", "-q", "-o", "d/keep.mp4"], tempIn: "d", video: true) { pid in
            ffmpeg = Self.ffmpegChild(of: pid)
            kill(pid, SIGKILL)
        }
        let ff = try XCTUnwrap(ffmpeg)
        let deadline = Date().addingTimeInterval(3)
        while !Self.ended(ff) && Date() < deadline { usleep(10_000) }
        XCTAssertTrue(Self.ended(ff), "ffmpeg \(ff) outlived the killed run")
        XCTAssertEqual(temps("d").count, 1, "the killed run's temporary file")
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "d/keep.mp4"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(temps("d"), [], "the next run removes a dead run's leftovers")
    }

    /// Two runs into the same target at once: each completes, neither
    /// removes the other's temporary file (a live process's), and the
    /// target ends as one complete output.
    func testTwoRunsIntoTheSameTargetAtOnce() throws {
        let (p, _, _) = try Tool.start(["long.lua", "--backend", "cpu", "-q", "-o", "same.gif"], cwd: box.url)
        let deadline = Date().addingTimeInterval(20)
        while temps(".").isEmpty && Date() < deadline { usleep(5_000) }
        kill(p.processIdentifier, SIGSTOP)
        let first = temps(".")
        XCTAssertEqual(first.count, 1)
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "same.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(temps("."), first, "a live run's temporary file must stay")
        kill(p.processIdentifier, SIGCONT)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        XCTAssertEqual(temps("."), [])
        let gif = try Data(contentsOf: URL(fileURLWithPath: box.path("same.gif")))
        XCTAssertEqual(gif.prefix(6), Data("GIF89a".utf8))
        XCTAssertEqual(gif.last, 0x3B, "a complete GIF ends with its trailer")
    }

    /// A signal while a one-frame GIF is encoded (on the encoder's own
    /// thread, the command waiting for it to finish, polling nothing):
    /// 130, the file not moved into place, no temporary file. It used to
    /// be written, status 0. Caught in its encode: the run is stopped once
    /// the temporary file holds 100 KB of the frame's pixels (of about 2.5 MB).
    func testASignalDuringTheLastEncodeWritesNothing() throws {
        try box.writeImage("big.png", Self.noise(width: 1600, height: 1200))
        try box.write("big.lua", """
        image("big.png")
        addSketch{x = 8, y = 6, w = 60, h = 50}
        prepare()
        wait(0.1)
        """)
        let (p, _, _) = try Tool.start(["big.lua", "--backend", "cpu", "-q", "--frames", "0-0", "-o", "big.gif"], cwd: box.url)
        let deadline = Date().addingTimeInterval(60)
        func tempSize() -> Int {
            temps(".").compactMap { try? FileManager.default.attributesOfItem(atPath: box.path($0))[.size] as? Int }.max() ?? 0
        }
        while tempSize() < 100_000 && Date() < deadline && p.isRunning { usleep(1_000) }
        kill(p.processIdentifier, SIGSTOP)
        XCTAssertGreaterThanOrEqual(tempSize(), 100_000, "caught while the frame is written")
        kill(p.processIdentifier, SIGINT)
        kill(p.processIdentifier, SIGCONT)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 130)
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("big.gif")), "nothing moved into place")
        XCTAssertEqual(temps("."), [])
    }

    /// SIGINT and SIGTERM while ffmpeg is asked for its encoders (an
    /// ffmpeg that never answers): 128 + the signal, nothing printed and
    /// `"error":"interrupted"`, like any interruption (it was exit 1 and
    /// "interrupted while asking ffmpeg for its encoders").
    func testASignalWhileFFmpegIsAskedForItsEncodersIsAnInterruption() throws {
        let bin = box.path("hang-bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try "#!/bin/sh\nexec sleep 30\n".write(toFile: bin + "/ffmpeg", atomically: false, encoding: .utf8)
        XCTAssertEqual(chmod(bin + "/ffmpeg", 0o755), 0)
        /// The pids whose parent is `pid`.
        func children(of pid: Int32) -> [Int32] {
            let all = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
            return all.compactMap { Int32($0) }.filter { c in
                guard let stat = try? String(contentsOfFile: "/proc/\(c)/stat", encoding: .utf8),
                      let close = stat.lastIndex(of: ")") else { return false }
                let fields = stat[stat.index(after: close)...].split(separator: " ")
                return fields.count > 1 && Int32(fields[1]) == pid
            }
        }
        for (sig, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            var env = ProcessInfo.processInfo.environment
            env["PATH"] = bin + ":" + (env["PATH"] ?? "/usr/bin")
            let (p, out, err) = try Tool.start(["long.lua", "--backend", "cpu", "-q", "--json", "-o", "asked.webm"], cwd: box.url, env: env)
            let deadline = Date().addingTimeInterval(20 * Tool.slowdown)
            while children(of: p.processIdentifier).isEmpty && p.isRunning && Date() < deadline { usleep(10_000) }
            XCTAssertFalse(children(of: p.processIdentifier).isEmpty, "ffmpeg was never asked")
            kill(p.processIdentifier, sig)
            let (outData, errData) = Tool.drain(out, err)
            p.waitUntilExit()
            let stderr = String(decoding: errData, as: UTF8.self)
            XCTAssertEqual(p.terminationStatus, code, stderr)
            XCTAssertEqual(stderr, "", "an interruption prints nothing")
            let json = try JSONSerialization.jsonObject(with: outData) as? [String: Any]
            XCTAssertEqual(json?["error"] as? String, "interrupted")
            XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("asked.webm")))
        }
    }

    /// SIGINT and SIGTERM mid-encode of a video: 130/143, old video kept,
    /// no temporary file, ffmpeg gone.
    func testSignalsMidEncodeKeepTheOldVideo() throws {
        guard hasFFmpeg else { throw XCTSkip("ffmpeg is not installed") }
        try makeOldOutputs(in: "d", only: ["webm"])
        let before = try Data(contentsOf: URL(fileURLWithPath: box.path("d/keep.webm")))
        for (sig, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
            var ffmpeg: Int32?
            let (status, err) = try interrupt(["long.lua", "--backend", "cpu", "-q", "-o", "d/keep.webm"], tempIn: "d", video: true) { pid in
                ffmpeg = Self.ffmpegChild(of: pid)
                kill(pid, sig)
            }
            XCTAssertEqual(status, code, err)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("d/keep.webm"))), before)
            XCTAssertEqual(temps("d"), [])
            if let ff = ffmpeg {
                let deadline = Date().addingTimeInterval(3)
                while !Self.ended(ff) && Date() < deadline { usleep(10_000) }
                XCTAssertTrue(Self.ended(ff), "ffmpeg outlived the run")
            }
        }
    }

    /// SIGINT and SIGTERM mid-render into the newer outputs (WebP, APNG,
    /// ProRes with alpha): 130/143, the old output byte-identical, no
    /// temporary file.
    func testSignalsMidRenderKeepTheOldWebPAPNGAndProRes() throws {
        try makeOldOutputs(in: "d", only: Set(["webp", "apng"] + (hasFFmpeg ? ["mov alpha"] : [])))
        for (out, scene, video) in [("keep.webp", "long.lua", false), ("keep.apng", "long.lua", false)]
            + (hasFFmpeg ? [("keep.mov", "long-alpha.lua", true)] : []) {
            let before = try Data(contentsOf: URL(fileURLWithPath: box.path("d/" + out)))
            for (sig, code) in [(SIGINT, Int32(130)), (SIGTERM, Int32(143))] {
                let (status, err) = try interrupt([scene, "--backend", "cpu", "-q", "-o", "d/" + out], tempIn: "d", video: video) { pid in
                    kill(pid, sig)
                }
                XCTAssertEqual(status, code, "\(out): \(err)")
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("d/" + out))), before, out)
                XCTAssertEqual(temps("d"), [], out)
            }
        }
    }

    // MARK: - Folders: all or nothing

    /// A PNG render into an existing folder where one frame name is a
    /// folder: nothing is replaced (frames 1–4 were new and 6–8 old).
    func testPNGFolderCommitIsAllOrNothing() throws {
        try makeOldOutputs(in: "d", only: ["png folder"])
        let fm = FileManager.default
        try fm.removeItem(atPath: box.path("d/frames/frame_00005.png"))
        try fm.createDirectory(atPath: box.path("d/frames/frame_00005.png"), withIntermediateDirectories: false)
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: box.path("d/frames/frame_00042.png")))  // stale
        let before = try snapshotTree("d/frames")
        let r = try Tool.run(["n.lua", "--backend", "cpu", "-q", "-o", "d/frames/"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: output 'd/frames/': 'd/frames/frame_00005.png' is a folder, not a frame file; nothing was replaced")
        XCTAssertEqual(try snapshotTree("d/frames"), before)
        XCTAssertEqual(temps("d"), [])
        // Without the obstacle: frames replaced, the stale one removed, notes kept.
        try fm.removeItem(atPath: box.path("d/frames/frame_00005.png"))
        let ok = try Tool.run(["n.lua", "--backend", "cpu", "-q", "-o", "d/frames/"], cwd: box.url)
        XCTAssertEqual(ok.status, 0, ok.stderr)
        let names = try fm.contentsOfDirectory(atPath: box.path("d/frames")).sorted()
        XCTAssertEqual(names, (0..<9).map { String(format: "frame_%05d.png", $0) } + ["notes.txt"])
    }

    /// Every regular file below `dir` with its bytes (folders as "<dir>").
    func snapshotTree(_ dir: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        let root = box.path(dir)
        let e = FileManager.default.enumerator(atPath: root)
        while let f = e?.nextObject() as? String {
            var isDir: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root + "/" + f, isDirectory: &isDir)
            out[f] = isDir.boolValue ? Data("<dir>".utf8) : try Data(contentsOf: URL(fileURLWithPath: root + "/" + f))
        }
        return out
    }

    // MARK: - Pipes, devices and links

    /// Video to a pipe works like GIF (it wrote 0 bytes, exit 0).
    func testVideoToAPipe() throws {
        var r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "-"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(r.stdoutBytes.prefix(6), Data("GIF89a".utf8))
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("-")), "'-' is stdout, not a file")
        let png = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "-", "--format", "png"], cwd: box.url)
        XCTAssertEqual(png.status, 2, "PNG frames cannot go to stdout")
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("-")), "no folder named '-'")
        guard hasFFmpeg else { throw XCTSkip("ffmpeg is not installed") }
        for (out, format) in [("/dev/stdout", "mp4"), ("-", "mp4"), ("-", "webm")] {
            r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", out, "--format", format], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertGreaterThan(r.stdoutBytes.count, 500, "\(out) \(format)")
            if format == "mp4" {
                XCTAssertEqual(r.stdoutBytes.dropFirst(4).prefix(4), Data("ftyp".utf8))
            } else {
                XCTAssertEqual(Array(r.stdoutBytes.prefix(4)), [0x1A, 0x45, 0xDF, 0xA3])
            }
            if ChildProcess.findExecutable("ffprobe") != nil {
                try r.stdoutBytes.write(to: URL(fileURLWithPath: box.path("piped." + format)))
                let probe = try Tool.run(["-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                          "stream=nb_read_frames", "-of", "csv=p=0", "piped." + format], cwd: box.url, executable: "ffprobe")
                XCTAssertEqual(probe.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "9", "\(out) \(format): \(probe.stderr)")
            }
        }
        // A FIFO: written in place, still a FIFO afterwards.
        XCTAssertEqual(mkfifo(box.path("fifo"), 0o644), 0)
        let reader = try Tool.start(["-c", "cat fifo > got.mp4"], cwd: box.url, executable: "/bin/sh")
        r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "fifo", "--format", "mp4"], cwd: box.url)
        // Should the tool have failed before opening the FIFO, release the
        // reader (opening the write end ends its wait) instead of hanging.
        let release = open(box.path("fifo"), O_WRONLY | O_NONBLOCK)
        if release >= 0 { close(release) }
        reader.0.waitUntilExit()
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(Posix.kind(box.path("fifo"), follow: false), .fifo)
        XCTAssertGreaterThan((try? Data(contentsOf: URL(fileURLWithPath: box.path("got.mp4"))))?.count ?? 0, 500)
    }

    /// A preset into a FIFO: checking the output does not open it (an open
    /// and a close handed the reader an end of file, and the write then
    /// waited for ever for a reader); the reader gets the bytes the same
    /// preset writes to a file.
    func testAPresetIntoAFIFOGivesItsReaderTheWholeFile() throws {
        XCTAssertEqual(mkfifo(box.path("fifo"), 0o644), 0)
        let reader = try Tool.start(["-c", "cat fifo > got.gif"], cwd: box.url, executable: "/bin/sh")
        let r = try Tool.run(["60", tool, "s.lua", "--backend", "cpu", "--preset", "slack", "--format", "gif", "-o", "fifo"],
                             cwd: box.url, executable: "/usr/bin/timeout")
        let release = open(box.path("fifo"), O_WRONLY | O_NONBLOCK)
        if release >= 0 { close(release) }
        reader.0.waitUntilExit()
        XCTAssertEqual(r.status, 0, r.stderr)
        let file = try Tool.run(["s.lua", "--backend", "cpu", "--preset", "slack", "-o", "file.gif"], cwd: box.url)
        XCTAssertEqual(file.status, 0, file.stderr)
        let got = try Data(contentsOf: URL(fileURLWithPath: box.path("got.gif")))
        XCTAssertGreaterThan(got.count, 100)
        XCTAssertEqual(got, try Data(contentsOf: URL(fileURLWithPath: box.path("file.gif"))))
        XCTAssertEqual(Posix.kind(box.path("fifo"), follow: false), .fifo)
    }

    /// `-o /dev/stdout` with stdout closed replaced the system's
    /// `/dev/stdout` link by a file (as root); dangling and looping links
    /// were replaced by files. Links to devices are written through, links
    /// to files keep being links.
    func testLinksAndDevicesAreNeverReplaced() throws {
        let fm = FileManager.default
        // A link made like the system's /dev/stdout (the old code replaced
        // /dev/stdout itself: this test must not be able to break the
        // machine when it fails).
        try fm.createSymbolicLink(atPath: box.path("stdout"), withDestinationPath: "/proc/self/fd/1")
        let closed = try Tool.run(["-c", "exec \"$0\" s.lua --backend cpu -q -o stdout --format gif >&-", tool],
                                  cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(closed.status, 1)
        XCTAssertEqual(closed.firstError, "wobble-run: output 'stdout': standard output is closed")
        XCTAssertEqual(Posix.kind(box.path("stdout"), follow: false), .link, "the link must stay a link")
        let dash = try Tool.run(["-c", "exec \"$0\" s.lua --backend cpu -q -o - >&-", tool], cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(dash.status, 1)
        XCTAssertEqual(dash.firstError, "wobble-run: output '-': standard output is closed")

        try fm.createSymbolicLink(atPath: box.path("dangling.gif"), withDestinationPath: "nowhere/x.gif")
        try fm.createSymbolicLink(atPath: box.path("loop1.gif"), withDestinationPath: "loop2.gif")
        try fm.createSymbolicLink(atPath: box.path("loop2.gif"), withDestinationPath: "loop1.gif")
        for (link, why) in [("dangling.gif", "dangling"), ("loop1.gif", "links in a loop")] {
            let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", link], cwd: box.url)
            XCTAssertEqual(r.status, 1, link)
            XCTAssertEqual(r.firstError, "wobble-run: output '\(link)': a symbolic link that does not resolve (\(why)); not replaced")
            XCTAssertEqual(Posix.kind(box.path(link), follow: false), .link, link)
        }
        // A chain of links to a file: the file is replaced, both links stay.
        try Data("old".utf8).write(to: URL(fileURLWithPath: box.path("real.gif")))
        try fm.createSymbolicLink(atPath: box.path("b.gif"), withDestinationPath: "real.gif")
        try fm.createSymbolicLink(atPath: box.path("a.gif"), withDestinationPath: "b.gif")
        var r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "a.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try fm.destinationOfSymbolicLink(atPath: box.path("a.gif")), "b.gif")
        XCTAssertEqual(try fm.destinationOfSymbolicLink(atPath: box.path("b.gif")), "real.gif")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("real.gif"))).prefix(6), Data("GIF89a".utf8))
        // A link to /dev/null: written through, still a link.
        try fm.createSymbolicLink(atPath: box.path("null.mp4"), withDestinationPath: "/dev/null")
        if hasFFmpeg {
            r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "null.mp4"], cwd: box.url)
            XCTAssertEqual(r.status, 0, r.stderr)
            XCTAssertEqual(Posix.kind(box.path("null.mp4"), follow: false), .link)
        }
        // A write-protected file, a folder given as a video: refused, unchanged.
        try Data("keep".utf8).write(to: URL(fileURLWithPath: box.path("ro.gif")))
        XCTAssertEqual(chmod(box.path("ro.gif"), 0o444), 0)
        r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "ro.gif"], cwd: box.url)
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.firstError, "wobble-run: output 'ro.gif': the file is write-protected (mode 444); not replaced")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: box.path("ro.gif"))), Data("keep".utf8))
        try fm.createDirectory(atPath: box.path("dir.mp4"), withIntermediateDirectories: false)
        r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", "dir.mp4", "--format", "mp4"], cwd: box.url)
        XCTAssertEqual(r.status, 2, "an existing folder means PNG frames: --format mp4 contradicts it")
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: box.path("dir.mp4")), [])
        XCTAssertEqual(box.leftovers(), [])
    }

    // MARK: - Names

    /// A valid 244-character name failed ("File name too long"): the
    /// temporary name added 28 characters.
    func testLongestNamesWork() throws {
        for length in [244, 255] {
            let name = String(repeating: "a", count: length - 4) + ".gif"
            let r = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", name], cwd: box.url)
            XCTAssertEqual(r.status, 0, "\(length): \(r.stderr)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: box.path(name)), "\(length)")
            let frames = String(repeating: "f", count: length - 1) + "/"
            let f = try Tool.run(["s.lua", "--backend", "cpu", "-q", "-o", frames], cwd: box.url)
            XCTAssertEqual(f.status, 0, "\(length) folder: \(f.stderr)")
        }
        XCTAssertEqual(box.leftovers(), [])
    }

    /// Names that are not UTF-8 reach the system byte for byte (`-o
    /// $'o\xfe.gif'` wrote `o\xef\xbf\xbd.gif`; such a scene was "not
    /// found"), and messages show the byte as `\xFE`.
    func testNamesThatAreNotUTF8() throws {
        let r = try Tool.run(["-c", #"cp s.lua "$(printf 'sc\376.lua')" && exec "$0" "$(printf 'sc\376.lua')" --backend cpu -q"#, tool],
                             cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(r.status, 0, r.stderr)
        let dir = try Posix.open(box.url.path, O_RDONLY | O_DIRECTORY)
        defer { close(dir) }
        let names = Set(try Posix.list(dir, shown: "box").map { PathBytes.bytes($0) })
        XCTAssertTrue(names.contains(Array("sc".utf8) + [0xFE] + Array(".gif".utf8)), "the default output is the scene's name")
        let both = try Tool.run(["-c", #"exec "$0" "$(printf 'sc\376.lua')" --backend cpu -q -o "$(printf 'o\376.gif')""#, tool],
                                cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(both.status, 0, both.stderr)
        let after = Set(try Posix.list(dir, shown: "box").map { PathBytes.bytes($0) })
        XCTAssertTrue(after.contains(Array("o".utf8) + [0xFE] + Array(".gif".utf8)), "\(after.map { PathBytes.string($0) })")
        XCTAssertFalse(after.contains(Array("o".utf8) + [0xEF, 0xBF, 0xBD] + Array(".gif".utf8)))
        let missing = try Tool.run(["-c", #"exec "$0" "$(printf 'no\376.lua')""#, tool], cwd: box.url, executable: "/bin/sh")
        XCTAssertEqual(missing.status, 1)
        XCTAssertEqual(missing.firstError, #"wobble-run: scene 'no\xFE.lua': no such file"#)
    }
}
