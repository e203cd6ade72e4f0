import WobbleCore

/// The warnings a clip earns before it is rendered: each is
/// probably a mistake that would waste a render. One line each.
public enum ClipWarnings {
    /// True when every model rests at the end of the clip.
    public static func isStill(_ clip: Clip) -> Bool {
        // A loop rests only when nothing in it ever moves.
        if clip.loop != nil { return (0 ..< clip.frameCount).allSatisfy { clip.frame($0).regions.isEmpty } }
        let end = clip.timeline.snapshot(at: clip.duration)
        return end.models.allSatisfy { m in
            m.kicks.isEmpty || !m.shape.canMove || m.parameters.model.restTime(m.kicks.array) <= clip.duration + 1e-6
        }
    }

    /// Sketches never prepared, regions outside the image, nothing moving.
    public static func of(_ clip: Clip) -> [String] {
        var out: [String] = []
        let entries = clip.timeline.entries
        let everPrepared = entries.contains { !$0.state.models.isEmpty }
        let sketched = entries.map { $0.state.sketches.count }.max() ?? 0
        if !everPrepared && sketched > 0 {
            out.append("\(sketched) sketch\(sketched == 1 ? " was" : "es were") never prepared: call prepare() to make \(sketched == 1 ? "it" : "them") wobble")
        }
        // Every region shape the clip shows, once, in the order it appears.
        var seen = Set<RegionShape>(), shapes: [RegionShape] = []
        for e in entries {
            for s in e.state.models.map(\.shape) + e.state.sketches where seen.insert(s).inserted { shapes.append(s) }
        }
        // A region whose corners enclose no area is empty wherever it lies
        // (`{x=0, y=0, w=0, h=0}` touches the image's corner: not outside).
        let empty = shapes.filter { $0.stillness == .empty }
        if let s = empty.first {
            let n = empty.count
            out.append("\(n == 1 ? "a region is" : "\(n) regions are") empty: \(n == 1 ? "its" : "the first's") corners \(p(s.lt)) \(p(s.rt)) \(p(s.rb)) \(p(s.lb)) enclose no area, so \(n == 1 ? "it never moves" : "they never move"); give \(n == 1 ? "it" : "each") a width and a height")
        }
        let w = Double(clip.imageWidth), h = Double(clip.imageHeight)
        // A region may reach past an edge on purpose (edges() says what it
        // pulls in from there); one whose center is off the image, or none
        // of whose area is on it, is a mistake (other units, another image).
        let outside = shapes.filter { s in
            guard s.stillness != .empty else { return false }
            let xs = [s.lt.x, s.rt.x, s.rb.x, s.lb.x], ys = [s.lt.y, s.rt.y, s.rb.y, s.lb.y]
            let off = (xs.max() ?? 0) <= 0 || (ys.max() ?? 0) <= 0 || (xs.min() ?? 0) >= w || (ys.min() ?? 0) >= h
            return off || s.center.x < 0 || s.center.y < 0 || s.center.x > w || s.center.y > h
        }
        if let s = outside.first {
            let n = outside.count
            out.append("\(n == 1 ? "a region lies" : "\(n) regions lie") outside the \(clip.imageWidth)×\(clip.imageHeight) image (the first: corners \(p(s.lt)) \(p(s.rt)) \(p(s.rb)) \(p(s.lb)), center \(p(s.center))); geometry is in source-image pixels")
        }
        if clip.frameCount > 1 || everPrepared {
            let moves = (0..<clip.frameCount).contains { !clip.frame($0).regions.isEmpty }
            if !moves {
                out.append("nothing moves in the clip's \(clip.frameCount) frame\(clip.frameCount == 1 ? "" : "s")" + (everPrepared ? " (\(whyStill(entries, clip: clip)))" : ""))
            }
        }
        return out
    }

    /// The looping GIF that ends while models still move.
    /// The looping-GIF warning when it applies: a GIF that loops (`loops`),
    /// of the whole clip (`wholeClip`), not a `loop()` clip, whose models
    /// still move at its end (`still` false).
    public static func loopJump(_ clip: Clip, loops: Bool, wholeClip: Bool, still: Bool) -> String? {
        loops && wholeClip && !still && clip.loop == nil ? loopJump(clip) : nil
    }

    public static func loopJump(_ clip: Clip) -> String {
        "the GIF loops but ends while regions still move (it jumps when it starts over); end the scene with untilStill(), or pass --loop -1"
    }

    /// Every warning of a scene's run that does not depend on the output:
    /// the script's own (with their lines), the clip's, the loop's.
    public static func scene(_ scriptWarnings: [String], clip: Clip) -> [String] {
        scriptWarnings + of(clip) + (clip.loop?.warnings ?? [])
    }

    /// Why no region moves in a clip that has models: none was reached,
    /// or those reached cannot move (and why), or they move by nothing.
    private static func whyStill(_ entries: [(time: Double, state: SceneSnapshot)], clip: Clip) -> String {
        var seen = Set<RegionShape>(), reached: [(shape: RegionShape, pinned: Bool)] = []
        for e in entries {
            for m in e.state.models where !m.kicks.isEmpty && seen.insert(m.shape).inserted {
                reached.append((m.shape, m.parameters.pin != nil))
            }
        }
        guard !reached.isEmpty else { return "no impulse, touch or shake reached a region" }
        let n = reached.count
        let did = n == 1 ? "an impulse, touch or shake reached a region" : "impulses, touches or shakes reached \(n) regions"
        guard let stuck = reached.first(where: { !$0.shape.canMove }), reached.allSatisfy({ !$0.shape.canMove }) else {
            // A kick that can move something but comes after the last
            // frame is seen by no frame (a low --fps: one frame at 0 s).
            var first: Double?
            for e in entries {
                for m in e.state.models where m.shape.canMove && m.parameters.strength != 0 {
                    for k in m.kicks.array where k.amplitude != 0 { first = min(first ?? k.start, k.start) }
                }
            }
            let last = Double(max(0, clip.frameCount - 1)) / clip.fps
            if let first, first > last + timeEpsilon {
                let frames = clip.frameCount == 1 ? "the only frame is at 0 s" : "the last frame, \(clip.frameCount - 1), is at \(NumberText.seconds(last)) s"
                return "the first impulse, touch or shake comes at \(NumberText.seconds(first)) s, after the last frame: \(frames) at \(NumberText.rate(clip.fps)) fps; wait() longer after it, or raise the frame rate"
            }
            return "\(did), but \(n == 1 ? "its" : "their") amplitude or strength is 0"
        }
        let whose = n == 1 ? "its" : "the first's"
        let why: String
        switch stuck.shape.stillness {
        case .empty?:
            why = "\(whose) corners enclose no area"
        case .notFinite?:
            why = "\(whose) corners or center are not finite numbers"
        default:
            why = "\(whose) center \(p(stuck.shape.center)) is not strictly inside \(n == 1 ? "its" : "that region's") corners (on an edge or outside)"
                + (stuck.pinned ? "; the pin holds the pinned edge still by itself: put the center inside" : "")
        }
        return "\(did), but \(n == 1 ? "it cannot" : "none can") move: \(why)"
    }

    private static func p(_ q: Point) -> String { "(\(NumberText.plain(q.x)), \(NumberText.plain(q.y)))" }
}
