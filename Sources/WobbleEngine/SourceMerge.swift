import WobbleScript

/// Carrying pending sketch edits into a scene text that another program
/// saved meanwhile: a call is found again by its own text (its argument and
/// the name it is assigned to), not by the whole file's. A comment added,
/// another line changed, another sketch edited: the edits go in. The same
/// constructor changed there too: a conflict (no counterpart).
public enum SourceMerge {
    /// `call` of `run` (the text the last run read) in `target`: through
    /// `base` (the text the edits were made on); nil when its text changed
    /// in either, or is no longer found once.
    public static func counterpart(of call: SketchSource.Call, in run: SketchSource, through base: SketchSource,
                                   to target: SketchSource) -> SketchSource.Call? {
        guard let i = run.index(of: call), let inBase = find(call, at: i, from: run, in: base),
              let j = base.index(of: inBase) else { return nil }
        return find(inBase, at: j, from: base, in: target)
    }

    /// The call of `b` that is `call` (the i-th of `a`): the i-th of `b` when
    /// its text is the same, else the one call of `b` with that text.
    static func find(_ call: SketchSource.Call, at i: Int, from a: SketchSource, in b: SketchSource) -> SketchSource.Call? {
        let id = a.identity(call)
        if b.calls.indices.contains(i), b.identity(b.calls[i]) == id { return b.calls[i] }
        let same = b.calls.filter { b.identity($0) == id }
        return same.count == 1 ? same[0] : nil
    }
}
