import Foundation
import Synchronization
import XCTest
import WobbleCore
import WobbleMedia
@testable import WobbleEngine
#if canImport(Glibc)
import Glibc
#endif

/// Two studios saving one scene, and an editor saving while a studio
/// saves: no acknowledged edit is ever lost.
final class ConcurrentSaveTests: SessionTestCase {
    override func image() -> RGBAImage {
        RGBAImage(width: 200, height: 150, pixels: [UInt8](repeating: 200, count: 200 * 150 * 4))
    }

    static let text = """
    image("img.png")
    local a = addSketch{x = 10, y = 10, w = 50, h = 40}
    local b = addSketch{x = 100, y = 10, w = 50, h = 40}
    prepare()
    wait(0.1)

    """

    /// A session on `path` with sketch `ordinal`'s left-top corner dragged to `to`.
    private func session(_ path: String, dragging ordinal: Int, to: Point) -> LiveSession {
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var p = s.sketchCalls[ordinal].points
        p.lt = to
        s.sketchOverrides[ordinal] = p
        return s
    }

    /// Studios editing the same constructor: one save wins, the others
    /// conflict (saves of other constructors merge:
    /// SketchEditTests.testASaveByAnotherProgramIsMergedUnlessItChangedTheSameConstructor).
    func testOfManyStudiosSavingAtOnceOneSucceedsAndTheOthersKeepTheirEditsPending() throws {
        for trial in 0..<6 {
            let path = try scene(ConcurrentSaveTests.text)
            // Each session is used by one thread only.
            nonisolated(unsafe) let sessions = (0..<4).map { session(path, dragging: 0, to: Point(Double(1 + $0), Double(2 + trial))) }
            let results = Mutex<[Int: Bool]>([:])
            DispatchQueue.concurrentPerform(iterations: sessions.count) { i in
                let ok = (try? sessions[i].saveEdits(runAfter: false)) != nil
                results.withLock { $0[i] = ok }
            }
            let saved = results.withLock { $0 }.filter(\.value).map(\.key)
            XCTAssertEqual(saved.count, 1, "trial \(trial): exactly one save wins: \(saved)")
            guard let winner = saved.first else { continue }
            let text = try String(contentsOfFile: path, encoding: .utf8)
            let corner = "lt = {\(1 + winner), \(2 + trial)}"
            XCTAssertTrue(text.contains(corner), "trial \(trial): the winner's edit is in the file:\n\(text)")
            for i in sessions.indices where i != winner {
                XCTAssertTrue(sessions[i].hasUnsavedEdits, "trial \(trial): a refused save keeps its edits pending")
            }
        }
    }

    func testAnEditorSaveDuringTheStudiosSaveIsNotOverwritten() throws {
        let path = try scene(ConcurrentSaveTests.text)
        // Used by the saving thread only, once this one has set it up.
        nonisolated(unsafe) let s = session(path, dragging: 0, to: Point(3, 4))
        // Hold the folder's lock as a slow save of another studio would,
        // start the save (it waits), then save from an "editor", which
        // takes no lock, and let the save go on.
        let fd = open(dir.path, O_RDONLY | O_DIRECTORY)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<String?>(nil)
        DispatchQueue.global().async {
            do { _ = try s.saveEdits(runAfter: false); outcome.withLock { $0 = "saved" } }
            catch { outcome.withLock { $0 = "\(error)" } }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 0.3), .timedOut, "the save waits for the lock")
        let editor = ConcurrentSaveTests.text + "-- a comment the editor added\n"
        try editor.write(toFile: path, atomically: true, encoding: .utf8)
        XCTAssertEqual(flock(fd, LOCK_UN), 0)
        close(fd)
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        // The studio's save then merges into the editor's text: both stay.
        XCTAssertEqual(outcome.withLock { $0 }, "saved")
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8),
                       editor.replacingOccurrences(of: "local a = addSketch{x = 10, y = 10, w = 50, h = 40}",
                                                   with: "local a = addSketch{lt = {3, 4}, rt = {60, 10}, rb = {60, 50}, lb = {10, 50}}"),
                       "the editor's save stays")
        XCTAssertFalse(s.hasUnsavedEdits)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted(), ["img.png", "scene.lua"], "no temporary file left")
    }
}
