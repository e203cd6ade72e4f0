import Synchronization
import WobbleSystem
import Foundation

/// How a run is stopped and watched from outside: a stop asked for (the
/// command line's signals, or `cancel` from another thread — the studio's
/// quit), progress per frame written, and what happens when a read or a
/// library call outlasts `--timeout` (`hardStop`). The frame loop polls
/// `check()` between frames; the script's count hook polls `stopped`.
package final class RunControl: Sendable {
    /// Whether the process's signals (SIGINT, SIGTERM, … through
    /// `Signals`) stop the run: the command line's runs.
    private let watchesSignals: Bool
    private let cancelled = Atomic<Int32>(0)
    private let why = Mutex<String?>(nil)
    /// Hears each frame written: (frames done, frames in all). Called on
    /// the rendering thread.
    package let progress: (@Sendable (Int, Int) -> Void)?
    /// Called (on a timer's thread) with one line when a read or a library
    /// call is still going past `--timeout` and a grace: nil cancels the
    /// run with that line as the reason (what a library caller wants; a
    /// read blocked in the kernel ends only when it returns). The command
    /// line prints it and exits there.
    private let onHardStop: (@Sendable (String) -> Void)?

    package init(watchesSignals: Bool = false, progress: (@Sendable (Int, Int) -> Void)? = nil,
                 hardStop: (@Sendable (String) -> Void)? = nil) {
        self.watchesSignals = watchesSignals
        self.progress = progress
        self.onHardStop = hardStop
    }

    /// Asks the run to stop at its next check (any thread); `reason` is
    /// what `reason` says afterwards.
    package func cancel(_ reason: String? = nil) {
        if let reason { why.withLock { if $0 == nil { $0 = reason } } }
        cancelled.store(SIGTERM, ordering: .releasing)
    }

    /// Why the run was cancelled, when `cancel` was given a reason.
    package var reason: String? { why.withLock { $0 } }

    /// The signal that stops the run (SIGTERM for `cancel`), or nil.
    package var signal: Int32? {
        let c = cancelled.load(ordering: .acquiring)
        if c != 0 { return c }
        return watchesSignals ? Signals.received : nil
    }

    /// True once a stop was asked for.
    package var stopped: Bool { signal != nil }

    /// Throws `Interrupted` once a stop was asked for.
    package func check() throws {
        if let s = signal { throw Interrupted(signal: s) }
    }

    /// A read or a library call outlasted the deadline (`line` says which).
    package func hardStop(_ line: String) {
        if let onHardStop { onHardStop(line) } else { cancel(line) }
    }
}

/// An error outside the script: `message` is the line (the command line
/// prints it after `wobble-run: `).
package struct RunError: Error, CustomStringConvertible {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// The run was stopped (a signal, or `RunControl.cancel`) before its end;
/// nothing half-written is left.
package struct Interrupted: Error {
    package var signal: Int32
    package init(signal: Int32) { self.signal = signal }
}
