import Foundation

/// Writes one line to stderr (a newline added unless `s` ends with one).
/// File-name bytes that are not UTF-8 (kept in `PathBytes` strings) show as
/// `\xFE`: the one way the tool and the studio print a message.
public func printError(_ s: String) {
    let s = PathBytes.display(s)
    FileHandle.standardError.write(Data((s.hasSuffix("\n") ? s : s + "\n").utf8))
}
