import Synchronization
import WobbleCore
import WobbleMedia
import WobbleSystem
import Foundation

/// `--timeout S` for reading inputs: each read of an input (the scene
/// file, `--image`, the images the script loads, `--assemble`'s frames)
/// must finish within S seconds of wall time. The Lua count hook cannot
/// stop a read blocked in the kernel (a FIFO nobody writes to, a stalled
/// device or network file), so a timer does: when a read is still going
/// at its deadline, the run's `RunControl.hardStop` hears one line naming
/// the file (the command line prints it and exits 1: no output exists
/// yet, and any temporary file is removed).
///
/// Nothing is refused up front: FIFOs and `/dev/fd/N` (`<(...)` in a
/// shell) are fine inputs when they deliver in time.
package final class ReadDeadline: Sendable {
    package let seconds: Double
    /// Told when a read outlasts the deadline.
    private let control: RunControl
    private let reads = Mutex<[Int: String]>([:])
    private let counter = Atomic<Int>(0)

    /// No deadline without `--timeout`.
    package init?(seconds: Double?, control: RunControl) {
        guard let seconds, seconds.isFinite, seconds > 0 else { return nil }
        self.seconds = seconds
        self.control = control
    }

    /// One read in progress.
    package struct Token {
        fileprivate let id: Int
        fileprivate let alarm: Alarm
    }

    /// Starts the clock for reading `what` (`image 'x.png'`); `end` stops it.
    package func begin(_ what: String) -> Token {
        let id = counter.wrappingAdd(1, ordering: .relaxed).newValue
        reads.withLock { $0[id] = what }
        let seconds = self.seconds
        let alarm = Alarm(after: seconds) { [self] in
            guard let what = reads.withLock({ $0[id] }) else { return }
            control.hardStop("wobble-run: \(what): not read within \(NumberText.plain(seconds)) s (--timeout)")
        }
        return Token(id: id, alarm: alarm)
    }

    /// The read is over (done or failed); ending it twice is harmless.
    package func end(_ token: Token) {
        reads.withLock { _ = $0.removeValue(forKey: token.id) }
        token.alarm.cancel()
    }

    /// Runs `body`, a read of `what`, under the deadline.
    package func reading<T>(_ what: String, _ body: () throws -> T) rethrows -> T {
        let token = begin(what)
        defer { end(token) }
        return try body()
    }
}

extension Optional where Wrapped == ReadDeadline {
    /// `body` under the deadline when there is one.
    package func reading<T>(_ what: String, _ body: () throws -> T) rethrows -> T {
        switch self {
        case .some(let d): return try d.reading(what, body)
        case .none: return try body()
        }
    }
}
