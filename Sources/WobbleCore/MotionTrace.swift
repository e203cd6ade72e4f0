/// Parses an accelerometer trace (CSV `t, ax, ay`; optional header
/// `t,ax,ay`; blank lines ignored; LF or CRLF line ends, an optional UTF-8
/// byte order mark). Errors name `file:line`.
///
/// One pass over the UTF-8 bytes (a million rows parse in well under a
/// second in a release build: Scripts/bench-trace.sh); each field is read
/// by `Double(_:)`, as before, so the accepted numbers do not change.
public func parseMotionTrace(_ text: String, fileName: String) throws -> [MotionSample] {
    var text = text
    return try text.withUTF8 { try parseMotionTrace(bytes: $0, fileName: fileName) }
}

private func parseMotionTrace(bytes all: UnsafeBufferPointer<UInt8>, fileName: String) throws -> [MotionSample] {
    let newline = UInt8(ascii: "\n"), comma = UInt8(ascii: ","), space = UInt8(ascii: " "),
        tab = UInt8(ascii: "\t"), cr = UInt8(ascii: "\r")
    var out: [MotionSample] = []
    out.reserveCapacity(all.count / 12)
    var start = all.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
    var lineNo = 0
    let columns = ["t", "ax", "ay"]
    /// `all[a..<b]` without leading and trailing bytes in `trim`.
    func trimmed(_ a: Int, _ b: Int, _ isTrim: (UInt8) -> Bool) -> Range<Int> {
        var a = a, b = b
        while a < b, isTrim(all[a]) { a += 1 }
        while b > a, isTrim(all[b - 1]) { b -= 1 }
        return a..<b
    }
    /// The 1-based column (in characters, not bytes) where `r` starts on the current line.
    func column(of r: Range<Int>) -> Int {
        var n = 1
        for i in start..<r.lowerBound where all[i] & 0xC0 != 0x80 { n += 1 }
        return n
    }
    func text(_ r: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: all[r]), as: UTF8.self) }
    var fields: [Range<Int>] = []
    while start <= all.count {
        var end = start
        while end < all.count, all[end] != newline { end += 1 }
        defer { start = end + 1 }
        lineNo += 1
        let line = trimmed(start, end) { $0 == space || $0 == tab || $0 == cr }
        if line.isEmpty { continue }
        fields.removeAll(keepingCapacity: true)
        var f = line.lowerBound
        for i in line where all[i] == comma {
            fields.append(trimmed(f, i) { $0 == space || $0 == tab })
            f = i + 1
        }
        fields.append(trimmed(f, line.upperBound) { $0 == space || $0 == tab })
        if out.isEmpty && fields.count == 3 && zip(fields, columns).allSatisfy({ text($0).lowercased() == $1 }) { continue }
        guard fields.count == 3 else {
            throw SceneError("enableMotion", "\(fileName):\(lineNo): expected 3 columns t,ax,ay, got \(fields.count)")
        }
        var v = (0.0, 0.0, 0.0)
        for (i, r) in fields.enumerated() {
            // `Double(_:)` reads a C string: it would stop at a NUL byte
            // and take "1.5\0xyz" for 1.5, so a field holding one is refused.
            let s = text(r)
            guard !all[r].contains(0), let d = Double(s), d.isFinite else {
                // Never quote the field: the trace may be any file on the machine.
                throw SceneError("enableMotion", "\(fileName):\(lineNo):\(column(of: r)): column \(columns[i]): expected a finite number")
            }
            switch i {
            case 0: v.0 = d
            case 1: v.1 = d
            default: v.2 = d
            }
        }
        guard v.0 >= 0 else { throw SceneError("enableMotion", "\(fileName):\(lineNo): t must be >= 0") }
        out.append(MotionSample(time: v.0, ax: v.1, ay: v.2))
    }
    return out
}
