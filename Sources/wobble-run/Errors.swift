import WobbleEngine
import Foundation
import WobbleScript
import WobbleSystem

/// An error that knows how the tool ends for it: its exit code and the
/// lines it prints to stderr (one clear line first, details after).
/// `Failure.report` is the one place that prints them.
protocol ExitCoded: Error {
    /// 1 the scene failed, 2 bad usage, 128 + N a signal.
    var exitCode: Int32 { get }
    /// What stderr shows; the first line is the message `--json` reports.
    var lines: [String] { get }
}

/// A command-line usage error (the option table's): exit status 2.
extension UsageError: ExitCoded {
    var exitCode: Int32 { 2 }
    var lines: [String] { [Failure.prefixed(message)] }
}

/// An error outside the script: printed as `wobble-run: <message>`, exit 1.
extension RunError: ExitCoded {
    var exitCode: Int32 { 1 }
    var lines: [String] { [Failure.prefixed(message)] }
}

/// SIGINT/SIGTERM arrived: exit 128 + the signal, nothing printed.
extension Interrupted: ExitCoded {
    var exitCode: Int32 { 128 + signal }
    var lines: [String] { [] }
}

extension MediaError: ExitCoded {
    var exitCode: Int32 { 1 }
    var lines: [String] { [Failure.prefixed(message)] }
}

extension ScriptError: ExitCoded {
    /// `scene.lua:12: ...` (the script names itself), then the traceback.
    var exitCode: Int32 { kind == .interrupted ? 128 + (Interrupt.signal ?? SIGINT) : 1 }
    var lines: [String] { [message] + (details.map { $0.isEmpty ? [] : [$0] } ?? []) }
}

enum Failure {
    /// The one place the tool's name is put before an error outside the
    /// script (`wobble-run: image 'x.png': not a PNG or JPEG file`).
    static func prefixed(_ message: String) -> String { "wobble-run: " + message }

    /// Any error as the tool reports it. Once SIGINT or SIGTERM arrived,
    /// an error outside the script that came on the way out (a child
    /// stopped by the same signal while it was asked something, a pipe it
    /// closed) is the interruption: exit 128 + the signal, nothing printed.
    static func describe(_ error: Error) -> (code: Int32, lines: [String]) {
        if let s = Interrupt.signal, error is MediaError || error is RunError {
            let stopped = Interrupted(signal: s)
            return (stopped.exitCode, stopped.lines)
        }
        if let e = error as? ExitCoded { return (e.exitCode, e.lines) }
        return (1, [prefixed("\(error)")])
    }

    /// Prints `error` (its lines on stderr; with `report`, the JSON object
    /// on stdout), removes temporary files, and returns the exit code.
    static func report(_ error: Error, report: RunReport? = nil) -> Int32 {
        let (code, lines) = describe(error)
        TemporaryPaths.removeAll()
        for line in lines { printError(line) }
        report?.flushWarnings()
        if let report {
            report.fail(lines.isEmpty ? "interrupted" : lines.joined(separator: "\n"))
            do {
                try report.printJSON()
            } catch {
                // Said once: the error may be this very write failing again.
                let line = prefixed("\(error)")
                if line != lines.first { printError(line) }
            }
        }
        return code
    }
}
