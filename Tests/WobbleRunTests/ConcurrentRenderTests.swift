import Foundation
import XCTest
import WobbleCore
import WobbleMedia
#if canImport(Glibc)
import Glibc
#endif

/// Renders racing into one PNG folder (the shared-folder farm workflow):
/// each commit holds the folder's lock, so the folder always holds one whole
/// run's frames and every run that says 0 wrote all of its frames.
final class ConcurrentRenderTests: XCTestCase {
    /// 8×6 image, one region poked at 0; `seconds` of clip at 30 fps.
    private func farm(seconds: Double) throws -> Sandbox {
        let box = try Sandbox()
        try box.writeImage("tiny.png", Sandbox.pattern(width: 8, height: 6))
        try box.write("s.lua", """
        image("tiny.png") local s = addSketch{x = 1, y = 1, w = 6, h = 4} prepare() impulse(s, 1, 0) wait(\(seconds))
        """)
        return box
    }

    /// The widths of the PNG files in `folder` whose names start with `prefix`.
    private func widths(_ box: Sandbox, _ folder: String, prefix: String) throws -> [String: Int] {
        var out: [String: Int] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: box.path(folder)) where name.hasPrefix(prefix) {
            out[name] = try ImageIO.load(path: box.path(folder + "/" + name)).width
        }
        return out
    }

    private func wait(_ p: Process, _ out: Pipe, _ err: Pipe) -> (Int32, String) {
        nonisolated(unsafe) var errData = Data()
        let g = DispatchGroup()
        g.enter()
        DispatchQueue.global().async { errData = err.fileHandleForReading.readDataToEndOfFile(); g.leave() }
        _ = out.fileHandleForReading.readDataToEndOfFile()
        g.wait()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: errData, as: UTF8.self))
    }

    func testACommitWaitsForTheFoldersLockAndTheFolderHoldsOneRunsFrames() throws {
        let box = try farm(seconds: 2)
        try FileManager.default.createDirectory(atPath: box.path("pt"), withIntermediateDirectories: false)
        // Hold the lock of the folder the frame folders are in, as a run in
        // the middle of its commit would.
        let fd = open(box.url.path, O_RDONLY | O_DIRECTORY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        var runs: [(Process, Pipe, Pipe)] = []
        for (width, out) in [(4, "tf/"), (6, "tf/"), (4, "pt/o_%05d.png"), (6, "pt/o_%05d.png")] {
            runs.append(try Tool.start(["s.lua", "--backend", "cpu", "--width", "\(width)", "-o", out], cwd: box.url))
        }
        Thread.sleep(forTimeInterval: 1.5)
        XCTAssertFalse(FileManager.default.fileExists(atPath: box.path("tf")), "nothing is committed while another holds the lock")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: box.path("pt")).filter { !$0.hasPrefix(".") }, [])
        XCTAssertTrue(runs.allSatisfy { $0.0.isRunning }, "the runs wait for the lock")
        XCTAssertEqual(flock(fd, LOCK_UN), 0)
        close(fd)
        for r in runs {
            let (status, stderr) = wait(r.0, r.1, r.2)
            XCTAssertEqual(status, 0, stderr)
        }
        for (folder, prefix) in [("tf", "frame_"), ("pt", "o_")] {
            let w = try widths(box, folder, prefix: prefix)
            XCTAssertEqual(w.count, 60, folder)
            XCTAssertEqual(Set(w.values).count, 1, "\(folder) holds one run's frames: \(Set(w.values))")
        }
        XCTAssertEqual(box.leftovers(), [])
    }

    func testRacingRendersWithSlowRenamesLeaveOneRunsFrames() throws {
        // Every rename of the three runs is slowed by 20 ms (a slow shared
        // volume), so their commits would overlap without the lock.
        let strace = "/usr/bin/strace"
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: strace), "Scripts/install-deps.sh --bench installs strace")
        let box = try farm(seconds: 2)
        try FileManager.default.createDirectory(atPath: box.path("pt"), withIntermediateDirectories: false)
        for out in ["tf/", "pt/o_%05d.png"] {
            var runs: [(Process, Pipe, Pipe)] = []
            for width in [2, 4, 6] {
                runs.append(try Tool.start(["-f", "-qq", "-e", "trace=none", "-e", "inject=renameat2:delay_enter=20000",
                                            Tool.executable.path, "s.lua", "--backend", "cpu", "--width", "\(width)", "-o", out],
                                           cwd: box.url, executable: strace))
            }
            for r in runs {
                let (status, stderr) = wait(r.0, r.1, r.2)
                XCTAssertEqual(status, 0, "\(out): \(stderr)")
            }
            let folder = out == "tf/" ? "tf" : "pt"
            let w = try widths(box, folder, prefix: out == "tf/" ? "frame_" : "o_")
            XCTAssertEqual(w.count, 60, out)
            XCTAssertEqual(Set(w.values).count, 1, "\(out) holds one run's frames: \(w.values.sorted())")
        }
        XCTAssertEqual(box.leftovers(), [])
    }

    func testARunKilledWhileHoldingTheLockDoesNotBlockTheNext() throws {
        let box = try farm(seconds: 0.2)
        // A process holding the lock itself (no child inherits it).
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", "import fcntl, os, sys, time\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.flock(fd, fcntl.LOCK_EX)\ntime.sleep(60)\n", box.url.path]
        try holder.run()
        // Wait until it holds the lock.
        let fd = open(box.url.path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        var held = false
        for _ in 0..<500 where !held {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { flock(fd, LOCK_UN); usleep(10_000) } else { held = true }
        }
        XCTAssertTrue(held)
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        let started = Date()
        let r = try Tool.run(["s.lua", "--backend", "cpu", "-o", "tf/"], cwd: box.url)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "the dead holder's lock went with it")
        XCTAssertEqual(try widths(box, "tf", prefix: "frame_").count, 6)
    }
}
