/// Parses an accelerometer trace (CSV `t, ax, ay`; optional header
/// `t,ax,ay`; blank lines ignored; LF or CRLF line ends, an optional UTF-8
/// byte order mark). Errors name `file:line`.
public func parseMotionTrace(_ text: String, fileName: String) throws -> [MotionSample] {
    var out: [MotionSample] = []
    var lineNo = 0
    // "\r\n" is one Character in Swift: split on it as well as on "\n".
    let body = text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text
    for raw in body.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
        lineNo += 1
        let line = raw.trimmingCharacters(in: " \t\r")
        if line.isEmpty { continue }
        let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: " \t") }
        if out.isEmpty && fields.map({ $0.lowercased() }) == ["t", "ax", "ay"] { continue }
        guard fields.count == 3 else {
            throw SceneError("enableMotion", "\(fileName):\(lineNo): expected 3 columns t,ax,ay, got \(fields.count)")
        }
        var v: [Double] = []
        for (i, f) in fields.enumerated() {
            guard let d = Double(f), d.isFinite else {
                // Never quote the field: the trace may be any file on the machine.
                throw SceneError("enableMotion", "\(fileName):\(lineNo):\(fieldColumn(i, in: raw)): column \(["t", "ax", "ay"][i]): expected a finite number")
            }
            v.append(d)
        }
        guard v[0] >= 0 else { throw SceneError("enableMotion", "\(fileName):\(lineNo): t must be >= 0") }
        out.append(MotionSample(time: v[0], ax: v[1], ay: v[2]))
    }
    return out
}

/// The 1-based column (in characters) where field `i` of a trace line
/// starts, after its leading blanks.
private func fieldColumn(_ i: Int, in raw: Substring) -> Int {
    var column = 1, field = 0
    var atStart = true
    for c in raw {
        if field == i {
            if atStart && (c == " " || c == "\t") { column += 1; continue }
            return column
        }
        if c == "," { field += 1; atStart = true }
        column += 1
    }
    return column
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var s = self[...]
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String { self[...].trimmingCharacters(in: set) }
}
