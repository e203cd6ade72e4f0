import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleScript
@testable import WobbleEngine

/// Exports and takes run in-process (the studio's `E`, `Shift+E` and `R`):
/// on a worker, cancellable, leaving nothing behind when cancelled.
final class ExportJobTests: SessionTestCase {
    /// A scene whose frames take a while (600 frames on the CPU renderer).
    static let long = """
    image("img.png")
    fps(30)
    local r = addSketch{x = 4, y = 4, w = 32, h = 22, duration = 30, motion = "spring", damping = 0.01}
    prepare()
    impulse(r, 1, 0.5)
    wait(20)
    """

    /// A scene whose script runs for a long time before its first frame.
    static let busy = """
    image("img.png")
    local x = 0
    for i = 1, 2000000000 do x = x + i end
    addSketch{x = 8, y = 6, w = 24, h = 18}
    prepare()
    wait(0.5)
    """

    func options(_ scene: String) -> RenderOptions {
        var o = RenderOptions()
        o.scene = scene
        o.backend = .cpu
        o.outputFolder = dir.path
        return o
    }

    func files() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
    }

    /// Waits (real time) until `done` holds; false after `seconds`.
    func waitUntil(_ seconds: Double, _ done: () -> Bool) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if done() { return true }
            usleep(5_000)
        }
        return done()
    }

    /// Cancels `job` ("the studio quit") once it wrote two frames; its
    /// outcome says it was cancelled and why, and names no file.
    func cancelAfterTwoFrames(_ job: ExportJob) throws {
        XCTAssertTrue(waitUntil(60) { job.progress.done >= 2 || job.outcome != nil }, "no frame was written")
        XCTAssertNil(job.outcome, "the export ended before it could be cancelled")
        job.cancel("the studio quit")
        XCTAssertTrue(job.wait(seconds: 30), "the export did not stop")
        let out = try XCTUnwrap(job.outcome)
        XCTAssertTrue(out.cancelled)
        XCTAssertEqual(out.error, "the studio quit")
        XCTAssertNil(out.output)
    }

    func testAnExportWritesTheScenesOutputBesideItAndSaysWhat() throws {
        let scene = try scene(LiveSessionTests.still.replacingOccurrences(of: "prepare()", with: "prepare()\ntouch(20, 15, 25, 15)"))
        let job = ExportJob(options: options(scene))
        XCTAssertTrue(job.wait(seconds: 60))
        let out = try XCTUnwrap(job.outcome)
        XCTAssertNil(out.error)
        XCTAssertFalse(out.cancelled)
        XCTAssertEqual(out.output, dir.appendingPathComponent("scene.gif").path, "beside the scene, wherever the process is")
        let bytes = try Data(contentsOf: dir.appendingPathComponent("scene.gif"))
        XCTAssertEqual(out.bytes, bytes.count)
        XCTAssertEqual(bytes.prefix(6), Data("GIF89a".utf8))
        XCTAssertEqual(out.frames, 15)
        XCTAssertEqual(job.progress.done, 15)
        XCTAssertEqual(job.progress.total, 15)
        XCTAssertTrue(out.summary?.hasPrefix("wrote \(dir.path)/scene.gif: 15 frames, 40×30, 0.5 s at 30 fps") ?? false, out.summary ?? "")
    }

    /// Cancelled between frames: the sink removes what it wrote, the
    /// outcome says it was cancelled and why.
    func testACancelledExportLeavesNoFileAndSaysSo() throws {
        let scene = try scene(Self.long)
        let job = ExportJob(options: options(scene))
        try cancelAfterTwoFrames(job)
        XCTAssertLessThan(job.progress.done, 600)
        XCTAssertEqual(try files(), ["img.png", "scene.lua"], "nothing left beside the scene")
    }

    /// Cancelled while the script runs (before any frame): the count hook stops it.
    func testAnExportCancelledInItsScriptStops() throws {
        let job = ExportJob(options: options(try scene(Self.busy)))
        usleep(300_000)
        XCTAssertNil(job.outcome)
        job.cancel("stopped by the test")
        XCTAssertTrue(job.wait(seconds: 30), "the script did not stop")
        XCTAssertEqual(job.outcome?.cancelled, true)
        XCTAssertEqual(job.outcome?.error, "stopped by the test")
        XCTAssertEqual(try files(), ["img.png", "scene.lua"])
    }

    /// `--timeout` in-process: the script stops with the command line's
    /// message, and the process goes on (nothing exits it).
    func testTheTimeoutStopsAnExportWithoutEndingTheProcess() throws {
        var o = options(try scene(Self.busy))
        o.timeout = 0.3
        let job = ExportJob(options: o)
        XCTAssertTrue(job.wait(seconds: 30))
        let out = try XCTUnwrap(job.outcome)
        XCTAssertFalse(out.cancelled)
        XCTAssertTrue(out.error?.contains("timed out after 0.3 s") ?? false, out.error ?? "")
        XCTAssertEqual(try files(), ["img.png", "scene.lua"])
    }

    /// A preset export: the file fits the platform and the outcome says
    /// its size, frame and length (what `Shift+E` reports).
    func testAPresetExportReportsWhatTheLimitsAreChecked() throws {
        var o = options(try scene(LiveSessionTests.still.replacingOccurrences(of: "prepare()", with: "prepare()\ntouch(20, 15, 25, 15)")))
        o.preset = try Preset.named("discord")
        let job = ExportJob(options: o)
        XCTAssertTrue(job.wait(seconds: 120))
        let out = try XCTUnwrap(job.outcome)
        XCTAssertNil(out.error)
        let path = dir.appendingPathComponent("scene-discord.png").path
        XCTAssertEqual(out.output, path)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        XCTAssertEqual(out.bytes, size)
        XCTAssertLessThanOrEqual(out.bytes ?? .max, 512 * 1024)
        XCTAssertEqual(out.width, 320)
        XCTAssertEqual(out.height, 320)
        XCTAssertEqual(out.seconds ?? 0, 0.5, accuracy: 1e-9)
        XCTAssertEqual(try files(), ["img.png", "scene-discord.png", "scene.lua"], "no trial left")
    }

    /// A take's check run, cancelled from another thread: neither the take
    /// nor the hidden file it is checked from is left, and it says so.
    func testACancelledTakeLeavesNoFile() throws {
        let path = try scene(Self.busy)
        var take = Take()
        take.events = [(200, .touch(from: Point(20, 15), to: Point(24, 15)))]
        let control = RunControl()
        let done = DispatchSemaphore(value: 0)
        let result = Result<String, Error>.Box()
        let options = SessionOptions(scenePath: path)
        DispatchQueue.global().async { [take] in
            result.set(Result { try take.write(scenePath: path, recordedSeconds: 1, options: options, control: control) })
            done.signal()
        }
        XCTAssertTrue(waitUntil(30) { ((try? self.files()) ?? []).contains { $0.hasPrefix(".scene-take-check") } }, "the check never started")
        control.cancel("the studio quit")
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "the take's run did not stop")
        guard case .failure(let error)? = result.value else { return XCTFail("the take was written: \(String(describing: result.value))") }
        XCTAssertTrue(error is Interrupted, "\(error)")
        XCTAssertEqual(control.reason, "the studio quit")
        XCTAssertEqual(try files(), ["img.png", "scene.lua"], "no take, no hidden check file")
    }

    /// A take renders through the same job as the scene: the file the take
    /// writes, exported in-process and cancelled, leaves no output beside it.
    func testATakesSceneExportsInProcessAndIsCancelled() throws {
        let path = try scene(Self.long)
        var take = Take()
        take.events = [(100, .touch(from: Point(20, 15), to: Point(24, 15)))]
        let written = try take.write(scenePath: path, recordedSeconds: 1, options: SessionOptions(scenePath: path))
        XCTAssertEqual(written, dir.appendingPathComponent("scene-take-1.lua").path)
        let job = ExportJob(options: options(written))
        try cancelAfterTwoFrames(job)
        XCTAssertGreaterThan(job.progress.total, 600, "the take's clip: the scene's and the take's second")
        XCTAssertEqual(try files(), ["img.png", "scene-take-1.lua", "scene.lua"], "nothing left beside the take")
    }

    /// A take's write on a worker (`TakeJob`, what the studio's `R` runs):
    /// written, or cancelled in its check with nothing left.
    func testATakeJobWritesOrIsCancelled() throws {
        let path = try scene(LiveSessionTests.still)
        var take = Take()
        take.events = [(100, .touch(from: Point(20, 15), to: Point(24, 15)))]
        let done = TakeJob(take: take, scenePath: path, sceneText: nil, recordedSeconds: 0.5, loop: nil,
                           options: SessionOptions(scenePath: path))
        XCTAssertTrue(done.wait(seconds: 60))
        XCTAssertEqual(done.outcome, TakeJob.Outcome(path: dir.appendingPathComponent("scene-take-1.lua").path))
        try FileManager.default.removeItem(at: dir.appendingPathComponent("scene-take-1.lua"))

        let busy = try scene(Self.busy)
        let job = TakeJob(take: take, scenePath: busy, sceneText: nil, recordedSeconds: 0.5, loop: nil,
                          options: SessionOptions(scenePath: busy))
        XCTAssertTrue(waitUntil(30) { ((try? self.files()) ?? []).contains { $0.hasPrefix(".scene-take-check") } }, "the check never started")
        XCTAssertNil(job.outcome)
        job.cancel("the studio quit")
        XCTAssertTrue(job.wait(seconds: 30), "the take's check did not stop")
        XCTAssertEqual(job.outcome, TakeJob.Outcome(path: nil, error: "the studio quit", cancelled: true))
        XCTAssertEqual(try files(), ["img.png", "scene.lua"], "no take, no hidden check file")
    }
}

extension Result where Failure == Error {
    /// A result handed from a worker thread to the test.
    final class Box: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Result?
        var value: Result? { lock.withLock { stored } }
        func set(_ r: Result) { lock.withLock { stored = r } }
    }
}
