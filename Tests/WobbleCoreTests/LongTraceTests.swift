import XCTest
@testable import WobbleCore

/// A long motion trace is applied in time order (ties in file order),
/// across many waits and a second `enableMotion`, in linear time (the
/// timing itself is measured by Scripts/bench-trace.sh, not here).
final class LongTraceTests: XCTestCase {
    func testLongShuffledTraceWithTiesIsAppliedInOrder() throws {
        let s = Scene(maxFrames: 10_000_000)
        s.imageSize = (100, 100)
        // decay 0: a kick's amplitude is 0 one cycle (1.2 s) later, so every
        // kick below (10 s apart) starts a new impulse.
        s.addSketch(parameters: WobbleParameters(decay: 0))
        let model = s.prepare()[0]
        var trace: [MotionSample] = []
        // 200,000 quiet samples (below 1 g: no effect) over 0..<1000 s.
        for k in 0..<200_000 { trace.append(MotionSample(time: Double(k) * 0.005, ax: 0.5, ay: -0.5)) }
        // A kick every 10 s, then a second sample at the same time that would
        // kick the other way: the file's first one wins (the model is moving).
        var kicks: [(time: Double, dx: Double)] = []
        for k in 1..<100 {
            let t = Double(k) * 10 + 0.0025
            let dx = k % 2 == 0 ? 2.0 : -2.0
            trace.append(MotionSample(time: t, ax: dx, ay: 0))
            trace.append(MotionSample(time: t, ax: -dx, ay: 0))
            kicks.append((t, dx))
        }
        var rng = SystemRandomNumberGenerator()
        // Shuffle, but keep each tie pair in file order.
        let pairs = stride(from: 200_000, to: trace.count, by: 2).map { [trace[$0], trace[$0 + 1]] }
        var chunks: [[MotionSample]] = trace[..<200_000].map { [$0] } + pairs
        chunks.shuffle(using: &rng)
        s.enableMotion(trace: chunks.flatMap { $0 })
        for (i, kick) in kicks.enumerated() {
            if i == 50 {
                // A second trace mid-way, relative to now: one kick 2 s later (the last one has decayed).
                s.enableMotion(trace: [MotionSample(time: 2, ax: 0, ay: 3)])
                try s.wait(2)
                XCTAssertEqual(model.impulse?.start ?? -1, s.now, accuracy: 1e-9)
                XCTAssertEqual(model.impulse?.direction, Point(0, -1))
            }
            try s.wait(max(0, kick.time + 0.001 - s.now))
            let imp = try XCTUnwrap(model.impulse)
            XCTAssertEqual(imp.start, kick.time, accuracy: 1e-9, "kick \(i)")
            XCTAssertEqual(imp.direction, Point(kick.dx > 0 ? 1 : -1, 0), "kick \(i): the tie's first sample wins")
        }
        try s.wait(100)
        XCTAssertEqual(model.impulse?.start ?? -1, kicks.last!.time, accuracy: 1e-9, "nothing left pending kicks again")
    }

    func testANULInsideAFieldIsRefusedNotCutShort() throws {
        // "1.5\0xyz" used to read as 1.5 (the number parser stops at NUL).
        XCTAssertThrowsError(try parseMotionTrace("0.1,1.5\u{0}xyz,0\n", fileName: "t.csv")) { e in
            XCTAssertEqual(e as? SceneError, SceneError("enableMotion", "t.csv:1:5: column ax: expected a finite number"))
        }
        XCTAssertThrowsError(try parseMotionTrace("0.1,1.5,0\u{0}\n", fileName: "t.csv")) { e in
            XCTAssertEqual(e as? SceneError, SceneError("enableMotion", "t.csv:1:9: column ay: expected a finite number"))
        }
        XCTAssertEqual(try parseMotionTrace("0.1,1.5,0\n", fileName: "t.csv"), [MotionSample(time: 0.1, ax: 1.5, ay: 0)])
    }

    func testLongTraceParsesEveryRowAndNamesTheLineOfAnError() throws {
        var text = "\u{FEFF}t,ax,ay\r\n"
        for k in 0..<100_000 { text += "\(k)e-3, \(k % 7 - 3).5 ,\t-\(k % 5)\(k % 3 == 0 ? "\r\n" : "\n")" }
        let samples = try parseMotionTrace(text, fileName: "t.csv")
        XCTAssertEqual(samples.count, 100_000)
        XCTAssertEqual(samples[99_999], MotionSample(time: 99.999, ax: Double(99_999 % 7 - 3) + 0.5, ay: -Double(99_999 % 5)))
        XCTAssertThrowsError(try parseMotionTrace(text + "\n1,2,0x\n", fileName: "t.csv")) { e in
            XCTAssertEqual(e as? SceneError, SceneError("enableMotion", "t.csv:100003:5: column ay: expected a finite number"))
        }
        XCTAssertThrowsError(try parseMotionTrace(text + "1,2,1e999\n", fileName: "t.csv")) { e in
            XCTAssertEqual(e as? SceneError, SceneError("enableMotion", "t.csv:100002:5: column ay: expected a finite number"))
        }
    }

    func testResetDropsTheRestOfALongTrace() throws {
        let s = Scene(maxFrames: 10_000_000)
        s.imageSize = (100, 100)
        s.addSketch(parameters: WobbleParameters(decay: 0))
        s.prepare()
        s.enableMotion(trace: (0..<100_000).map { MotionSample(time: Double($0) * 0.01, ax: 5, ay: 0) })
        try s.wait(10)
        s.reset()
        s.addSketch()
        let m = s.prepare()[0]
        s.enableMotion()
        try s.wait(990)
        XCTAssertNil(m.impulse, "no sample of the dropped trace reaches the new model")
    }
}
