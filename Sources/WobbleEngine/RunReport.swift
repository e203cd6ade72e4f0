import Foundation
import Synchronization
import WobbleCore
import WobbleMedia
import WobbleSystem

/// What a run tells a pipeline (`--json`): filled in as the run goes, so a
/// failure halfway still reports what was known, printed once at the end
/// as one JSON object on one line of stdout.
package final class RunReport {
    package var frames: Int?
    package var fps: Double?
    package var duration: Double?
    package var width: Int?
    package var height: Int?
    /// The output path (`-` for stdout); nil for `--check`, `--format null`.
    package var output: String?
    /// The bytes written (a folder of frames: all its frames).
    package var bytes: Int?
    /// The frames go to stdout: the object goes to stderr, as its last line.
    package var toStderr = false
    /// True when every model rests at the end of the clip.
    package var still: Bool?
    /// True when the scene loops (`loop()`).
    package var loop: Bool?
    /// The renderer drawn with (`--backend`, `auto` resolved); nil before one is made.
    package var backend: String?
    package var warnings: [String] = []
    package var error: String?
    /// The lines of the error after its first (a traceback), or nil.
    package var details: String?
    /// `--preset`: what was chosen, a JSON object.
    package var preset: String?
    /// The files the run read (the scene, its image, modules, traces,
    /// masks, sounds) as it named them: what a pack's journal fingerprints.
    package var inputs: [String] = []
    /// `--json` given: print the object at the end.
    package let json: Bool

    /// Whether `flushWarnings` prints (the studio shows them itself).
    package var printsWarnings = true

    package init(json: Bool) { self.json = json }

    /// Warnings not printed yet.
    private var unprinted: [String] = []

    /// Records a warning (`flushWarnings` prints it); one already given is
    /// not repeated (a preset that renders the clip again at a lower frame
    /// rate meets the same ones).
    package func warn(_ message: String) {
        guard !warnings.contains(message) else { return }
        warnings.append(message)
        unprinted.append(message)
    }

    /// Prints the warnings not printed yet on stderr, one line each
    /// (`wobble-run: warning: …`). A render calls it before its first
    /// frame when stderr is a terminal (a person sees the warning before
    /// the render is wasted); otherwise they come at the end, after the
    /// result line or the error, so that an error stays the first line.
    package func flushWarnings() {
        if printsWarnings { for w in unprinted { printError("wobble-run: warning: \(w)") } }
        unprinted.removeAll()
    }

    /// The object, keys in a fixed order.
    package var object: String {
        func n(_ v: Int?) -> String { v.map(String.init) ?? "null" }
        func d(_ v: Double?) -> String {
            guard let v, v.isFinite else { return "null" }
            return NumberText.plain((v * 1_000_000).rounded() / 1_000_000)
        }
        var fields = [
            "\"frames\":\(n(frames))", "\"fps\":\(d(fps))", "\"duration\":\(d(duration))",
            "\"width\":\(n(width))", "\"height\":\(n(height))",
            "\"output\":\(output.map { RunReport.quote(RunReport.name($0).text, display: false) } ?? "null")",
        ]
        // A name that is not UTF-8: its exact bytes too.
        if let hex = output.flatMap({ RunReport.name($0).hex }) { fields.append("\"output_hex\":\"\(hex)\"") }
        fields += [
            "\"bytes\":\(n(bytes))",
            "\"still\":\(still.map { $0 ? "true" : "false" } ?? "null")",
            "\"loop\":\(loop.map { $0 ? "true" : "false" } ?? "null")",
            "\"backend\":\(backend.map { "\"\($0)\"" } ?? "null")",
            "\"warnings\":[\(warnings.map { RunReport.quote($0) }.joined(separator: ","))]",
        ]
        if let preset { fields.append("\"preset\":\(preset)") }
        if let error { fields.append("\"error\":\(RunReport.quote(error))") }
        if let details { fields.append("\"details\":\(RunReport.quote(details))") }
        return "{" + fields.joined(separator: ",") + "}"
    }

    /// Prints the object when `--json` was given: on stdout, or as the
    /// last line of stderr when the output itself is stdout.
    ///
    /// - Throws: `MediaError` when stdout cannot take it (a full disk, a
    ///   closed pipe, stdout closed at start): the run then fails.
    package func printJSON() throws {
        flushWarnings()
        guard json, printed.claim() else { return }
        if toStderr {
            ThisProcess.flushOutput()
            printError(object)
        } else {
            try Messages.writeStdout(object + "\n")
        }
    }

    /// Whether the object was printed: at most once, by `printJSON` or by
    /// the signal watchdog when a frame outlasts its grace (`printLastWords`).
    private final class Printed: Sendable {
        package let done = Atomic<Bool>(false)
        /// True for the first caller only.
        package func claim() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
    }
    private let printed = Printed()
    /// What the watchdog prints: the object as an interrupted run would
    /// end it, where (stderr with the frames on stdout), and its report's flag.
    private static let interrupted = Mutex<(object: String, toStderr: Bool, printed: Printed)?>(nil)

    /// Prepares what the signal watchdog prints if it must end the run
    /// before the run can (a frame that takes longer than its grace): the
    /// object as known now, with `error` "interrupted" and no output
    /// claimed. Call it when the frames are about to start.
    package func armForInterruption() {
        guard json else { return }
        let saved = (output, bytes, error, details)
        fail("interrupted")
        let text = object
        (output, bytes, error, details) = saved
        let stderr = toStderr, flag = printed
        RunReport.interrupted.withLock { $0 = (text, stderr, flag) }
    }

    /// Prints the object `armForInterruption` prepared, unless the object
    /// was printed already (called by the watchdog just before it exits).
    package static func printLastWords() {
        guard let last = interrupted.withLock({ $0 }), last.printed.claim() else { return }
        Messages.writeWithoutWaiting(last.object + "\n", to: last.toStderr ? STDERR_FILENO : STDOUT_FILENO)
    }

    /// Records a failure: its first line as `error`, the rest as `details`;
    /// an output that was not written is not claimed (`output` and `bytes`
    /// are null unless the output was complete; `frames` stays the clip's).
    package func fail(_ message: String) {
        let (line, rest) = Messages.firstLineAndDetails(message)
        error = line.hasPrefix("wobble-run: ") ? String(line.dropFirst(12)) : line
        details = rest
        if bytes == nil { output = nil }
    }

    /// What a finished sink wrote: its size, and a video's real frame size
    /// (an odd side padded by one edge pixel for H.264).
    package func record(_ sink: FrameSink?) {
        bytes = sink?.bytesWritten
        if let video = sink as? VideoSink {
            width = video.encodedWidth
            height = video.encodedHeight
        }
    }

    /// A file name as JSON gives it: its bytes as UTF-8 text, each byte
    /// that is not UTF-8 as U+FFFD, and then (`hex`) the exact bytes in
    /// hexadecimal (nil when the name is valid UTF-8, where the text is exact).
    package static func name(_ path: String) -> (text: String, hex: String?) {
        let bytes = PathBytes.bytes(path)
        let text = String(decoding: bytes, as: UTF8.self)
        if text.utf8.elementsEqual(bytes) { return (text, nil) }
        return (text, bytes.map { String(format: "%02x", $0) }.joined())
    }

    /// A JSON string: quotes, backslashes and control characters escaped;
    /// with `display` (a message), bytes that are not UTF-8 and control
    /// characters but newline and tab shown as on stderr (`\xFF`, `\x1B`).
    package static func quote(_ s: String, display: Bool = true) -> String {
        var out = "\""
        for u in (display ? PathBytes.display(s) : s).unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case _ where display && Messages.escapes(u):
                // A message: escaped as on stderr (`Messages.terminalSafe`).
                out += String(format: "\\\\x%02X", u.value)
            case "\r": out += "\\r"
            case _ where u.value < 0x20 || u.value == 0x7F:
                out += String(format: "\\u%04x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out + "\""
    }
}
