import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
import WobbleCore
import WobbleMedia
import WobbleSystem
@testable import WobbleEngine

/// The studio's and the browser studio's writers (exports, masks, takes,
/// `.unsaved.lua`) against a link planted under the name they choose: the
/// link is replaced (or the name skipped), never written through; the file
/// outside stays byte for byte what it was.
final class PlantedLinkSessionTests: SessionTestCase {
    let victimBytes = Data("precious, not to be overwritten\n".utf8)
    var victim: String { dir.appendingPathComponent("outside/victim").path }
    let fm = FileManager.default

    override func setUpWithError() throws {
        try super.setUpWithError()
        try fm.createDirectory(at: dir.appendingPathComponent("outside"), withIntermediateDirectories: true)
        try victimBytes.write(to: URL(fileURLWithPath: victim))
    }

    func assertVictimIntact(_ what: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: victim)), victimBytes, "\(what): the file outside changed", file: file, line: line)
        XCTAssertEqual(try fm.contentsOfDirectory(atPath: dir.appendingPathComponent("outside").path), ["victim"], what, file: file, line: line)
    }

    func options(_ scene: String, preset: String? = nil) throws -> RenderOptions {
        var o = RenderOptions()
        o.scene = scene
        o.backend = .cpu
        o.outputFolder = dir.path
        o.preset = try preset.map { try Preset.named($0) }
        return o
    }

    static let poke = """
    image("img.png")
    local r = addSketch{x = 8, y = 6, w = 24, h = 18}
    prepare()
    impulse(r, 1, 0)
    wait(0.3)
    """

    /// `E` for a scene without `output()`: `scene.gif` beside the scene.
    func testAnExportReplacesALinkPlantedAtItsName() throws {
        let scene = try scene(Self.poke)
        for target in ["outside/victim", "outside/nowhere.gif", "/dev/null"] {
            let out = dir.appendingPathComponent("scene.gif").path
            try? fm.removeItem(atPath: out)
            try fm.createSymbolicLink(atPath: out, withDestinationPath: target)
            let job = ExportJob(options: try options(scene))
            XCTAssertTrue(job.wait(seconds: 60))
            let o = try XCTUnwrap(job.outcome)
            XCTAssertNil(o.error, target)
            XCTAssertEqual(Posix.kind(out, follow: false), .regular, target)
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)).prefix(6), Data("GIF89a".utf8))
            try assertVictimIntact(target)
        }
    }

    /// `Shift+E` (a preset, `scene-telegram.webm`): the same.
    func testAPresetExportReplacesALinkPlantedAtItsName() throws {
        try XCTSkipUnless(ChildProcess.findExecutable("ffmpeg") != nil, "needs ffmpeg")
        let scene = try scene(Self.poke)
        let out = dir.appendingPathComponent("scene-telegram.webm").path
        try fm.createSymbolicLink(atPath: out, withDestinationPath: "outside/victim")
        let job = ExportJob(options: try options(scene, preset: "telegram"))
        XCTAssertTrue(job.wait(seconds: 300))
        let o = try XCTUnwrap(job.outcome)
        XCTAssertNil(o.error)
        XCTAssertEqual(o.output, out)
        XCTAssertEqual(Posix.kind(out, follow: false), .regular)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)).prefix(4), Data([0x1A, 0x45, 0xDF, 0xA3]), "a WebM (EBML) file")
        try assertVictimIntact("telegram")
        // A FIFO under that name: one line, at once, the FIFO left alone.
        try fm.removeItem(atPath: out)
        XCTAssertEqual(mkfifo(out, 0o644), 0)
        let fifo = ExportJob(options: try options(scene, preset: "telegram"))
        XCTAssertTrue(fifo.wait(seconds: 300))
        XCTAssertEqual(fifo.outcome?.error, "output '\(out)': is a FIFO, not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)")
        XCTAssertEqual(Posix.kind(out, follow: false), .fifo)
    }

    /// `<scene>-masks` planted as a link to a folder outside: the masks
    /// are not written there (they were).
    func testMasksAreNeverSavedThroughALinkedFolder() throws {
        let text = """
            image("img.png")
            local disc = addSketch{x = 8, y = 6, w = 24, h = 18, pin = "bottom"}
            prepare()
            wait(0.1)
            """
        let path = try scene(text)
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("scene-masks").path, withDestinationPath: "outside")
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var state = try XCTUnwrap(s.baseState(0))
        var mask = GreyMask(width: 40, height: 30)
        for y in 8..<20 { for x in 10..<30 { mask.pixels[y * 40 + x] = 255 } }
        state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: mask)), shape: state.points.shape, place: nil)
        s.setState(.call(0), state)
        XCTAssertThrowsError(try s.saveEdits()) { e in
            XCTAssertEqual("\(e)", "not saved: \(dir.path)/scene-masks is a symbolic link; the cutout masks go into a folder of that name beside the scene, never through a link (remove it)")
        }
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), text, "the scene is untouched")
        XCTAssertTrue(s.hasUnsavedEdits)
        try assertVictimIntact("masks")
        // A link planted at the mask's own name: the name is skipped.
        try fm.removeItem(atPath: dir.appendingPathComponent("scene-masks").path)
        try fm.createDirectory(at: dir.appendingPathComponent("scene-masks"), withIntermediateDirectories: false)
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("scene-masks/disc.png").path, withDestinationPath: "../outside/victim")
        try s.saveEdits()
        XCTAssertEqual(s.savedMasks, [dir.appendingPathComponent("scene-masks").path + "/disc-2.png"])
        XCTAssertEqual(Posix.kind(dir.appendingPathComponent("scene-masks/disc.png").path, follow: false), .link)
        try assertVictimIntact("mask name")
    }

    /// A take is checked from a hidden file beside the scene; a hard link
    /// (or a FIFO) planted under that name was written through (opened
    /// with O_TRUNC; a FIFO waited forever).
    func testATakesCheckFileNeverWritesThroughWhatIsPlantedThere() throws {
        let path = try scene(Self.poke)
        let hidden = dir.appendingPathComponent(".scene-take-check-\(ThisProcess.id).lua").path
        var take = Take()
        take.events = [(100, .touch(from: Point(20, 15), to: Point(24, 15)))]
        for plant in ["hard link", "symbolic link", "fifo"] {
            try? fm.removeItem(atPath: hidden)
            switch plant {
            case "hard link": XCTAssertEqual(Glibc.link(victim, hidden), 0)
            case "symbolic link": try fm.createSymbolicLink(atPath: hidden, withDestinationPath: "outside/victim")
            default: XCTAssertEqual(mkfifo(hidden, 0o644), 0)
            }
            do {
                let written = try take.write(scenePath: path, recordedSeconds: 0.5, options: SessionOptions(scenePath: path))
                XCTAssertNotEqual(plant, "fifo", "a FIFO there is refused")
                XCTAssertTrue(try String(contentsOfFile: written, encoding: .utf8).hasPrefix(Self.poke), plant)
                try fm.removeItem(atPath: written)
            } catch {
                XCTAssertEqual(plant, "fifo", "\(error)")
                XCTAssertEqual("\(error)", "cannot write beside \(path): output '\(hidden)': is a FIFO, not a file; not written (this name is chosen by wobble-run, so it is never written through: move it away)")
            }
            try assertVictimIntact(plant)
        }
    }

    /// `<scene>.unsaved.lua` planted as a dangling link (or a link to a
    /// file outside): the next free name is used; nothing is created or
    /// changed through the link.
    func testTheUnsavedFileSkipsAPlantedLink() throws {
        let text = """
            image("img.png")
            addSketch{x = 10, y = 10, w = 20, h = 10}
            prepare()
            wait(0.1)
            """
        let path = try scene(text)
        let s = LiveSession(options: SessionOptions(scenePath: path))
        XCTAssertTrue(s.run())
        var state = try XCTUnwrap(s.baseState(0))
        state.points = SketchPoints(lt: Point(0, 0), rt: Point(30, 0), rb: Point(30, 20), lb: Point(0, 20))
        s.setState(.call(0), state)
        try fm.removeItem(atPath: path)
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("scene.unsaved.lua").path, withDestinationPath: "outside/new.lua")
        try fm.createSymbolicLink(atPath: dir.appendingPathComponent("scene.unsaved-2.lua").path, withDestinationPath: "outside/victim")
        let written = try s.writeUnsaved()
        XCTAssertEqual(written, dir.appendingPathComponent("scene.unsaved-3.lua").path)
        XCTAssertEqual(Posix.kind(written, follow: false), .regular)
        try assertVictimIntact("unsaved")
    }
}
