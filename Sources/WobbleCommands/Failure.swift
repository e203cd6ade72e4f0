import Foundation
import WobbleEngine
import WobbleScript
import WobbleSystem

/// The one error type of the command line: the lines a failure prints to
/// stderr (one clear line first, details after) and the exit status it
/// ends with (1 the scene failed, 2 bad usage, 128 + N signal N).
/// Every command's errors become one (`Failure(error, command:)`), and
/// `Failure.report` is the one place that prints them.
package struct Failure: Error, Equatable, CustomStringConvertible {
    /// What stderr shows; the first line is the message `--json` reports.
    package var lines: [String]
    package var exitCode: Int32

    package init(lines: [String], exitCode: Int32) {
        self.lines = lines
        self.exitCode = exitCode
    }

    /// `wobble-run: [COMMAND: ]message`, exit `exitCode`.
    package init(_ message: String, command: String? = nil, exitCode: Int32) {
        self.init(lines: [Failure.prefixed(message, command: command)], exitCode: exitCode)
    }

    package var description: String { lines.joined(separator: "\n") }

    /// The one place the tool's name (and the command's, for the commands
    /// that name themselves: `wobble-run: cutout: …`) is put before an
    /// error outside the script.
    package static func prefixed(_ message: String, command: String? = nil) -> String {
        "wobble-run: " + (command.map { $0 + ": " } ?? "") + message
    }

    /// Any error as the tool reports it. Once SIGINT or SIGTERM arrived,
    /// an error outside the script that came on the way out (a child
    /// stopped by the same signal while it was asked something, a pipe it
    /// closed) is the interruption: exit 128 + the signal, nothing printed.
    package init(_ error: Error, command: String? = nil) {
        if let f = error as? Failure { self = f; return }
        if let s = Interrupt.signal, error is MediaError || error is RunError {
            self.init(lines: [], exitCode: 128 + s)
            return
        }
        switch error {
        case let e as UsageError: self.init(e.message, command: command, exitCode: 2)
        case let e as RunError: self.init(e.message, command: command, exitCode: 1)
        case let e as MediaError: self.init(e.message, command: command, exitCode: 1)
        case let e as Interrupted: self.init(lines: [], exitCode: 128 + e.signal)
        case let e as ScriptError:
            // `scene.lua:12: ...` (the script names itself), then the traceback.
            self.init(lines: [e.message] + (e.details.map { $0.isEmpty ? [] : [$0] } ?? []),
                      exitCode: e.kind == .interrupted ? 128 + (Interrupt.signal ?? SIGINT) : 1)
        default: self.init("\(error)", command: command, exitCode: 1)
        }
    }

    /// Prints `error` (its lines on stderr; with `report`, the JSON object
    /// on stdout), removes temporary files, and returns the exit status.
    package static func report(_ error: Error, command: String? = nil, report: RunReport? = nil) -> Int32 {
        let f = Failure(error, command: command)
        TemporaryPaths.removeAll()
        for line in f.lines { printError(line) }
        report?.flushWarnings()
        if let report {
            report.fail(f.lines.isEmpty ? "interrupted" : f.lines.joined(separator: "\n"))
            do {
                try report.printJSON()
            } catch {
                // Said once: the error may be this very write failing again.
                let line = prefixed("\(error)")
                if line != f.lines.first { printError(line) }
            }
        }
        return f.exitCode
    }
}
