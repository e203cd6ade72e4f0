import Dispatch
import Foundation
import WobbleSystem

/// An encoder's steps, run in order on a thread of their own beside the
/// producer's (`SerialWorker`: the caller's where none can be started), so
/// that rendering or decoding the next frame overlaps encoding this one.
/// At most `depth` frames wait; the first error a step meets is kept, the
/// steps after it are skipped, and it is thrown by the next `queue` or by
/// `finish`. After `cancel` nothing more runs.
final class EncoderThread: @unchecked Sendable {
    private let worker = SerialWorker()
    private let slots: DispatchSemaphore
    private let lock = NSLock()
    private var error: Error?
    private var cancelled = false

    init(depth: Int) { slots = DispatchSemaphore(value: depth) }

    /// Queues `step` after the steps before it; waits while `depth` steps
    /// are queued (`holdsASlot`: false for a step queued before any frame,
    /// such as building a palette). Throws the first error of a step before.
    func queue(holdsASlot: Bool = true, _ step: @escaping () throws -> Void) throws {
        try rethrow()
        if holdsASlot { slots.wait() }
        let slots = self.slots
        worker.async { [self] in
            run(step)
            if holdsASlot { slots.signal() }
        }
    }

    /// Waits for the steps queued, then runs `step` on the caller's thread
    /// (skipped after an error or `cancel`); throws the first error.
    func finish(_ step: () throws -> Void) throws {
        worker.sync { run(step) }
        try rethrow()
    }

    /// Skips every step not yet begun.
    func cancel() {
        lock.lock()
        cancelled = true
        lock.unlock()
    }

    /// Waits for the step running, then runs `body` on the caller's thread
    /// whatever happened before (freeing the encoder, removing a file).
    func afterward(_ body: () -> Void) { worker.sync(body) }

    /// Throws the first error a step met, if any.
    func rethrow() throws {
        lock.lock()
        let e = error
        lock.unlock()
        if let e { throw e }
    }

    private func run(_ step: () throws -> Void) {
        lock.lock()
        let skip = error != nil || cancelled
        lock.unlock()
        guard !skip else { return }
        do { try step() } catch {
            lock.lock()
            if self.error == nil { self.error = error }
            lock.unlock()
        }
    }
}
