import Foundation
import XCTest
import WobbleCore
import WobbleMedia
import WobbleScript
@testable import WobbleEngine

/// Runs of a live session off the thread that owns it (the studio's hot
/// reload): the old clip serves frames while the scene runs again; asks
/// made meanwhile coalesce; a run whose inputs changed meanwhile is
/// dropped and made again; a run in flight can be abandoned.
final class BackgroundRunTests: SessionTestCase {
    var scenePath: String { dir.appendingPathComponent("scene.lua").path }
    var logPath: String { dir.appendingPathComponent("runs.log").path }
    var gatePath: String { dir.appendingPathComponent("gate").path }

    /// A scene that logs `begin`, then (when `gated`) spins until the gate
    /// file exists, then logs `end`: a run that lasts until the test says.
    func writeScene(gated: Bool, width: Int = 24) throws {
        let wait = gated ? """
        while true do local f = io.open("\(gatePath)") if f then f:close() break end end
        """ : ""
        let text = """
        local function log(s) local f = io.open("\(logPath)", "a") f:write(s, "\\n") f:close() end
        log("begin")
        \(wait)
        image("img.png")
        addSketch{x = 8, y = 6, w = \(width), h = 18}
        prepare()
        wait(0.5)
        log("end")
        """
        try text.write(toFile: scenePath, atomically: true, encoding: .utf8)
    }

    func session() -> LiveSession {
        var o = SessionOptions(scenePath: scenePath)
        o.allowIO = true
        o.backend = .cpu
        o.timeout = 20
        return LiveSession(options: o)
    }

    var log: [String] {
        ((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func openGate() { _ = FileManager.default.createFile(atPath: gatePath, contents: Data()) }

    /// Serves (state, render) frames of the session's clip until `done`.
    @discardableResult
    func serveFrames(_ s: LiveSession, timeout: Double = 10, until done: () -> Bool) throws -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var served = 0
        while !done() {
            guard Date() < deadline else { XCTFail("timed out"); break }
            if let state = s.frameState(served % 15) {
                _ = try s.render(state)
                served += 1
            }
        }
        return served
    }

    /// Collects until no run is in flight; what each collect said.
    func collectAll(_ s: LiveSession) throws -> [LiveSession.Collected] {
        var seen: [LiveSession.Collected] = []
        try serveFrames(s) {
            if let c = s.collectRun() { seen.append(c) }
            return !s.isRunning
        }
        return seen
    }

    func testTheOldClipServesFramesWhileTheSceneRunsOnAnotherThread() throws {
        try writeScene(gated: false)
        let s = session()
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.generation, 1)
        let old = s.clip?.frame(3)
        try writeScene(gated: true, width: 20)
        s.requestRun()
        XCTAssertTrue(s.isRunning)
        // The run is in the scene's loop, on its thread, until the gate
        // opens: meanwhile this thread renders frames of the old clip.
        try serveFrames(s) { log.count >= 3 }
        XCTAssertEqual(log, ["begin", "end", "begin"])
        var asked = 0
        let served = try serveFrames(s) { asked += 1; return asked > 20 }
        XCTAssertEqual(served, 20)
        XCTAssertNil(s.collectRun(), "the run cannot have finished: the gate is shut")
        XCTAssertEqual(s.generation, 1)
        XCTAssertEqual(s.clip?.frame(3), old)
        openGate()
        XCTAssertEqual(try collectAll(s), [.committed(true)])
        XCTAssertEqual(s.generation, 2)
        XCTAssertEqual(log, ["begin", "end", "begin", "end"])
        XCTAssertEqual(s.sketchCalls.first?.points.rt.x, 28, "the new run's sketch")
    }

    func testAsksWhileARunIsInFlightMakeOneMoreRun() throws {
        try writeScene(gated: true)
        let s = session()
        s.requestRun()
        try serveFrames(s) { log.count >= 1 }
        for _ in 0..<5 { s.requestRun() }
        openGate()
        XCTAssertEqual(try collectAll(s), [.committed(true), .committed(true)])
        XCTAssertEqual(log, ["begin", "end", "begin", "end"], "one run at a time, and the five asks made one")
        XCTAssertEqual(s.generation, 2)
    }

    func testARunWhoseEventsChangedMeanwhileIsDroppedAndMadeAgain() throws {
        try writeScene(gated: false)
        let s = session()
        XCTAssertTrue(s.run())
        XCTAssertTrue(s.frameState(12)?.regions.isEmpty ?? false)
        try writeScene(gated: true)
        s.requestRun()
        try serveFrames(s) { log.count >= 3 }
        // A poke and a drag while the run is in the script: it ran
        // without them, so it is run again with them (its clip is shown
        // meanwhile, as the clip of the inputs it ran with).
        let poke = PerformedEvent(time: 0.2, action: .touch(from: Point(20, 15), to: Point(25, 15)))
        s.setPerformed([poke])
        s.sketchOverrides[0] = .square(centeredAt: Point(20, 15))
        s.requestRun()
        openGate()
        var seen: [LiveSession.Collected] = []
        try serveFrames(s) {
            guard let c = s.collectRun() else { return false }
            seen.append(c)
            return true
        }
        XCTAssertEqual(seen, [.superseded(shown: true)])
        XCTAssertTrue(s.isRunning, "it runs again with them")
        XCTAssertEqual(s.generation, 2)
        XCTAssertTrue(s.frameState(12)?.regions.isEmpty ?? false, "the clip shown meanwhile is the one without the poke")
        XCTAssertEqual(s.runInputs.performed, [poke], "the poke is not lost")
        XCTAssertEqual(try collectAll(s), [.committed(true)])
        XCTAssertEqual(log, ["begin", "end", "begin", "end", "begin", "end"])
        XCTAssertEqual(s.generation, 3)
        XCTAssertEqual(s.runInputs.performed, [poke])
        XCTAssertFalse(s.frameState(12)?.regions.isEmpty ?? true, "the committed clip has the poke")
        XCTAssertEqual(s.clip?.frame(2).regions.isEmpty, true, "and nothing before it")
        XCTAssertEqual(s.sketchCalls.count, 1)
    }

    func testARunInFlightCanBeAbandonedPromptly() throws {
        try writeScene(gated: false)
        let s = session()
        XCTAssertTrue(s.run())
        try writeScene(gated: true, width: 20)
        s.requestRun()
        try serveFrames(s) { log.count >= 3 }
        s.requestRun()
        let t0 = Date()
        XCTAssertTrue(s.abandonRun(waitingUpTo: 5), "the script stops at its next hook")
        XCTAssertLessThan(Date().timeIntervalSince(t0), 2)
        XCTAssertFalse(s.isRunning)
        XCTAssertNil(s.collectRun())
        XCTAssertEqual(s.generation, 1, "its result is dropped")
        XCTAssertNil(s.error)
        XCTAssertEqual(log, ["begin", "end", "begin"], "and the run asked for meanwhile does not start")
        // The session goes on: a run after it works.
        openGate()
        XCTAssertTrue(s.run())
        XCTAssertEqual(s.generation, 2)
    }

    func testASynchronousRunReplacesTheRunInFlight() throws {
        try writeScene(gated: true)
        let s = session()
        s.requestRun()
        try serveFrames(s) { log.count >= 1 }
        try writeScene(gated: false, width: 20)
        XCTAssertTrue(s.run())
        XCTAssertFalse(s.isRunning)
        XCTAssertEqual(s.generation, 1)
        // The run it replaced stops (its script is asked to) and is never committed.
        usleep(100_000)
        XCTAssertNil(s.collectRun())
        XCTAssertEqual(s.generation, 1)
        XCTAssertEqual(s.sketchCalls.first?.points.rt.x, 28)
    }

    func testTheSynchronousRunIsComputeThenCommit() throws {
        try writeScene(gated: false)
        let s = session()
        let job = s.prepareRun()
        // Computed on another thread, committed here.
        let box = DispatchQueue(label: "test").sync { job.compute() }
        XCTAssertTrue(box.succeeded)
        XCTAssertNil(s.clip, "computing touches nothing of the session")
        XCTAssertEqual(s.commit(box), true)
        XCTAssertEqual(s.generation, 1)
        XCTAssertTrue(s.inputs.contains { $0.hasSuffix("img.png") })
        // An outcome computed before an event was performed is refused.
        let stale = s.prepareRun().compute()
        s.setPerformed([PerformedEvent(time: 0.1, action: .shake(ax: 1.5, ay: 0))])
        XCTAssertNil(s.commit(stale))
        XCTAssertEqual(s.generation, 1)
    }
}
