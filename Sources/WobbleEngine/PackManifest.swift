import Foundation
import WobbleCore
import WobbleSystem

/// A pack's manifest (`wobble-run pack MANIFEST`): one row per clip, read
/// from a CSV file (a header naming the columns, RFC 4180 quoting: a field
/// in double quotes may hold commas, quotes doubled and line breaks) or
/// from JSON lines (one object per line, the same names as keys). Columns:
/// `scene`, `image`, `output` (the header must name them; an empty `image`
/// is the scene's own), and optionally `preset`, `fps`, `width`, `frames`
/// (`A-B`), `seed`. A row whose fields cannot be read is kept, with its
/// problem: it fails alone, the others still render.
package struct PackManifest {
    /// The manifest's path as given.
    package let path: String
    package var rows: [PackRow]

    /// The columns a manifest may have; the first three are required.
    package static let columns = ["scene", "image", "output", "preset", "fps", "width", "frames", "seed"]
    static let required = ["scene", "image", "output"]

    /// Reads and splits the manifest at `path`.
    ///
    /// - Throws: `RunError` for a manifest that cannot be read at all (no
    ///   such file, a header without the required columns, an unknown column).
    package static func read(_ path: String) throws -> PackManifest {
        let bytes: [UInt8]
        do {
            bytes = try Posix.readFile(path, shown: path, limit: 64 << 20)
        } catch let e as PosixError where e.code == ENOENT {
            throw RunError("manifest '\(path)': no such file")
        } catch {
            throw RunError("manifest '\(path)': \(error)")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RunError("manifest '\(path)': not UTF-8 text")
        }
        let firstText = text.drop { $0 == "\u{FEFF}" || $0.isWhitespace }
        let lower = path.lowercased()
        if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") || firstText.first == "{" {
            return PackManifest(path: path, rows: try jsonLines(text, path: path))
        }
        return PackManifest(path: path, rows: try csv(text, path: path))
    }

    // MARK: CSV

    /// The records of a CSV text, each with the line it starts on.
    static func records(_ text: String) throws -> [(line: Int, fields: [String])] {
        var out: [(Int, [String])] = []
        var fields: [String] = [], field = "", quoted = false, inQuotes = false
        var line = 1, start = 1, any = false
        var chars = Array(text.unicodeScalars)
        if chars.first == "\u{FEFF}" { chars.removeFirst() }
        var i = 0
        func endField() {
            fields.append(quoted ? field : field.trimmingCharacters(in: .whitespaces))
            field = ""
            quoted = false
        }
        func endRecord() {
            endField()
            // A blank line, or one that is only a comment, is no record.
            if !(fields.count == 1 && fields[0].isEmpty && !any) && !(fields.first?.hasPrefix("#") == true && !any) {
                out.append((start, fields))
            }
            fields = []
            any = false
        }
        while i < chars.count {
            let c = chars[i]
            i += 1
            if inQuotes {
                if c == "\"" {
                    if i < chars.count && chars[i] == "\"" { field.unicodeScalars.append("\""); i += 1 } else { inQuotes = false }
                } else {
                    if c == "\n" { line += 1 }
                    field.unicodeScalars.append(c)
                }
                continue
            }
            switch c {
            case "\"" where field.trimmingCharacters(in: .whitespaces).isEmpty && !quoted:
                field = ""
                inQuotes = true
                quoted = true
                any = true
            case ",":
                endField()
                any = true
            case "\r" where i < chars.count && chars[i] == "\n":
                continue
            case "\n":
                endRecord()
                line += 1
                start = line
            default:
                if quoted && c != " " && c != "\t" {
                    throw RunError("line \(line): text after a closing quote (a quote inside a quoted field is written twice: \"\")")
                }
                if !quoted { field.unicodeScalars.append(c) }
            }
        }
        if inQuotes { throw RunError("line \(start): a quoted field is not closed") }
        if !field.isEmpty || !fields.isEmpty || quoted { endRecord() }
        return out
    }

    static func csv(_ text: String, path: String) throws -> [PackRow] {
        let records: [(line: Int, fields: [String])]
        do {
            records = try self.records(text)
        } catch let e as RunError {
            throw RunError("manifest '\(path)': \(e.message)")
        }
        guard let header = records.first else { throw RunError("manifest '\(path)': empty (it needs a header: \(required.joined(separator: ",")))") }
        let names = header.fields.map { $0.lowercased() }
        for n in names where !columns.contains(n) {
            throw RunError("\(path):\(header.line): unknown column '\(n)' (the columns are \(columns.joined(separator: ", ")))")
        }
        for n in required where !names.contains(n) {
            throw RunError("\(path):\(header.line): the header has no '\(n)' column (it needs \(required.joined(separator: ",")))")
        }
        if let twice = names.first(where: { n in names.filter { $0 == n }.count > 1 }) {
            throw RunError("\(path):\(header.line): the column '\(twice)' is named twice")
        }
        var rows: [PackRow] = []
        for (index, r) in records.dropFirst().enumerated() {
            var row = PackRow(index: index, manifest: path, line: r.line)
            if r.fields.count != names.count {
                row.problem = "\(r.fields.count) field\(r.fields.count == 1 ? "" : "s"), the header has \(names.count) (a field with a comma is written in double quotes)"
            } else {
                for (n, v) in zip(names, r.fields) where !v.isEmpty { row.fields[n] = v }
            }
            rows.append(row)
        }
        return rows
    }

    // MARK: JSON lines

    static func jsonLines(_ text: String, path: String) throws -> [PackRow] {
        var rows: [PackRow] = []
        for (n, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineText = raw.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: "\u{FEFF}")))
            if lineText.isEmpty || lineText.hasPrefix("#") { continue }
            var row = PackRow(index: rows.count, manifest: path, line: n + 1)
            defer { rows.append(row) }
            guard let object = try? JSONSerialization.jsonObject(with: Data(lineText.utf8)) as? [String: Any] else {
                row.problem = "not a JSON object"
                continue
            }
            for (key, value) in object.sorted(by: { $0.key < $1.key }) {
                guard columns.contains(key) else {
                    row.problem = "unknown key '\(key)' (the keys are \(columns.joined(separator: ", ")))"
                    break
                }
                if value is NSNull { continue }
                if let s = value as? String {
                    if !s.isEmpty { row.fields[key] = s }
                } else if let number = value as? NSNumber, String(cString: number.objCType) != "c" {
                    row.fields[key] = number.stringValue
                } else {
                    row.problem = "'\(key)' must be a string or a number"
                    break
                }
            }
        }
        return rows
    }
}

/// One row of a manifest: its fields as written, where it is (`line`, for
/// messages), its index among the rows (`--slice` counts it), and the
/// problem that keeps it from rendering, if any.
package struct PackRow: Sendable {
    /// 0-based among the manifest's rows.
    package var index: Int
    package var manifest: String
    /// The line the row starts on (1-based).
    package var line: Int
    package var fields: [String: String] = [:]
    package var problem: String?

    package init(index: Int, manifest: String, line: Int) {
        self.index = index
        self.manifest = manifest
        self.line = line
    }

    /// How messages name the row: `pack.csv:4`.
    package var name: String { "\(manifest):\(line)" }
}
