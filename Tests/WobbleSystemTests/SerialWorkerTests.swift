import XCTest
import Foundation
import WobbleSystem

/// The sinks' encoder thread: work in order, off the caller's thread, and
/// `sync` after everything queued.
final class SerialWorkerTests: XCTestCase {
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var items: [Int] = []
        var threads = Set<String>()
        func add(_ i: Int) {
            lock.withLock {
                items.append(i)
                threads.insert(Thread.isMainThread ? "main" : "\(pthread_self())")
            }
        }
    }

    func testWorkRunsInOrderOnAThreadOfItsOwnAndSyncWaitsForIt() {
        let worker = SerialWorker()
        let log = Log()
        for i in 0..<200 {
            worker.async {
                if i % 50 == 0 { usleep(2_000) }
                log.add(i)
            }
        }
        let seen = worker.sync { log.lock.withLock { log.items } }
        XCTAssertEqual(seen, Array(0..<200), "everything queued ran, in order, before sync's work")
        XCTAssertFalse(worker.inline)
        XCTAssertFalse(log.threads.contains("main"), "the work ran off the caller's thread")
        worker.async { log.add(200) }
        XCTAssertEqual(worker.sync { log.lock.withLock { log.items.count } }, 201)
    }

    func testAWorkerNeverUsedStartsNoThreadAndStopsCleanly() {
        for _ in 0..<100 {
            let w = SerialWorker()
            XCTAssertEqual(w.sync { 7 }, 7)
        }
    }
}
