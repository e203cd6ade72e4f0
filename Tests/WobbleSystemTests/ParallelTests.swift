import Foundation
import WobbleSystem
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// `Parallel.run`: every chunk runs once, chunk 0 on the calling thread,
/// the others on threads of their own, all done when it returns. (Where no
/// thread may start, the calling thread runs them all: ResourceLimitTests
/// renders GIFs under a `pids.max` of 2 to 6, which hung before.)
final class ParallelTests: XCTestCase {
    func testEveryChunkRunsOnceAndChunkZeroOnTheCaller() {
        for chunks in [0, 1, 2, 3, 8] {
            let lock = NSLock()
            var runs = [Int](repeating: 0, count: chunks)
            var threads = [pthread_t](repeating: 0, count: chunks)
            let me = pthread_self()
            Parallel.run(chunks) { c in
                var sum = 0
                for k in 0 ..< 200_000 { sum &+= k &* c }
                lock.lock()
                runs[c] += 1
                threads[c] = pthread_self()
                lock.unlock()
                XCTAssertNotEqual(sum, -1)
            }
            XCTAssertEqual(runs, [Int](repeating: 1, count: chunks), "\(chunks) chunks")
            if chunks > 0 { XCTAssertTrue(pthread_equal(threads[0], me) != 0, "chunk 0 on the caller") }
            if chunks > 1 {
                XCTAssertTrue((1 ..< chunks).allSatisfy { pthread_equal(threads[$0], me) == 0 }, "the others on threads of their own")
            }
        }
    }

    /// The results of chunks that write their own slots are all there when
    /// `run` returns.
    func testResultsAreCompleteOnReturn() {
        let n = 4
        let out = UnsafeMutableBufferPointer<Int>.allocate(capacity: n)
        defer { out.deallocate() }
        out.initialize(repeating: 0)
        nonisolated(unsafe) let slots = out
        Parallel.run(n) { c in
            usleep(UInt32(1000 * (n - c)))
            slots[c] = c * c + 1
        }
        XCTAssertEqual(Array(out), [1, 2, 5, 10])
    }
}
