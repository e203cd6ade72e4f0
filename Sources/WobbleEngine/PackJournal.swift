import Foundation
import WobbleSystem

/// What a pack remembers between runs, beside its outputs
/// (`.wobble-pack/journal` in the pack's folder): for each finished row,
/// what it was asked (`recipe`, a hash of its fields, the renderer and the
/// tool's version), the output it wrote (size and content hash) and each
/// file the render read (path, size and content hash). A row whose recipe,
/// output and inputs are all unchanged is finished: a later run skips it.
/// Rows are keyed by their output, so rows may be reordered, added or
/// removed; a row whose output was renamed is a new row.
///
/// Written whole (a temporary file renamed over it) under the pack's state
/// lock, so slices finishing rows at once, or a kill at any moment, leave
/// it whole: at worst a finished row is not yet recorded, and is rendered
/// again (to the same bytes).
package struct PackJournal {
    package struct Input: Equatable, Sendable {
        package var path: String
        package var hash: ContentHash
    }

    package struct Entry: Equatable, Sendable {
        package var recipe: UInt64
        package var output: ContentHash
        /// The clip's frames and play time (what `--json` reports of a row skipped).
        package var frames: Int
        package var duration: Double
        package var inputs: [Input]
    }

    /// By output (the path as the manifest gives it, from the pack's folder).
    package var rows: [String: Entry] = [:]

    /// The shards of a long row rendered so far (`--slice` with a long
    /// clip): by output, the recipe and shard count they belong to and
    /// which shards are done.
    package struct Shards: Equatable, Sendable {
        package var recipe: UInt64
        package var count: Int
        package var done: Set<Int>
    }
    package var shards: [String: Shards] = [:]

    static let header = "wobble-pack journal 1"

    /// The journal's text.
    var text: String {
        var s = PackJournal.header + "\n"
        for (key, e) in rows.sorted(by: { $0.key < $1.key }) {
            s += "row \(hex(key)) \(String(e.recipe, radix: 16)) \(e.output.size) \(String(e.output.hash, radix: 16)) \(e.frames) \(e.duration) \(e.inputs.count)"
            for i in e.inputs { s += " \(hex(i.path)) \(i.hash.size) \(String(i.hash.hash, radix: 16))" }
            s += "\n"
        }
        for (key, sh) in shards.sorted(by: { $0.key < $1.key }) {
            s += "shards \(hex(key)) \(String(sh.recipe, radix: 16)) \(sh.count) " + sh.done.sorted().map(String.init).joined(separator: ",") + "\n"
        }
        return s
    }

    /// Parses `text`; a line that cannot be read is left out (its row is
    /// then rendered again), a text of another format is an empty journal.
    init(text: String) {
        let lines = text.split(separator: "\n")
        guard lines.first.map(String.init) == PackJournal.header else { return }
        for line in lines.dropFirst() {
            let w = line.split(separator: " ")
            if w.count == 5, w[0] == "shards", let key = unhex(w[1]), let recipe = UInt64(w[2], radix: 16), let count = Int(w[3]) {
                let done = w[4].split(separator: ",").compactMap { Int($0) }
                shards[key] = Shards(recipe: recipe, count: count, done: Set(done))
                continue
            }
            guard w.count >= 8, w[0] == "row", let key = unhex(w[1]), let recipe = UInt64(w[2], radix: 16),
                  let size = Int(w[3]), let hash = UInt64(w[4], radix: 16), let frames = Int(w[5]), let duration = Double(w[6]),
                  let n = Int(w[7]), n >= 0, w.count == 8 + 3 * n else { continue }
            var inputs: [Input] = []
            for k in 0..<n {
                let b = 8 + 3 * k
                guard let p = unhex(w[b]), let s = Int(w[b + 1]), let h = UInt64(w[b + 2], radix: 16) else { inputs = []; break }
                inputs.append(Input(path: p, hash: ContentHash(size: s, hash: h)))
            }
            guard inputs.count == n else { continue }
            rows[key] = Entry(recipe: recipe, output: ContentHash(size: size, hash: hash), frames: frames, duration: duration, inputs: inputs)
        }
    }

    package init() {}

    /// Whether the row writing `key` (at `outputPath`) with `recipe` is
    /// finished: recorded with that recipe, its output and every input
    /// unchanged.
    package func isFinished(_ key: String, recipe: UInt64, outputPath: String) -> Bool {
        guard let e = rows[key], e.recipe == recipe, ContentHash.of(file: outputPath) == e.output else { return false }
        return e.inputs.allSatisfy { ContentHash.of(file: $0.path) == $0.hash }
    }

    // MARK: On disk

    /// The journal of the pack's state folder `dir`.
    package static func load(_ dir: String) -> PackJournal {
        guard let bytes = try? Posix.readFile(ScenePaths.join(dir, "journal"), limit: 256 << 20) else { return PackJournal() }
        return PackJournal(text: String(decoding: bytes, as: UTF8.self))
    }

    /// Reads, changes and writes back the journal of `dir` under the state lock.
    /// `beforeRename` runs once the new text is written, before it
    /// replaces the old (a test's hook).
    package static func update(_ dir: String, beforeRename: (() -> Void)? = nil, _ change: (inout PackJournal) throws -> Void) throws {
        try PackState.withLock(dir) {
            var j = load(dir)
            try change(&j)
            try AtomicFile.write(Array(j.text.utf8), to: ScenePaths.join(dir, "journal"), name: .madeUp, beforeRename: beforeRename)
        }
    }

    private func hex(_ s: String) -> String {
        let b = PathBytes.bytes(s)
        return b.isEmpty ? "-" : b.map { String(format: "%02x", $0) }.joined()
    }

    private func unhex(_ s: Substring) -> String? {
        if s == "-" { return "" }
        guard s.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            guard let b = UInt8(s[i..<j], radix: 16) else { return nil }
            bytes.append(b)
            i = j
        }
        return PathBytes.string(bytes)
    }
}
