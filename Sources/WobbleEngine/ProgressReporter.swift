import Foundation
import WobbleCore
import WobbleSystem

/// Progress on stderr, only when it is a terminal and not `--quiet`:
/// frames done, of how many, frames per second, time left.
package final class ProgressReporter {
    private let enabled: Bool
    private let total: Int
    private let clock: any TimeSource
    private let start: Double
    private var lastPrint = -Double.infinity
    private var done = 0

    /// How a line is replaced: `\r` and erase-to-the-end (`ESC[K`), or on a
    /// terminal that knows no escapes (`TERM=dumb`, or no `TERM`) `\r` and
    /// spaces over what was there.
    private let erase: (Int) -> String
    private var lastLength = 0

    /// Hears each frame done (done, total), whether or not stderr shows it.
    private let observer: ((Int, Int) -> Void)?

    package init(total: Int, quiet: Bool, clock: any TimeSource = MonotonicClock(), observer: ((Int, Int) -> Void)? = nil) {
        self.clock = clock
        start = clock.now()
        self.total = total
        self.observer = observer
        enabled = !quiet && Posix.isTerminal(2)
        let term = Environment.value("TERM") ?? ""
        if term.isEmpty || term == "dumb" {
            erase = { String(repeating: " ", count: $0) + "\r" }
        } else {
            erase = { _ in "\u{1B}[K" }
        }
    }

    /// Writes `text` over the line shown so far.
    private func show(_ text: String) {
        let line = "\r" + erase(lastLength) + text
        lastLength = text.count
        Messages.writeStderr(line)
    }

    /// True when progress is shown (stderr is a terminal, no `-q`).
    package var isTerminal: Bool { enabled }

    /// Seconds since the reporter was made.
    package var elapsed: Double { clock.now() - start }

    package func frameDone() {
        done += 1
        observer?(done, total)
        guard enabled else { return }
        let now = clock.now()
        guard now - lastPrint > 0.1 || done == total else { return }
        lastPrint = now
        let t = elapsed
        let fps = t > 0 ? Double(done) / t : 0
        let left = fps > 0 ? Double(total - done) / fps : 0
        show(String(format: "frame %d/%d  %.1f fps  %@ left", done, total, fps, Self.clock(left)))
    }

    /// Clears the progress line and prints `summary` (terminal only).
    package func finish(_ summary: String) {
        guard enabled else { return }
        show(summary + "\n")
    }

    package static func clock(_ s: Double) -> String {
        let n = Int(s.rounded(.up))
        return String(format: "%d:%02d", n / 60, n % 60)
    }
}
