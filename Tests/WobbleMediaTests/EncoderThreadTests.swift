import Foundation
@testable import WobbleMedia
import XCTest

/// The encoder thread both streaming sinks (GIF, WebP) encode on: steps in
/// order, off the caller's thread; the first error kept and thrown by the
/// next `queue` and by `finish`, the steps after it skipped; `cancel` skips
/// what has not begun.
final class EncoderThreadTests: XCTestCase {
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var steps: [Int] = []
        var threads: Set<Bool> = []
        func add(_ k: Int) {
            lock.lock(); steps.append(k); threads.insert(Thread.isMainThread); lock.unlock()
        }
    }

    struct Failure: Error, Equatable { let step: Int }

    func testStepsRunInOrderOffTheCallersThread() throws {
        let t = EncoderThread(depth: 3), log = Log()
        for k in 0..<20 { try t.queue { usleep(200); log.add(k) } }
        try t.finish { log.add(20) }
        XCTAssertEqual(log.steps, Array(0...20))
        // The queued steps ran on the worker, `finish`'s step on the caller (this test's main thread).
        XCTAssertEqual(log.threads, [false, true])
    }

    func testTheFirstErrorIsThrownLaterAndTheRestSkipped() throws {
        let t = EncoderThread(depth: 2), log = Log()
        try t.queue { log.add(0) }
        try t.queue { throw Failure(step: 1) }
        // A step queued before the error is seen is skipped.
        var thrownByQueue: Error?
        for k in 2..<10 {
            do { try t.queue { log.add(k) } } catch { thrownByQueue = error; break }
            usleep(2000)
        }
        XCTAssertEqual(thrownByQueue as? Failure, Failure(step: 1))
        XCTAssertThrowsError(try t.finish { log.add(99) }) { XCTAssertEqual($0 as? Failure, Failure(step: 1)) }
        XCTAssertEqual(log.steps, [0])
        var cleaned = false
        t.afterward { cleaned = true }
        XCTAssertTrue(cleaned)
    }

    func testCancelSkipsWhatHasNotBegun() throws {
        let t = EncoderThread(depth: 8), log = Log()
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        try t.queue { log.add(0); started.signal(); release.wait() }
        for k in 1..<5 { try t.queue { log.add(k) } }
        started.wait()
        t.cancel()
        release.signal()
        XCTAssertNoThrow(try t.finish { log.add(5) })
        XCTAssertEqual(log.steps, [0])
    }
}
