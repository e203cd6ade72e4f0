import Foundation
import XCTest
import WobbleCore
import WobbleScript
@testable import WobbleEngine

/// An edit made right after a save, before the saved scene's run lands (a
/// run takes from milliseconds to seconds): it is made on the sketch as
/// saved (the preview does not jump back to the text before the save),
/// and the next save writes it. It was refused ("was changed on disk as
/// well": the studio's own save looked like another program's), the edits
/// kept pending for good.
final class SaveThenEditTests: SessionTestCase {
    static let text = """
    image("img.png")
    local body = addSketch{x = 4, y = 4, w = 20, h = 16}
    prepare()
    impulse(body, 1, 0.5)
    wait(0.5)

    """

    /// The scene run once, its sketch edited (`strength = 0.2`) and saved
    /// without running the saved text: the session, the scene's path and the
    /// sketch saved.
    func savedWithoutItsRun() throws -> (LiveSession, String, SketchState) {
        let path = try scene(Self.text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var first = try XCTUnwrap(s.baseState(0))
        first.parameters.strength = 0.2
        s.setState(.call(0), first)
        try s.saveEdits(runAfter: false)
        return (s, path, first)
    }

    func testAnEditBeforeTheSavedRunLandsIsSavedToo() throws {
        let (s, path, first) = try savedWithoutItsRun()
        let once = Self.text.replacingOccurrences(of: "h = 16}", with: "h = 16, strength = 0.2}")
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), once)
        // Before any run: the sketch is the one saved.
        XCTAssertEqual(s.currentState(.call(0)), first)
        XCTAssertFalse(s.hasUnsavedEdits)
        var second = first
        second.parameters.strength = 0.4
        s.setState(.call(0), second)
        XCTAssertTrue(s.hasUnsavedEdits)
        try s.saveEdits(runAfter: false)
        let twice = Self.text.replacingOccurrences(of: "h = 16}", with: "h = 16, strength = 0.4}")
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), twice)
        // The run of the saved text: nothing pending, the file's sketch.
        XCTAssertTrue(s.run())
        XCTAssertFalse(s.hasUnsavedEdits)
        XCTAssertEqual(s.baseState(0), second)
        // Setting the saved sketch again is no edit.
        s.setState(.call(0), second)
        XCTAssertFalse(s.hasUnsavedEdits)
    }

    /// Another program's save after the studio's, before the studio's run
    /// lands, still conflicts where it changed the same call.
    func testAnotherProgramsChangeAfterTheSaveStillConflicts() throws {
        let (s, path, first) = try savedWithoutItsRun()
        let theirs = Self.text.replacingOccurrences(of: "h = 16}", with: "h = 16, strength = 0.9}")
        try theirs.write(toFile: path, atomically: true, encoding: .utf8)
        var second = first
        second.parameters.strength = 0.4
        s.setState(.call(0), second)
        XCTAssertThrowsError(try s.saveEdits(runAfter: false)) { e in
            XCTAssertEqual("\(e)", "not saved: body (\(path):2) was changed on disk as well; the edits stay pending (Ctrl+Z undoes them)")
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), theirs)
    }
}
