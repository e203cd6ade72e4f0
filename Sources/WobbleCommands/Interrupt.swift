import WobbleEngine
import WobbleSystem
import Foundation

/// SIGINT, SIGTERM, SIGHUP and SIGXCPU (`Signals`): the signal only sets a
/// flag (the render loop and the Lua hook poll it and unwind, removing
/// temporary files; the exit status is 128 + the signal number; no output
/// is moved into place after it, `CommitWindow`); if the
/// tool has not exited a second later, or on a second signal, the watchdog
/// waits for a move into place in progress, removes the temporary files,
/// prints the `--json` object (an interrupted run's) and exits with 128 +
/// the signal number.
package enum Interrupt {
    /// The signal that asked us to stop, or nil.
    package static var signal: Int32? { Signals.received }

    /// How the command line's runs are controlled: the process's signals
    /// stop them; a read or a library call past `--timeout` (and its
    /// grace) prints its line and ends the process with status 1 (nothing
    /// is written yet; temporary files are removed).
    package static let control = RunControl(watchesSignals: true, hardStop: { line in
        printError(line)
        TemporaryPaths.removeAll()
        ThisProcess.exitNow(1)
    })

    package static func install() {
        Signals.install()
        CommitWindow.refuseAfterStoppingSignal()
        Signals.escalate(after: 1.0) { sig in
            // ffmpeg dies with us (PDEATHSIG).
            CommitWindow.waitUntilClosed(timeout: 30)
            TemporaryPaths.removeAll()
            // --json: the object still comes (a frame may take longer than the grace).
            RunReport.printLastWords()
            ThisProcess.exitNow(128 + sig)
        }
    }
}
