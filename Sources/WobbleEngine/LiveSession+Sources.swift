import Foundation
import Synchronization
import WobbleCore
import WobbleMedia
import WobbleRender
import WobbleScript
import WobbleSystem

/// A live session's source edits: the scene file's `addSketch` calls behind each sketch, following them when the text changes, which can be edited, the handles, the performed events.
extension LiveSession {
    // MARK: Sketches

    /// The scene file's call that made each sketch of the last run, by
    /// ordinal (the calls made from the scene file's text).
    func sourceCalls() -> [Int: SketchSource.Call] {
        var out: [Int: SketchSource.Call] = [:]
        for n in sketchCalls.indices { if let c = sourceCall(n) { out[n] = c } }
        return out
    }

    /// An unsaved edit whose call another program's save took away (deleted,
    /// or copied so that which copy is the edited one cannot be told). It
    /// is applied to no sketch and written nowhere; a save is refused while
    /// one is pending (`dropDetached` lets it go).
    public struct DetachedEdit: Sendable, Equatable {
        /// The sketch as the edit had it.
        public var state: SketchState
        /// The call as it was: `body (scene.lua:3)`.
        public var label: String
        public var problem: SourceMerge.Problem
        /// The edit was the region's deletion (`Delete`): which copy to
        /// take out cannot be told.
        public var deletion = false
        /// The save's refusal: `body (scene.lua:3) was deleted on disk; ...`.
        public var message: String {
            "\(label) \(problem.phrase); the \(deletion ? "deletion" : "edit") stays pending — Ctrl+Z drops it"
        }
    }

    /// Lets the newest detached edit go (all of them: `all`); returns what was dropped.
    @discardableResult
    public func dropDetached(all: Bool = false) -> [DetachedEdit] {
        guard !detached.isEmpty else { return [] }
        let dropped = all ? detached : [detached.removeLast()]
        if all { detached = [] }
        return dropped
    }

    /// How a call is named in messages: `body (scene.lua:3)`, or `the
    /// sketch of scene.lua:3` when it is assigned to no name.
    func label(_ call: SketchSource.Call, name: String? = nil) -> String {
        if let n = name ?? call.declaration?.name { return "\(n) (\(options.scenePath):\(call.line))" }
        return "the sketch of \(options.scenePath):\(call.line)"
    }

    /// Another program saved the scene and it ran: the pending edits (and
    /// the texts they were made on) follow their calls by the calls'
    /// identity (`SourceMerge.match`), never by position: an `addSketch`
    /// inserted, deleted or moved before an edited one does not hand its
    /// edit to another sketch. A call whose own argument changed stays
    /// matched (by its name, or by its place when unnamed; its save is
    /// then a conflict); an edit whose call is gone or copied is detached.
    /// Edits equal to what the new text makes are no edits any more.
    func followCalls(from oldSource: SketchSource, calls oldCalls: [Int: SketchSource.Call], base oldBase: [Int: SketchState]) {
        guard let newSource = sceneSource else { return }
        let found = SourceMerge.match(oldSource, newSource)
        var ordinalOfText: [Int: Int] = [:]
        for (m, c) in sourceCalls() { if let j = newSource.index(of: c) { ordinalOfText[j] = m } }
        var map: [Int: Int] = [:]
        var how: [Int: SourceMerge.Found] = [:]
        for (n, c) in oldCalls {
            guard let i = oldSource.index(of: c) else { continue }
            how[n] = found[i]
            if let j = found[i].index, let m = ordinalOfText[j] { map[n] = m }
        }
        let moved = CallsMoved(ordinals: map, oldBase: oldBase, newBase: baseStates)
        var calls: [Int: SketchState] = [:], bases: [Int: [UInt8]] = [:]
        for (n, var state) in edits.calls.sorted(by: { $0.key < $1.key }) {
            guard let m = map[n] else {
                let problem: SourceMerge.Problem = how[n] == .duplicated ? .duplicated : .deleted
                let name = oldCalls[n].map { label($0) } ?? "a sketch"
                detached.append(DetachedEdit(state: state, label: name, problem: problem))
                continue
            }
            // Renamed on disk and not in the studio: the edit takes the new name.
            if case .renamed = how[n], state.name == oldBase[n]?.name { state.name = baseState(m)?.name }
            calls[m] = state
            bases[m] = callBases[n]
        }
        for (m, state) in calls where state == baseState(m) { calls[m] = nil; bases[m] = nil }
        // A deleted region follows its call too; one whose call is gone on
        // disk is deleted no more (the file says what is there); one whose
        // call was copied is detached (which copy to take out cannot be
        // told: the save is refused, naming it).
        var deleted = Set<Int>()
        for n in edits.deleted.sorted() {
            if let m = map[n] {
                deleted.insert(m)
                bases[m] = callBases[n]
            } else if how[n] == .duplicated, let state = oldBase[n] {
                let name = oldCalls[n].map { label($0) } ?? "a region"
                detached.append(DetachedEdit(state: state, label: name, problem: .duplicated, deletion: true))
            }
        }
        if calls != edits.calls || deleted != edits.deleted {
            callBases = bases
            edits.calls = calls
            edits.deleted = deleted
            rerunForMovedEdits = true
        }
        callsMoved?(moved)
    }

    /// Which call made a sketch, and whether the studio may edit it: the
    /// source call in the scene's text (nil and the message when it may not).
    public func editableCall(_ ordinal: Int) -> (call: SketchSource.Call?, problem: String?) {
        guard ordinal >= 0, ordinal < sketchCalls.count else { return (nil, "this sketch is not in the last run") }
        let c = sketchCalls[ordinal]
        let chunk = "@" + options.scenePath
        guard let line = c.line, let source = c.source else {
            return (nil, "\(options.scenePath): this sketch is computed; edit the script")
        }
        guard source == chunk else {
            let shown = source.hasPrefix("@") ? String(source.dropFirst()) : source
            return (nil, "\(shown):\(line): this sketch is made in another file; edit it there")
        }
        let computed = "\(options.scenePath):\(line): this sketch is computed; edit the script"
        guard let call = sourceCall(ordinal), SketchSource.problem(call) == nil else { return (nil, computed) }
        return (call, nil)
    }

    /// Which call made a region, and whether the studio may delete it (its
    /// statement taken out of the scene on save): the source call (nil and
    /// the message, one line, when it may not). A region made in another
    /// file, by a line that makes several (a loop, a function called more
    /// than once), by a statement that holds more than the call, or whose
    /// local another line names, is not deleted by the studio; uses on
    /// lines whose kick the timeline deleted do not count (the save takes
    /// them out first).
    public func deletableCall(_ ordinal: Int) -> (call: SketchSource.Call?, problem: String?) {
        guard ordinal >= 0, ordinal < sketchCalls.count else { return (nil, "this region is not in the last run") }
        let c = sketchCalls[ordinal]
        guard let line = c.line, let source = c.source else {
            return (nil, "cannot delete this region: it is computed; delete it in the script")
        }
        guard source == "@" + options.scenePath else {
            let shown = source.hasPrefix("@") ? String(source.dropFirst()) : source
            return (nil, "cannot delete this region: it is made in another file (\(shown):\(line)); delete it there")
        }
        let at = "\(options.scenePath):\(line)"
        guard let call = sourceCall(ordinal), let src = sceneSource else {
            let made = callsByLine?[line]?.count ?? 1
            let written = sceneSource?.calls(onLine: line).count ?? 0
            let why = made > 1 && written >= 1
                ? "line \(line) makes \(made) regions (a loop or a function)"
                : "the studio cannot find its addSketch on line \(line)"
            return (nil, "cannot delete the region of \(at): \(why); delete it in a text editor")
        }
        if case .failure(let problem) = src.deletion(call, ignoringLines: edits.removedKicks) {
            return (nil, "cannot delete \(label(call)): \(problem.reason)")
        }
        return (call, nil)
    }

    /// The call in the scene's text that made the sketch of the n-th call of
    /// the last run: the k-th call made from a line is the k-th written on
    /// it; nil when the line made more (or fewer) sketches than it has calls
    /// (a loop, a function), or the call is in another file.
    public func sourceCall(_ ordinal: Int) -> SketchSource.Call? {
        guard sketchCalls.indices.contains(ordinal), let line = sketchCalls[ordinal].line,
              sketchCalls[ordinal].source == "@" + options.scenePath, let src = sceneSource else { return nil }
        let chunk = "@" + options.scenePath
        if callsByLine == nil {
            var index: [Int: [Int]] = [:]
            for (i, c) in sketchCalls.enumerated() where c.source == chunk { if let l = c.line { index[l, default: []].append(i) } }
            callsByLine = index
        }
        let fromLine = callsByLine?[line] ?? []
        guard let k = fromLine.firstIndex(of: ordinal) else { return nil }
        let written = src.calls(onLine: line)
        guard written.count == fromLine.count else { return nil }
        return written[k]
    }

    /// The sketches and live models at frame `k` with the call that made
    /// each (the studio's handles).
    public func handleShapes(atFrame k: Int) -> [(shape: RegionShape, origin: SketchOrigin?, live: Bool)] {
        clip?.handleShapes(atFrame: k) ?? []
    }

    // MARK: Performed events

    /// Replaces the performed events without running the scene.
    public func setPerformed(_ events: [PerformedEvent]) {
        performed = events
    }
}

extension Clip {
    /// The sketches and live models at frame `k` with the call that made
    /// each (the studio's handles).
    public func handleShapes(atFrame k: Int) -> [(shape: RegionShape, origin: SketchOrigin?, live: Bool)] {
        let snap = timeline.snapshot(at: Double(k) / fps)
        var out: [(shape: RegionShape, origin: SketchOrigin?, live: Bool)] = []
        for (i, s) in snap.sketches.enumerated() {
            out.append((s, i < snap.sketchOrigins.count ? snap.sketchOrigins[i] : nil, false))
        }
        for m in snap.models { out.append((m.shape, m.origin, true)) }
        return out
    }
}
