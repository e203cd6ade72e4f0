/// A cutout's strokes as text: what the studio saves beside a mask
/// (`<scene>-masks/<name>.strokes` beside `<name>.png`) so that the strokes
/// that made the mask are the cutout's state across saves: the next stroke
/// refines the mask with all of them, not with itself alone.
///
/// One stroke a line: `object` or `background`, the brush's radius, then
/// its points (image pixels) as `x,y`, separated by spaces, in the shortest
/// form that reads back exactly. Lines that are empty or start with `#`
/// are comments.
///
///     # wobble-run cutout strokes
///     object 6 120.5,60 128,75
///     background 4 30,30
public enum CutoutStrokesFile {
    /// The strokes file beside a mask file: its path with `.png` (any case)
    /// replaced by `.strokes`, else `.strokes` appended.
    public static func path(besideMask mask: String) -> String {
        if mask.lowercased().hasSuffix(".png") { return String(mask.dropLast(4)) + ".strokes" }
        return mask + ".strokes"
    }

    /// `strokes` as the file's text (a comment line first).
    public static func text(_ strokes: [CutoutStroke]) -> String {
        var out = "# wobble-run cutout strokes: object|background RADIUS X,Y ...\n"
        for s in strokes {
            out += s.object ? "object" : "background"
            out += " " + NumberText.plain(s.radius)
            for p in s.points { out += " \(NumberText.plain(p.x)),\(NumberText.plain(p.y))" }
            out += "\n"
        }
        return out
    }

    /// Why a strokes file cannot be read: its line and what is wrong there.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }
    }

    /// The strokes of `text` (see the type's comment); throws `Problem` at
    /// the first line that is not one: a kind other than `object` or
    /// `background`, a radius or coordinate that is not a finite number (a
    /// radius must be above 0), a stroke without points.
    public static func parse(_ text: String) throws -> [CutoutStroke] {
        var strokes: [CutoutStroke] = []
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: " \t\r")
            if line.isEmpty || line.hasPrefix("#") { continue }
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            func fail(_ r: String) -> Problem { Problem(line: i + 1, reason: r) }
            let object: Bool
            switch fields[0] {
            case "object": object = true
            case "background": object = false
            default: throw fail("'\(fields[0])' is not object or background")
            }
            guard fields.count >= 2, let radius = Double(fields[1]), radius.isFinite, radius > 0 else {
                throw fail("the radius must be a number above 0")
            }
            guard fields.count >= 3 else { throw fail("a stroke needs at least one point x,y") }
            var points: [Point] = []
            for f in fields.dropFirst(2) {
                let xy = f.split(separator: ",", omittingEmptySubsequences: false)
                guard xy.count == 2, let x = Double(xy[0]), let y = Double(xy[1]), x.isFinite, y.isFinite else {
                    throw fail("'\(f)' is not a point x,y")
                }
                points.append(Point(x, y))
            }
            strokes.append(CutoutStroke(points: points, radius: radius, object: object))
        }
        return strokes
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var s = self
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return s
    }
}
