import Foundation
import XCTest
import WobbleTestSupport
@testable import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// The studio's hot-reload watch: inotify, and polling as the fallback.
/// Timing: polls in loops with generous deadlines; sleeps only make time
/// pass, they are never what is asserted.
final class InputWatchTests: XCTestCase {
    /// The test's temporary folder (removed after it).
    private var box: Sandbox!
    var dir: URL!
    var scene: String { dir.appendingPathComponent("scene.lua").path }

    override func setUpWithError() throws {
        box = try Sandbox()
        dir = box.url
        try write(scene, "wait(1)\n")
    }

    override func tearDownWithError() throws {
        box = nil
    }

    /// Writes `text` in place (open, truncate, write, close), like `cat >`.
    func write(_ path: String, _ text: String) throws {
        let fd = PathBytes.withCString(path) { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) } ?? -1
        XCTAssertGreaterThanOrEqual(fd, 0)
        _ = text.utf8CString.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
    }

    /// Polls every 5 ms until a change is reported or `within` seconds pass.
    func report(_ w: InputWatch, extra: [String] = [], within: Double = 5) -> [String]? {
        let deadline = Date().addingTimeInterval(within)
        while Date() < deadline {
            if let c = w.poll(extra: extra) { return c }
            usleep(5000)
        }
        return nil
    }

    /// Polls for `seconds`, returning every report.
    func reports(_ w: InputWatch, extra: [String] = [], for seconds: Double) -> [[String]] {
        var out: [[String]] = []
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let c = w.poll(extra: extra) { out.append(c) }
            usleep(5000)
        }
        return out
    }

    func watches(_ mode: InputWatch.Mode) -> InputWatch {
        let w = InputWatch(scenePath: scene, mode: mode)
        w.reset(extra: [])
        return w
    }

    func testInotifyIsUsedAndAnIdlePollWalksNothing() throws {
        let w = watches(.automatic)
        XCTAssertTrue(w.isEventDriven)
        let scans = w.scans
        XCTAssertTrue(reports(w, for: 0.2).isEmpty)
        XCTAssertEqual(w.scans, scans, "a poll with nothing changed must not scan the folder")
        try write(scene, "wait(2)\n")
        XCTAssertEqual(report(w), ["scene.lua"])
        XCTAssertEqual(w.scans, scans, "one changed file is stat'ed, the tree is not walked")
        XCTAssertTrue(reports(w, for: 0.15).isEmpty, "reported once")
    }

    func testAChangeIsReportedSoonAfterClose() throws {
        let w = watches(.automatic)
        var best = Double.infinity
        // Polled as the studio polls it (every `pollInterval`); the best of
        // five, since on a loaded machine one can be slow.
        for i in 0..<5 {
            try write(scene, "wait(\(i + 2))\n")
            let t0 = Date()
            var got: [String]?
            while got == nil, Date().timeIntervalSince(t0) < 5 {
                usleep(UInt32(w.pollInterval * 1e6))
                got = w.poll(extra: [])
            }
            XCTAssertEqual(got, ["scene.lua"])
            best = min(best, Date().timeIntervalSince(t0))
        }
        // Polling needs two polls 50 ms apart (50–100 ms); events: 20 ms of
        // quiet, seen within 10 ms.
        XCTAssertLessThan(best, 0.05)
    }

    func testWriteInPlaceInChunksIsReportedOnceAfterTheLastWrite() throws {
        let w = watches(.automatic)
        let fd = open(scene, O_WRONLY | O_TRUNC | O_CLOEXEC)
        XCTAssertGreaterThanOrEqual(fd, 0)
        for i in 0..<5 {
            let chunk = "-- chunk \(i)\n"
            _ = chunk.utf8CString.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
            // 25 ms between writes (longer than the quiet time), polling.
            XCTAssertTrue(reports(w, for: 0.025).isEmpty, "reported while the file was still open for writing")
        }
        close(fd)
        XCTAssertEqual(report(w), ["scene.lua"])
        XCTAssertTrue(reports(w, for: 0.15).isEmpty, "reported once")
        XCTAssertTrue(try String(contentsOfFile: scene, encoding: .utf8).hasSuffix("-- chunk 4\n"))
    }

    func checkRenameOver(_ mode: InputWatch.Mode) throws {
        let w = watches(mode)
        let temp = dir.appendingPathComponent(".scene.lua.swp").path
        try write(temp, "wait(3)\n")
        XCTAssertEqual(rename(temp, scene), 0)
        XCTAssertEqual(report(w), ["scene.lua"])
        XCTAssertTrue(reports(w, for: 0.15).isEmpty)
        // And again: the watch follows the new inode.
        try write(temp, "wait(4)\n")
        XCTAssertEqual(rename(temp, scene), 0)
        XCTAssertEqual(report(w), ["scene.lua"])
    }

    func testRenameOverIsSeen() throws { try checkRenameOver(.automatic) }
    func testRenameOverIsSeenPolling() throws { try checkRenameOver(.polling) }

    func checkNewSubfolder(_ mode: InputWatch.Mode) throws {
        let w = watches(mode)
        let sub = dir.appendingPathComponent("parts/deep")
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        try write(sub.appendingPathComponent("arm.lua").path, "x = 1\n")
        XCTAssertEqual(report(w), ["arm.lua"])
        // Its folder is watched from then on.
        try write(sub.appendingPathComponent("arm.lua").path, "x = 22\n")
        XCTAssertEqual(report(w), ["arm.lua"])
        try write(sub.appendingPathComponent("notes.txt").path, "not an input\n")
        try write(dir.appendingPathComponent("scene-take-1.lua").path, "ignored\n")
        w.ignore = { $0.hasPrefix("scene-take-") }
        XCTAssertTrue(reports(w, for: 0.2).isEmpty)
    }

    func testANewSubfolderWithALuaIsSeen() throws { try checkNewSubfolder(.automatic) }
    func testANewSubfolderWithALuaIsSeenPolling() throws { try checkNewSubfolder(.polling) }

    func checkExtraOutside(_ mode: InputWatch.Mode) throws {
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("wobble-watch-extra-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: other) }
        let trace = other.appendingPathComponent("trace.csv").path
        let unrelated = other.appendingPathComponent("other.csv").path
        try write(trace, "t,x\n")
        let w = InputWatch(scenePath: scene, mode: mode)
        w.reset(extra: [trace])
        try write(unrelated, "not named\n")
        XCTAssertTrue(reports(w, extra: [trace], for: 0.2).isEmpty)
        try write(trace, "t,x\n0,1\n")
        XCTAssertEqual(report(w, extra: [trace]), ["trace.csv"])
        try FileManager.default.removeItem(atPath: trace)
        XCTAssertEqual(report(w, extra: [trace]), ["trace.csv"])
    }

    func testAFileOutsideTheFolderGivenAsExtraIsSeen() throws { try checkExtraOutside(.automatic) }
    func testAFileOutsideTheFolderGivenAsExtraIsSeenPolling() throws { try checkExtraOutside(.polling) }

    func testPollingFallbackStillWorks() throws {
        setenv("WOBBLE_WATCH", "poll", 1)
        let forced = InputWatch(scenePath: scene)
        unsetenv("WOBBLE_WATCH")
        XCTAssertFalse(forced.isEventDriven)
        XCTAssertEqual(forced.pollInterval, 0.05)
        let w = watches(.polling)
        XCTAssertFalse(w.isEventDriven)
        try write(scene, "wait(5)\n")
        // Settled over two equal polls: never on the first.
        XCTAssertNil(w.poll(extra: []))
        XCTAssertEqual(report(w), ["scene.lua"])
    }

    func testRunningOutOfWatchesFallsBackToPollingOnce() throws {
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        let w = InputWatch(scenePath: scene)
        var lines: [String] = []
        w.log = { lines.append($0) }
        w.watchLimit = 2
        w.reset(extra: [])
        XCTAssertFalse(w.isEventDriven)
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines.first?.contains("polling") ?? false)
        try write(dir.appendingPathComponent("a/b/leg.lua").path, "x = 1\n")
        XCTAssertEqual(report(w), ["leg.lua"])
        w.reset(extra: [])
        XCTAssertEqual(lines.count, 1)
    }

    func testANameThatIsNotUTF8() throws {
        let w = watches(.automatic)
        let name = PathBytes.string([0x63, 0x61, 0x66, 0xE9, 0x2E, 0x6C, 0x75, 0x61])   // "caf\xE9.lua"
        let path = dir.path + "/" + name
        try write(path, "x = 1\n")
        XCTAssertEqual(report(w), [name])
        try write(path, "x = 2\n")
        XCTAssertEqual(report(w), [name])
        let p = watches(.polling)
        try write(path, "x = 3\n")
        XCTAssertEqual(report(p), [name])
    }

    func testResetLeaksNoWatches() throws {
        let w = watches(.automatic)
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        w.reset(extra: ["/tmp/elsewhere.png"])
        let n = w.watchCount
        XCTAssertEqual(n, 4)   // the scene's folder, a, a/b, /tmp
        for _ in 0..<5 { w.reset(extra: ["/tmp/elsewhere.png"]) }
        XCTAssertEqual(w.watchCount, n)
        w.reset(extra: [])
        XCTAssertEqual(w.watchCount, 3)
        // An extra path no longer named: its folder's watch goes at the next poll.
        w.reset(extra: ["/tmp/elsewhere.png"])
        XCTAssertEqual(w.watchCount, 4)
        _ = w.poll(extra: [])
        XCTAssertEqual(w.watchCount, 3)
    }
}
