import Foundation
import XCTest
import WobbleCore
import WobbleMedia
@testable import WobbleEngine
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// A live session on a scene whose folder and name are not UTF-8 (the
/// studio's `wobble-run edit $'d\xfe/bad\xfe\xffname.lua'`): it reads,
/// runs, renders, saves and writes its takes by the exact bytes, as the
/// headless render does (`PathBytes`).
final class PathBytesSessionTests: XCTestCase {
    var root: String!
    /// `<root>/d\xFE`, and the scene `bad\xFE\xFFname.lua` in it (`PathBytes` strings).
    var folder: String!
    var scene: String!
    static let name: [UInt8] = Array("bad".utf8) + [0xFE, 0xFF] + Array("name".utf8)

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("wobble-bytes-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        folder = root + "/" + PathBytes.string(Array("d".utf8) + [0xFE])
        try Posix.mkdir(AT_FDCWD, folder, 0o755, shown: folder)
        XCTAssertFalse(FileManager.default.fileExists(atPath: folder), "the folder's name must not be reachable as UTF-8")
        var px = [UInt8](repeating: 255, count: 40 * 30 * 4)
        for i in 0..<(40 * 30) { px[i * 4] = UInt8(i % 40 * 6); px[i * 4 + 1] = UInt8(i / 40 * 8) }
        try ImageIO.writePNG(RGBAImage(width: 40, height: 30, pixels: px), to: folder + "/img.png")
        scene = folder + "/" + PathBytes.string(PathBytesSessionTests.name + Array(".lua".utf8))
        try write(scene, LiveSessionTests.still)
    }

    override func tearDownWithError() throws {
        if let root, let fd = try? Posix.open(FileManager.default.temporaryDirectory.path, O_RDONLY | O_DIRECTORY) {
            Posix.removeTree(fd, ScenePaths.name(root))
            close(fd)
        }
    }

    /// Writes `text` at `path` (its exact bytes), in place.
    func write(_ path: String, _ text: String) throws {
        let fd = try Posix.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(fd) }
        try Posix.write(fd, Array(text.utf8), shown: path)
    }

    func names(in dir: String) throws -> Set<[UInt8]> {
        let fd = try Posix.open(dir, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        return Set(try Posix.list(fd, shown: dir).map { PathBytes.bytes($0) })
    }

    func testASceneInAFolderThatIsNotUTF8RunsRendersSavesAndWritesATake() throws {
        var o = SessionOptions(scenePath: scene)
        o.backend = .cpu
        let s = LiveSession(options: o)
        XCTAssertTrue(s.run(), s.error?.message ?? "")
        XCTAssertEqual(s.clip?.frameCount, 15)
        XCTAssertEqual(s.sceneText, Array(LiveSessionTests.still.utf8), "the scene's text was read by its bytes")
        XCTAssertTrue(s.inputs.contains(folder + "/img.png"), "\(s.inputs.map { PathBytes.display($0) })")
        // A frame renders.
        let frame = try s.render(try XCTUnwrap(s.frameState(0)))
        XCTAssertEqual(frame.width, 40)
        XCTAssertEqual(frame.height, 30)
        // The sketch is the scene's own call: editable, with its line.
        XCTAssertNotNil(s.editableCall(0).call, s.editableCall(0).problem ?? "")
        XCTAssertEqual(s.handleShapes(atFrame: 0).first?.origin?.line, 2)

        // A take beside it: `bad\xFE\xFFname-take-1.lua` in `d\xFE`.
        var take = Take()
        take.events = [(200, .touch(from: Point(20, 15), to: Point(25, 15)))]
        XCTAssertTrue(s.performing(take.events.map { Take.performed(milliseconds: $0.milliseconds, action: $0.action) }))
        let written = try take.write(scenePath: scene, recordedSeconds: 2, options: s.options)
        let takeName = PathBytesSessionTests.name + Array("-take-1.lua".utf8)
        XCTAssertEqual(PathBytes.bytes(written), PathBytes.bytes(folder) + [0x2F] + takeName)
        let inFolder = try names(in: folder)
        XCTAssertTrue(inFolder.contains(takeName), "\(inFolder.map { PathBytes.display(PathBytes.string($0)) })")
        XCTAssertFalse(inFolder.contains { $0.first == UInt8(ascii: ".") }, "the hidden check file is removed")
        let text = String(decoding: try Posix.readFile(written), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix(LiveSessionTests.still + "\n"), text)
        XCTAssertTrue(text.contains(#"`wobble-run edit bad\xFE\xFFname.lua`"#), text)
        XCTAssertTrue(text.hasSuffix("touch(20, 15, 25, 15)\nuntilStill()\n"), text)
        XCTAssertEqual(PathBytes.bytes(Take.freePath(scenePath: scene)),
                       PathBytes.bytes(folder) + [0x2F] + PathBytesSessionTests.name + Array("-take-2.lua".utf8))
        let replay = LiveSession(options: SessionOptions(scenePath: written))
        XCTAssertTrue(replay.run(), replay.error?.message ?? "")
        XCTAssertEqual(replay.clip?.frameCount, s.clip?.frameCount)

        // Saving a dragged sketch writes the scene by its bytes.
        var p = s.sketchCalls[0].points
        p.lt = Point(10, 7)
        s.sketchOverrides[0] = p
        XCTAssertEqual(try s.saveEdits().edited, 1)
        let saved = String(decoding: try Posix.readFile(scene), as: UTF8.self)
        XCTAssertTrue(saved.contains("10") && saved != LiveSessionTests.still, saved)
        XCTAssertNil(s.error)

        // A failing run: Lua's message names the scene by its bytes, shown as `\xFE`.
        try write(scene, "image('img.png')\nwait(0.1)\nerror('boom')\n")
        XCTAssertFalse(s.run())
        XCTAssertTrue(PathBytes.display(s.error?.message ?? "").hasSuffix(#"bad\xFE\xFFname.lua:3: boom"#), s.error?.message ?? "")
        XCTAssertNotNil(s.clip, "the last good clip stays")

        // A scene that is not there names it as the CLI does.
        let missing = LiveSession(options: SessionOptions(scenePath: folder + "/" + PathBytes.string(Array("no".utf8) + [0xFE] + Array(".lua".utf8))))
        XCTAssertFalse(missing.run())
        XCTAssertTrue(PathBytes.display(missing.error?.message ?? "").hasSuffix(#"d\xFE/no\xFE.lua': no such file"#), missing.error?.message ?? "")
    }

    /// From inside such a folder, by a relative name (the current folder is
    /// not UTF-8 either): the run, the take's relative path and the watch.
    func testARelativeSceneInACurrentFolderThatIsNotUTF8() throws {
        let saved = ScenePaths.currentDirectory()
        XCTAssertEqual(PathBytes.withCString(folder) { chdir($0) }, 0)
        defer { _ = PathBytes.withCString(saved) { chdir($0) } }
        XCTAssertEqual(ScenePaths.currentDirectory(), folder)
        let relative = ScenePaths.name(scene)
        XCTAssertEqual(ScenePaths.absolute(relative), scene)
        let s = LiveSession(options: SessionOptions(scenePath: relative))
        XCTAssertTrue(s.run(), s.error?.message ?? "")
        XCTAssertEqual(PathBytes.bytes(Take.freePath(scenePath: relative)), PathBytesSessionTests.name + Array("-take-1.lua".utf8))

        // Hot reload sees the scene change (polling and inotify alike).
        for mode in [InputWatch.Mode.polling, .automatic] {
            let w = InputWatch(scenePath: relative, mode: mode)
            XCTAssertEqual(w.scenePath, scene)
            w.reset(extra: s.inputs)
            usleep(20_000)
            try write(scene, LiveSessionTests.still + "wait(0.5)\n")
            var changed: [String]?
            let deadline = Date().addingTimeInterval(5)
            while changed == nil, Date() < deadline {
                changed = w.poll(extra: s.inputs)
                usleep(5000)
            }
            XCTAssertEqual(changed, [ScenePaths.name(scene)], "\(mode)")
        }
        XCTAssertTrue(s.run(), s.error?.message ?? "")
        XCTAssertEqual(s.clip?.frameCount, 30)
    }
}
