import XCTest
import WobbleCore
@testable import WobbleStudio
@testable import WobbleStudioCore

/// The window's keys as the core's commands (the in-process tests drive
/// keys through this map into a running core; here the map itself).
final class StudioKeyMapTests: XCTestCase {
    func command(_ k: StudioKey, shift: Bool = false, ctrl: Bool = false) -> StudioCommand {
        StudioKeyMap.command(k, shift: shift, ctrl: ctrl, addAt: { Point(7, 8) })
    }

    func testKeysMapToCommands() {
        XCTAssertEqual(command(.space), .togglePlay)
        XCTAssertEqual(command(.left), .step(-1))
        XCTAssertEqual(command(.s, ctrl: true), .save)
        XCTAssertEqual(command(.s), .unbound)
        XCTAssertEqual(command(.z, ctrl: true), .undo)
        XCTAssertEqual(command(.z, shift: true, ctrl: true), .redo)
        XCTAssertEqual(command(.y, ctrl: true), .redo)
        XCTAssertEqual(command(.a), .add(at: Point(7, 8)))
        XCTAssertEqual(command(.e, shift: true), .openExportChooser)
        XCTAssertEqual(command(.e), .export(preset: nil))
        XCTAssertEqual(command(.escape), .quit(closing: false))
        XCTAssertEqual(command(.delete), .deleteSelected)
        XCTAssertEqual(command(.backspace), .deleteSelected, "Backspace is Delete")
        XCTAssertEqual(StudioKeyMap.shake(.up), .shake(ax: 0, ay: 1.5))
        XCTAssertNil(StudioKeyMap.shake(.a))
        XCTAssertEqual(StudioKeyMap.answer(.escape, ctrl: false), .quit)
        XCTAssertEqual(StudioKeyMap.answer(.s, ctrl: true), .saveAndQuit)
        XCTAssertEqual(StudioKeyMap.answer(.a, ctrl: false), .back)
        XCTAssertEqual(StudioKeyMap.renaming(.enter), .commitRename)
        XCTAssertNil(StudioKeyMap.renaming(.a))
        XCTAssertEqual(StudioKeyMap.choosing(.down), .chooserMove(1))
        XCTAssertNil(StudioKeyMap.choosing(.other), "a digit comes as text")
        XCTAssertEqual(StudioKeyMap.choosing(.escape), .chooserCancel)
        XCTAssertEqual(StudioKeyMap.commands(text: "4", renaming: false, choosing: true), [.chooserChoose(3)])
        XCTAssertEqual(StudioKeyMap.commands(text: "x", renaming: true, choosing: false), [.type("x")])
        XCTAssertEqual(StudioKeyMap.inspecting(.up, shift: false, selected: true), .focusRow(by: -1))
        XCTAssertNil(StudioKeyMap.inspecting(.up, shift: false, selected: false), "Up without a selection is not the inspector's")
        XCTAssertEqual(StudioKeyMap.inspecting(.pageUp, shift: false, selected: false), .stepParameter(10))
    }

    /// One close of the window (its close event, then SDL's quit event for
    /// the last window, in one batch) is one `.quit`: the first asks before
    /// quitting with unsaved edits, and nothing answers it at once. A close
    /// in a later batch is a second request; SDL's quit event alone is one.
    func testOneCloseOfTheWindowIsOneQuit() {
        var closes = CloseRequests()
        closes.newBatch()
        XCTAssertEqual([closes.quit(windowClose: true), closes.quit(windowClose: false)].compactMap { $0 }, [.quit])
        closes.newBatch()
        XCTAssertEqual(closes.quit(windowClose: true), .quit, "closed again")
        closes.newBatch()
        XCTAssertEqual(closes.quit(windowClose: false), .quit, "a quit event of its own")
    }
}
