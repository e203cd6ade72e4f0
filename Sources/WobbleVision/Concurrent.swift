import Foundation
import WobbleCore
import WobbleSystem

/// A click's work at once on every core: its GrabCuts and over-segmentations
/// are independent of each other, so they run side by side and are
/// gathered in a fixed order afterwards (each job deterministic on its own:
/// the same candidates in the same order whatever the threads do; OpenCV's
/// own settings held for all of them at once, see `Reproducible` in
/// CWobbleVision).
extension CutoutVision {
    /// `body(0)`, ..., `body(count - 1)` run on up to as many threads as
    /// the machine has cores (the caller's among them), each once; their
    /// results in index order. The threads are `Parallel.run`'s (the tool's
    /// one way to spread work over cores: a thread the system refuses
    /// leaves its share to the caller, never a wait), each taking the next
    /// job not yet taken.
    static func concurrently<T: Sendable>(_ count: Int, _ body: @Sendable (Int) -> T) -> [T] {
        guard count > 1 else { return (0 ..< count).map(body) }
        let slots = Slots<T>(count)
        let next = JobCounter()
        Parallel.run(min(count, ThisProcess.cores)) { _ in
            while let k = next.take(below: count) { slots.put(body(k), at: k) }
        }
        return slots.taken()
    }

    /// The next job's index, handed out once each.
    private final class JobCounter: @unchecked Sendable {
        private let lock = NSLock()
        private var next = 0
        func take(below count: Int) -> Int? {
            lock.lock()
            defer { lock.unlock() }
            guard next < count else { return nil }
            next += 1
            return next - 1
        }
    }

    /// One result per job, each slot written by its own job only.
    private final class Slots<T>: @unchecked Sendable {
        private let items: UnsafeMutableBufferPointer<T?>
        init(_ count: Int) {
            items = .allocate(capacity: count)
            items.initialize(repeating: nil)
        }
        func put(_ value: T, at k: Int) { items[k] = value }
        /// Every result (a job that did not run would trap here: each runs once).
        func taken() -> [T] { items.map { $0! } }
        deinit {
            items.deinitialize()
            items.deallocate()
        }
    }

    /// What `intersectionOverUnion` needs of a mask, counted once: its
    /// pixels above 127 and the box that holds them (empty when none).
    struct Coverage: Sendable {
        var count: Int
        var box: PixelRect

        init(count: Int, box: PixelRect) {
            self.count = count
            self.box = box
        }

        init(_ m: GreyMask) {
            var count = 0, x0 = m.width, y0 = m.height, x1 = 0, y1 = 0
            m.pixels.withUnsafeBufferPointer { p in
                for y in 0 ..< m.height {
                    let row = y * m.width
                    var first = -1, last = -1, n = 0
                    for x in 0 ..< m.width where p[row + x] > 127 {
                        if first < 0 { first = x }
                        last = x
                        n += 1
                    }
                    guard first >= 0 else { continue }
                    count += n
                    x0 = min(x0, first); x1 = max(x1, last + 1)
                    y0 = min(y0, y); y1 = y + 1
                }
            }
            self.count = count
            box = count == 0 ? .empty : PixelRect(x0: x0, y0: y0, x1: x1, y1: y1)
        }

        /// A mask with its coverage.
        struct Of: Sendable {
            var mask: GreyMask
            var coverage: Coverage
        }
    }

    /// `intersectionOverUnion(a, b)` from the masks' coverages: the
    /// intersection counted only where both boxes meet, the union as the
    /// two counts less it (the same integers, so the same value).
    static func intersectionOverUnion(_ a: GreyMask, _ ca: Coverage, _ b: GreyMask, _ cb: Coverage) -> Double {
        let x0 = max(ca.box.x0, cb.box.x0), x1 = min(ca.box.x1, cb.box.x1)
        let y0 = max(ca.box.y0, cb.box.y0), y1 = min(ca.box.y1, cb.box.y1)
        var inter = 0
        if ca.count > 0, cb.count > 0, x0 < x1, y0 < y1 {
            let w = a.width
            a.pixels.withUnsafeBufferPointer { p in
                b.pixels.withUnsafeBufferPointer { q in
                    for y in y0 ..< y1 {
                        let row = y * w
                        for x in x0 ..< x1 where p[row + x] > 127 && q[row + x] > 127 { inter += 1 }
                    }
                }
            }
        }
        let union = ca.count + cb.count - inter
        return union == 0 ? 0 : Double(inter) / Double(union)
    }
}
