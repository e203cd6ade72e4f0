internal import CWobbleSys
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes one line to stderr (a newline added unless `s` ends with one),
/// on a line of its own (after a newline when a scene's `io.write` left
/// one open). File-name bytes that are not UTF-8 or control characters
/// (kept in `PathBytes` strings) show as `\xFE`: the one way the tool and
/// the studio print a message. Every message goes through
/// `Messages.terminalSafe`. A stderr that cannot be written is ignored
/// (there is nowhere left to say so).
public func printError(_ s: String) {
    let s = Messages.terminalSafe(PathBytes.display(s))
    Messages.writeLine(s.hasSuffix("\n") ? s : s + "\n", to: STDERR_FILENO)
}

/// What the tool writes for people and pipelines, made safe to print.
public enum Messages {
    /// The longest line a message keeps, and the most it keeps in all.
    public static let maxLine = 4096
    public static let maxTotal = 65536

    /// `s` with every control character but newline and tab written as
    /// `\x1B` (a carriage return or an escape sequence in a file name or a
    /// script's error cannot rewrite the terminal's line or forge another
    /// one), each line cut at `maxLine` characters and the whole at
    /// `maxTotal`, each cut saying how much was left out.
    public static func terminalSafe(_ s: String) -> String {
        var out = ""
        var total = 0
        let lines = s.split(separator: "\n", omittingEmptySubsequences: false)
        for (i, line) in lines.enumerated() {
            if i > 0 { out += "\n" }
            if total >= maxTotal {
                let rest = lines[i...].reduce(0) { $0 + $1.count + 1 } - 1
                out += "… (\(rest) more characters cut)"
                break
            }
            var kept = 0
            var cut = 0
            for c in line.unicodeScalars {
                if kept >= maxLine { cut += 1; continue }
                if escapes(c) {
                    out += String(format: "\\x%02X", c.value)
                } else {
                    out.unicodeScalars.append(c)
                }
                kept += 1
            }
            if cut > 0 { out += " … (\(cut) more characters cut)" }
            total += kept
        }
        return out
    }

    /// Whether a message shows `c` escaped (`\x1B`): a control character
    /// but tab (newline splits lines before this is asked).
    public static func escapes(_ c: Unicode.Scalar) -> Bool {
        c.value < 0x20 && c != "\t" || c.value == 0x7F || (0x80..<0xA0).contains(c.value)
    }

    /// The first line of `s` (a one-line error for `--json`), cut to
    /// `maxLine`, and the rest cut to `maxTotal` (its `details`; nil when
    /// there is none).
    public static func firstLineAndDetails(_ s: String) -> (line: String, details: String?) {
        func cut(_ t: String, _ limit: Int) -> String {
            t.count > limit ? String(t.prefix(limit)) + " … (\(t.count - limit) more characters cut)" : t
        }
        guard let nl = s.firstIndex(of: "\n") else { return (cut(s, maxLine), nil) }
        let rest = String(s[s.index(after: nl)...])
        return (cut(String(s[..<nl]), maxLine), rest.isEmpty ? nil : cut(rest, maxTotal))
    }

    /// Writes `text` to standard output completely, through the C library's
    /// buffer first (what a scene printed comes before it).
    ///
    /// - Throws: `MediaError` saying why (a full disk, a closed pipe, a
    ///   standard output that was closed when the tool started).
    /// `text` starts on a line of its own: after a newline when what a
    /// scene wrote (`io.write("x")`) left a line open.
    public static func writeStdout(_ text: String) throws {
        if Posix.stdoutWasClosed {
            throw MediaError("cannot write to stdout: it was closed when wobble-run started")
        }
        if fflush(nil) != 0 {
            throw MediaError("cannot write to stdout: \(String(cString: strerror(errno)))")
        }
        let bytes = Array(((wobble_stream_line_open(STDOUT_FILENO) != 0 ? "\n" : "") + text).utf8)
        do {
            try Posix.write(STDOUT_FILENO, bytes, shown: "stdout")
        } catch let e as PosixError {
            throw MediaError("cannot write to stdout: \(String(cString: strerror(e.code)))")
        }
        wobble_stream_note(STDOUT_FILENO, bytes, bytes.count)
    }

    /// Writes `line` to `fd` (stderr) after what the C library holds for
    /// it, on a line of its own; failures are ignored.
    static func writeLine(_ line: String, to fd: Int32) {
        fflush(nil)
        let bytes = Array(((wobble_stream_line_open(fd) != 0 ? "\n" : "") + line).utf8)
        try? Posix.write(fd, bytes, shown: "stderr")
        wobble_stream_note(fd, bytes, bytes.count)
    }

    /// Writes `text` to stderr as it is: no newline added, not on a line
    /// of its own, not through the C library's buffer (a progress line
    /// that rewrites itself with `\r`, the window's last words while
    /// another thread may hold the C library's lock). Failures are ignored.
    public static func writeStderr(_ text: String) {
        try? Posix.write(STDERR_FILENO, Array(text.utf8), shown: "stderr")
    }

    /// Writes `text` to `fd` (1 or 2) on a line of its own, never waiting
    /// on a reader that does not read: each piece of at most 4096 bytes is
    /// written only once `fd` is ready for it (within 0.1 s), else the rest
    /// is dropped. Takes no lock of the C library. For the signal
    /// watchdog's last words, which must not keep the process from exiting.
    public static func writeWithoutWaiting(_ text: String, to fd: Int32) {
        let bytes = Array(((wobble_stream_line_open(fd) != 0 ? "\n" : "") + text).utf8)
        var at = 0
        while at < bytes.count {
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&p, 1, 100) == 1, p.revents & Int16(POLLOUT) != 0 else { return }
            let n = bytes[at...].prefix(4096).withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            at += n
        }
    }

    /// Sends the C library's stdout and stderr (what a scene's `print` and
    /// `io.write` use) through streams that remember whether a line is
    /// left open, so that the tool's messages and the `--json` object
    /// always start on a line of their own. Called once at start-up,
    /// before anything is written.
    public static func trackStandardStreams() {
        _ = wobble_track_standard_streams()
    }
}
