import XCTest
@testable import WobbleCore

/// The recorded timeline's memory: linear in the kicks, not kicks × moments,
/// and bounded by a budget with a clear error (the scene's history lives
/// outside the Lua heap and its limit).
final class HistoryMemoryTests: XCTestCase {
    /// One spring region (damping 0: it never rests, so it keeps every
    /// kick) kicked `n` times, a moment apart.
    private func springScene(kicks n: Int, limit: Int = 1 << 30) throws -> Scene {
        let s = Scene(historyLimit: limit)
        s.imageSize = (64, 48)
        s.addSketch(lt: Point(10, 10), rt: Point(50, 10), rb: Point(50, 40), lb: Point(10, 40),
                    parameters: WobbleParameters(motion: .spring, damping: 0))
        let m = s.prepare()
        for _ in 0..<n {
            try s.impulse(m[0], dx: 1, dy: 0)
            try s.wait(0.0001)
        }
        return s
    }

    func testMemoryGrowsLinearlyWithTheKicksOfOneModel() throws {
        let a = try springScene(kicks: 2000), b = try springScene(kicks: 4000)
        let ratio = Double(b.recordedBytes) / Double(a.recordedBytes)
        XCTAssertEqual(ratio, 2, accuracy: 0.05, "\(a.recordedBytes) → \(b.recordedBytes) bytes")
        // About a hundred bytes a kick (one moment and one kick), where every
        // moment used to copy every kick so far (2000 kicks: 64 MB).
        XCTAssertLessThan(a.recordedBytes, 2000 * 200)
        // Every moment still reads its own kicks.
        let clip = try b.finish()
        for (k, kicks) in [(0, 1), (3, 1001), (120, 4000)] {
            let snap = clip.timeline.snapshot(at: Double(k) / 30)
            XCTAssertEqual(snap.models[0].kicks.count, kicks, "frame \(k)")
            XCTAssertEqual(snap.models[0].kicks.last?.start ?? -1, Double(kicks - 1) * 0.0001, accuracy: 1e-9)
        }
    }

    func testSharedKicksReadTheSameAsTheirArray() throws {
        var h: KickHistory = []
        var all: [Impulse] = []
        var kept: [(KickHistory, [Impulse])] = []
        for i in 0..<50 {
            let k = Impulse(start: Double(i), direction: Point(1, 0), amplitude: 1)
            h = h.appending(k)
            all.append(k)
            kept.append((h, all))
        }
        // A branch from an older moment copies instead of overwriting.
        let branch = kept[9].0.appending(Impulse(start: 99, direction: Point(0, 1), amplitude: 2))
        XCTAssertEqual(branch.array, kept[9].1 + [Impulse(start: 99, direction: Point(0, 1), amplitude: 2)])
        for (history, array) in kept {
            XCTAssertEqual(history.array, array)
            XCTAssertEqual(history, KickHistory(array))
        }
    }

    func testManyRegionsShareWhatDidNotChange() throws {
        // 200 regions, 100 moments in which one region is kicked: the
        // regions that did not change cost a small entry each, not a copy.
        let s = Scene()
        s.imageSize = (400, 300)
        for i in 0..<200 { s.addSketch(lt: Point(Double(i), 0), rt: Point(Double(i) + 50, 0), rb: Point(Double(i) + 50, 50), lb: Point(Double(i), 50)) }
        let m = s.prepare()
        for r in 0..<100 {
            try s.impulse(m[r], dx: 1, dy: 0)
            try s.wait(0.01)
        }
        XCTAssertLessThan(s.recordedBytes, 100 * 200 * 64, "\(s.recordedBytes) bytes")
    }

    func testPastTheBudgetTheSceneFailsWithAClearError() throws {
        XCTAssertThrowsError(try springScene(kicks: 2000, limit: 100_000)) { e in
            XCTAssertEqual((e as? SceneError)?.function, "wait")
            XCTAssertTrue("\(e)".hasSuffix("the scene's recorded motion needs more than 100000 bytes of memory (833 moments of 1 live regions): wait longer between kicks, or use fewer regions"), "\(e)")
        }
    }
}
