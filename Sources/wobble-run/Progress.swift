import Foundation
import WobbleCore
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

/// Progress on stderr, only when it is a terminal and not `--quiet`:
/// frames done, of how many, frames per second, time left.
final class ProgressReporter {
    private let enabled: Bool
    private let total: Int
    private let start = DispatchTime.now()
    private var lastPrint: UInt64 = 0
    private var done = 0

    init(total: Int, quiet: Bool) {
        self.total = total
        enabled = !quiet && isatty(STDERR_FILENO) == 1
    }

    /// True when progress is shown (stderr is a terminal, no `-q`).
    var isTerminal: Bool { enabled }

    /// Seconds since the reporter was made.
    var elapsed: Double { Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9 }

    func frameDone() {
        done += 1
        guard enabled else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        guard now - lastPrint > 100_000_000 || done == total else { return }
        lastPrint = now
        let t = elapsed
        let fps = t > 0 ? Double(done) / t : 0
        let left = fps > 0 ? Double(total - done) / fps : 0
        let line = String(format: "\r\u{1B}[Kframe %d/%d  %.1f fps  %@ left", done, total, fps, Self.clock(left))
        FileHandle.standardError.write(line.data(using: .utf8)!)
    }

    /// Clears the progress line and prints `summary` (terminal only).
    func finish(_ summary: String) {
        guard enabled else { return }
        FileHandle.standardError.write("\r\u{1B}[K\(summary)\n".data(using: .utf8)!)
    }

    static func clock(_ s: Double) -> String {
        let n = Int(s.rounded(.up))
        return String(format: "%d:%02d", n / 60, n % 60)
    }
}
