import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// Editing the sketches in the studio: a handle dragged, a sketch added,
/// a parameter or name changed (the inspector), undone and redone
/// (`EditHistory`, across saves) and saved into the scene (Ctrl+S), all
/// through the live session. It says what it did through `status`; the
/// studio runs the scene again when `editsPending` is set.
package final class SketchEditor {
    private let session: LiveSession
    private let clock: TimeSource
    private let verbose: Bool
    /// Shows a status line (true: an error).
    package var status: (_ text: String, _ isError: Bool) -> Void = { _, _ in }

    private struct Drag {
        package var origin: SketchOrigin.Kind
        package var handle: Int
        package var start: SketchPoints
        package var moved = false
    }
    private var drag: Drag?
    /// Undo and redo.
    package private(set) var history = EditHistory()
    /// The edits and the calls' own sketches when the change under way
    /// (a drag, a scrub) began.
    private var changeStart: (edits: SketchEdits, base: [Int: SketchState])?
    private var editableCache: (generation: Int, kinds: [SketchOrigin.Kind: Bool]) = (-1, [:])
    /// The edits changed since the scene last ran with them (a run is due
    /// after this input).
    package var editsPending = false
    /// When the first input of edits not yet shown came.
    package var editInputTime: Double?

    package init(session: LiveSession, clock: TimeSource, verbose: Bool) {
        self.session = session
        self.clock = clock
        self.verbose = verbose
        // Undo steps follow the calls when another program saves the scene.
        session.callsMoved = { [unowned self] in
            history.follow($0)
            callsMoved?($0)
        }
    }

    package var isDragging: Bool { drag != nil }

    /// Told when a drag that moved a sketch's handles ends (after its
    /// undo step is recorded): the cutouts recut the region.
    package var handlesMoved: ((SketchOrigin.Kind) -> Void)?

    /// Told after the undo steps followed another program's save (the
    /// inspector's selection follows too).
    package var callsMoved: ((LiveSession.CallsMoved) -> Void)?

    private var scenePath: String { session.options.scenePath }

    /// Whether the sketch of `origin` may be dragged (cached per run).
    package func isEditable(_ origin: SketchOrigin?) -> Bool {
        guard let kind = origin?.kind else { return false }
        if editableCache.generation != session.generation { editableCache = (session.generation, [:]) }
        if let e = editableCache.kinds[kind] { return e }
        let e: Bool
        switch kind {
        case .call(let n): e = session.editableCall(n).call != nil
        case .added(let i): e = i < session.edits.added.count
        }
        editableCache.kinds[kind] = e
        return e
    }

    /// The handle within `radius` image pixels of `p` (the nearest) at
    /// frame `k`, with the sketch it belongs to: 0-3 the corners lt, rt,
    /// rb, lb, 4 the center. (The window's radius is 10 window pixels.)
    package func handleHit(at p: Point, radius: Double, frame k: Int) -> (origin: SketchOrigin?, handle: Int)? {
        var best: (origin: SketchOrigin?, handle: Int, d: Double)?
        for h in session.handleShapes(atFrame: k) {
            let points = [h.shape.lt, h.shape.rt, h.shape.rb, h.shape.lb, h.shape.center]
            for (i, q) in points.enumerated() where q.isFinite {
                let d = ((q.x - p.x) * (q.x - p.x) + (q.y - p.y) * (q.y - p.y)).squareRoot()
                if d <= radius, d < (best?.d ?? .infinity) { best = (h.origin, i, d) }
            }
        }
        return best.map { ($0.origin, $0.handle) }
    }

    /// The points of a sketch as the edits have them now.
    private func currentPoints(_ kind: SketchOrigin.Kind) -> SketchPoints? { session.currentState(kind)?.points }

    private func fail(_ m: String) {
        status(m, true)
        printError("studio: \(m)")
    }

    package func beginDrag(_ origin: SketchOrigin?, handle: Int) {
        guard let kind = origin?.kind else {
            fail("\(scenePath): this sketch is computed; edit the script")
            return
        }
        if case .call(let n) = kind, let problem = session.editableCall(n).problem {
            fail(problem)
            return
        }
        guard let start = currentPoints(kind) else { return }
        drag = Drag(origin: kind, handle: handle, start: start)
        beginChange()
    }

    /// Where the dragged handle was when the drag began (image pixels).
    package var dragStartPoint: Point? { drag.map { $0.start[handle: $0.handle] } }

    /// The dragged handle goes to image point `p`, to a tenth of a pixel
    /// (the front end keeps it where it can be grabbed again: the window,
    /// inside its picture area).
    package func moveDrag(to point: Point) {
        guard var d = drag else { return }
        let p = Point((point.x * 10).rounded() / 10, (point.y * 10).rounded() / 10)
        guard p.isFinite else { return }
        var pts = d.start
        // A center never set stays unset (it follows the corners); one
        // that was set stays where it is when a corner moves.
        pts[handle: d.handle] = p
        guard pts != currentPoints(d.origin) else { return }
        setPoints(d.origin, pts)
        d.moved = true
        drag = d
        edited()
    }

    package func endDrag() {
        guard let d = drag else { return }
        drag = nil
        guard d.moved, let p = currentPoints(d.origin) else { changeStart = nil; return }
        endChange()
        handlesMoved?(d.origin)
        let names = ["lt", "rt", "rb", "lb", "center"]
        let name = names[max(0, min(4, d.handle))]
        let v = p[handle: d.handle]
        let at = "(\(SketchSource.format(v.x)), \(SketchSource.format(v.y))) of \(describe(d.origin))"
        if !editsPending, !session.isRunning, let e = session.error {
            // The scene ran with the shape as dragged and failed: the last
            // good run plays (its handles where they were), and the status
            // says so instead of "moved".
            let first = e.message.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            status("the scene failed with \(name) at \(at): \(first); Ctrl+Z undoes", true)
            return
        }
        status("\(name) moved to \(at); Ctrl+S saves, Ctrl+Z undoes", false)
        if verbose { printError("studio: dragged \(name) of \(describe(d.origin)) to \(SketchSource.format(v.x)),\(SketchSource.format(v.y))") }
    }

    package func describe(_ kind: SketchOrigin.Kind) -> String {
        switch kind {
        case .call(let n):
            return session.sketchCalls.indices.contains(n) ? "the sketch of line \(session.sketchCalls[n].line ?? 0)" : "a sketch"
        case .added(let i): return session.edits.added.indices.contains(i) ? (session.edits.added[i].name ?? "added sketch \(i + 1)") : "a sketch"
        }
    }

    private func setPoints(_ kind: SketchOrigin.Kind, _ p: SketchPoints) {
        guard var state = session.currentState(kind) else { return }
        state.points = p
        session.setState(kind, state)
    }

    // MARK: Changes (a drag, a scrub, a key)

    /// A change begins: what it changes is one undo step.
    package func beginChange() {
        changeStart = (session.edits, session.baseStates)
    }

    /// Sets a sketch's state as part of the change under way (the scene runs again).
    package func change(_ kind: SketchOrigin.Kind, to state: SketchState) {
        guard session.currentState(kind) != state else { return }
        session.setState(kind, state)
        edited()
    }

    /// The change under way ends: one undo step, when it changed something.
    package func endChange() {
        guard let start = changeStart else { return }
        changeStart = nil
        if start.edits != session.edits { history.record(start.edits, base: start.base) }
    }

    /// A change in one go (a key).
    package func apply(_ kind: SketchOrigin.Kind, _ state: SketchState) {
        beginChange()
        change(kind, to: state)
        endChange()
    }

    /// Why `name` cannot be the name of the sketch, nil when it can.
    package func renameProblem(_ kind: SketchOrigin.Kind, to name: String) -> String? {
        switch kind {
        case .call:
            guard case .call(let n) = kind, let call = session.editableCall(n).call, let src = session.sceneSource else {
                return "this sketch is computed: name it in the script"
            }
            if session.edits.added.contains(where: { $0.name == name }) { return "\(name) is the name of an added region" }
            return src.renameProblem(call, to: name)
        case .added(let i):
            if let p = SketchSource.nameProblem(name) { return p }
            if let lines = session.sceneSource?.names[name] { return "\(name) is already used on line \(lines[0])" }
            if session.edits.added.enumerated().contains(where: { $0.offset != i && $0.element.name == name }) {
                return "\(name) is the name of another added region"
            }
            if session.edits.calls.values.contains(where: { $0.name == name }) { return "\(name) is the new name of another region" }
            return nil
        }
    }

    private func edited() {
        editsPending = true
        if editInputTime == nil { editInputTime = clock.now() }
    }

    /// Adds a 90x90 sketch whose corners are whole pixels, centred at `p`
    /// (to the nearest pixel), named `regionN` (the next free name); returns it.
    @discardableResult
    package func add(at p: Point) -> SketchOrigin.Kind? {
        let x = (p.x - 45).rounded(), y = (p.y - 45).rounded()
        let c = Point(x + 45, y + 45)
        let added = add(.square(centeredAt: c), what: "90x90 at (\(SketchSource.format(x)), \(SketchSource.format(y)))")
        if added != nil, verbose { printError("studio: added a sketch at \(SketchSource.format(c.x)),\(SketchSource.format(c.y))") }
        return added
    }

    /// Adds a sketch of `points` and `parameters` named `regionN` (the next
    /// free name), as one undo step; `what` says where in the status line.
    @discardableResult
    package func add(_ points: SketchPoints, parameters: WobbleParameters = .original, what: String) -> SketchOrigin.Kind? {
        guard session.clip != nil else { status("cannot add: the scene failed", true); return nil }
        let taken = Set(session.edits.added.compactMap(\.name) + session.edits.calls.values.compactMap(\.name))
        let name = session.sceneSource?.nextFreeName(taken: taken) ?? "region\(session.edits.added.count + 1)"
        beginChange()
        session.edits.added.append(SketchState(points: points, parameters: parameters, name: name))
        edited()
        endChange()
        status("added \(name), \(what); Ctrl+S saves, Ctrl+Z undoes", false)
        return .added(session.edits.added.count - 1)
    }

    /// `Delete` on a selected region, as one undo step (`Ctrl+Z` brings it
    /// back): an added region (not saved yet) is taken out of the edits,
    /// with its cutout (`Ctrl+S` then writes neither its line nor its
    /// mask); a region of the scene's own text is deleted from the preview
    /// at once and `Ctrl+S` takes its statement out of the scene and
    /// removes its mask file (and strokes) in `<scene>-masks` when no other
    /// region names it. A region the studio cannot take out of the text
    /// (made in a loop or a function, in another file, in a longer
    /// statement, or whose local another line uses) is not deleted: the
    /// status says why (`LiveSession.deletableCall`). Returns whether it
    /// was deleted.
    @discardableResult
    package func delete(_ kind: SketchOrigin.Kind) -> Bool {
        switch kind {
        case .call(let n):
            if let problem = session.deletableCall(n).problem {
                fail(problem)
                return false
            }
            let name = deletedName(n)
            change {
                $0.calls[n] = nil
                $0.deleted.insert(n)
            }
            status("deleted \(name); Ctrl+S takes its line out of the scene, Ctrl+Z brings it back", false)
            if verbose { printError("studio: deleted \(name)") }
            return true
        case .added(let i):
            guard session.edits.added.indices.contains(i) else { return false }
            let name = describe(kind)
            change { $0.added.remove(at: i) }
            status("deleted \(name) (Ctrl+Z brings it back)", false)
            if verbose { printError("studio: deleted \(name)") }
            return true
        }
    }

    /// A region of the scene's text as a deletion names it: `disc (line 2)`,
    /// `the region of line 2`.
    /// A deleted region with its line as the scene has it, for the undo
    /// stop after the save that takes it out (what to write again):
    /// `disc (line 3: local disc = addSketch{x = 65, y = 40, w = 70, h = 70})`,
    /// the line's first 80 characters.
    private func deletedWithLine(_ n: Int) -> String {
        guard session.sketchCalls.indices.contains(n), let line = session.sketchCalls[n].line,
              let text = session.sceneText else { return deletedName(n) }
        let lines = text.split(separator: 10, omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return deletedName(n) }
        var shown = Substring(String(decoding: lines[line - 1], as: UTF8.self))
        while shown.first?.isWhitespace == true { shown.removeFirst() }
        while shown.last?.isWhitespace == true { shown.removeLast() }
        if shown.count > 80 { shown = String(shown.prefix(79)) + "…" }
        return "\(session.baseState(n)?.name ?? "the region") (line \(line): \(shown))"
    }

    private func deletedName(_ n: Int) -> String {
        let line = session.sketchCalls.indices.contains(n) ? session.sketchCalls[n].line : nil
        let at = line.map { "line \($0)" } ?? "the scene"
        if let name = session.baseState(n)?.name { return "\(name) (\(at))" }
        return "the region of \(at)"
    }

    /// Sets the loop edit (nil: as the scene says) with its period (see
    /// `SketchEdits.loopPeriod`) as one undo step.
    package func setLoop(_ loop: Bool?, period: Double? = nil) {
        change {
            $0.loop = loop
            $0.loopPeriod = loop == true ? period : nil
        }
    }

    /// Changes the edits with `body` as one undo step (`record`: false
    /// while a gesture goes on whose start was recorded); the scene runs again.
    package func change(record: Bool = true, _ body: (inout SketchEdits) -> Void) {
        var e = session.edits
        body(&e)
        guard e != session.edits else { return }
        drag = nil
        if record { history.record(session.edits, base: session.baseStates) }
        session.edits = e
        edited()
    }

    package func undoLast() {
        drag = nil
        changeStart = nil
        // An edit whose call another program deleted goes first (the
        // refused save said Ctrl+Z drops it).
        if let d = session.dropDetached().first {
            offerUnsaved = false
            status("dropped the \(d.deletion ? "deletion" : "edit") of \(d.label) (\(d.problem.phrase.replacingOccurrences(of: " (copied on disk)", with: "")))"
                   + (session.hasUnsavedEdits ? "; Ctrl+S saves the rest" : ": no unsaved edits"), false)
            return
        }
        guard let step = history.undo(current: session.edits, base: session.baseStates) else {
            status("nothing to undo", false)
            return
        }
        if let message = step.wall {
            status(message, false)
            return
        }
        restore(step, what: "undone")
    }

    package func redoNext() {
        drag = nil
        changeStart = nil
        guard let step = history.redo(current: session.edits, base: session.baseStates) else {
            status("nothing to redo", false)
            return
        }
        restore(step, what: "redone")
    }

    private func restore(_ step: EditHistory.Step, what: String) {
        guard let edits = EditHistory.resolve(step, now: session.baseStates) else {
            status("cannot be \(what): the scene's sketches changed since", true)
            return
        }
        session.edits = edits
        edited()
        status("\(what)" + (edits.isEmpty ? ": no unsaved edits" : "; Ctrl+S saves"), false)
        if verbose { printError("studio: \(what) (\(history.undoSteps.count) to undo, \(history.redoSteps.count) to redo)") }
    }

    /// Writes the edits into the scene file; true when it wrote them (the
    /// saved scene is then due to run).
    package func save(sceneName: String) -> Bool {
        guard session.hasUnsavedEdits else { status("nothing to save", false); return false }
        drag = nil
        if offerUnsaved, session.sceneFileIsGone {
            offerUnsaved = false
            _ = keepUnsaved(sceneName: sceneName)
            return false
        }
        offerUnsaved = false
        do {
            let added = session.edits.added
            var taken = Set<String>()
            let names = added.map { a -> String in
                let n = a.name ?? session.sceneSource?.nextFreeName(taken: taken) ?? "region"
                taken.insert(n)
                return n
            }
            let loop = session.edits.loop, baked = session.edits.baked, removed = session.edits.removedKicks.count
            let deleted = session.edits.deleted.sorted().map(deletedWithLine)
            let r = try session.saveEdits(runAfter: false)
            // Stepping back past a save that added regions, deleted them
            // (their lines are gone from the file), or wrote lines of the
            // scene (loop(), the perform block, kicks taken out) would need
            // the file's lines changed: undo stops there and says what to
            // write, every kind the save did.
            var walls: [String] = []
            if !added.isEmpty {
                walls.append("added \(names.joined(separator: ", ")): delete \(names.count == 1 ? "its line" : "their lines") in the scene to take \(names.count == 1 ? "it" : "them") out")
            }
            if !deleted.isEmpty {
                walls.append("deleted \(deleted.joined(separator: ", ")): write \(deleted.count == 1 ? "its line" : "their lines") in the scene again to bring \(deleted.count == 1 ? "it" : "them") back")
            }
            if loop != nil || baked != nil || removed > 0 {
                walls.append("wrote the loop, the baked events or the deleted kicks: L, B and the timeline change them again")
            }
            if !walls.isEmpty { history.recordWall("undo stops at the save that " + walls.joined(separator: "; and that ")) }
            let parts: [String?] = [r.edited > 0 ? "\(r.edited) sketch\(r.edited == 1 ? "" : "es") edited" : nil,
                        r.added > 0 ? "\(r.added) added" : nil,
                        r.deleted > 0 ? "\(r.deleted) deleted" : nil,
                        loop.map { $0 ? "loop() written" : "loop() taken out" },
                        baked.map { "\($0.count) baked event\($0.count == 1 ? "" : "s")" },
                        removed > 0 ? "\(removed) kick\(removed == 1 ? "" : "s") deleted" : nil,
                        session.savedMasks.isEmpty ? nil : session.savedMasks.map { ScenePaths.name($0) }.joined(separator: ", ")
                            + " written in \(session.masksFolderName)",
                        session.removedMasks.isEmpty ? nil : session.removedMasks.map { ScenePaths.name($0) }.joined(separator: ", ")
                            + " removed from \(session.masksFolderName)"]
            // (And the masks no region names that were left, each with why.)
            let what = (parts.compactMap { $0 } + session.keptMasks).joined(separator: ", ")
            status("saved \(sceneName): \(what)", false)
            printError("studio: saved \(scenePath) (\(what))")
            return true
        } catch let e as LiveSession.SaveError where e.fileGone {
            offerUnsaved = true
            let text = "\(e) — Ctrl+S again writes them to \(ScenePaths.shown(ScenePaths.name(session.unsavedPath)))"
            status(text, true)
            printError("wobble-run: \(text)")
            return false
        } catch {
            status("\(error)", true)
            printError("wobble-run: \(error)")
            return false
        }
    }

    /// The last `save` found the scene file gone and offered to keep the
    /// edits in `<scene>.unsaved.lua`: the next `Ctrl+S` does.
    package private(set) var offerUnsaved = false

    /// Writes the pending edits into `<scene>.unsaved.lua` beside the
    /// scene (its file is gone) and says where; the path, nil on failure.
    package func keepUnsaved(sceneName: String) -> String? {
        do {
            let path = try session.writeUnsaved()
            keptUnsaved = true
            let shown = ScenePaths.shown(path)
            status("\(ScenePaths.shown(sceneName)) is gone: the unsaved edits are in \(shown)", false)
            printError("studio: \(ScenePaths.shown(scenePath)) is gone: the unsaved edits are in \(shown)")
            return path
        } catch {
            status("\(error)", true)
            printError("wobble-run: \(error)")
            return nil
        }
    }

    /// The edits were written to `<scene>.unsaved.lua` (the scene file gone).
    package private(set) var keptUnsaved = false

    /// The sketches with unsaved edits, by name (for the quit question).
    package var editedNames: [String] {
        var out: [String] = []
        for (n, s) in session.edits.calls.sorted(by: { $0.key < $1.key }) {
            out.append(s.name ?? session.baseState(n)?.name ?? "the sketch of line \(session.sketchCalls[n].line.map(String.init) ?? "?")")
        }
        for (i, a) in session.edits.added.enumerated() { out.append(a.name ?? "added region \(i + 1)") }
        for n in session.edits.deleted.sorted() { out.append("\(deletedName(n)) deleted") }
        for d in session.detached { out.append((d.state.name ?? d.label) + (d.deletion ? " deleted" : "")) }
        // The scene's own edits (L, B, ticks deleted or moved) count too.
        let e = session.edits
        if let loop = e.loop { out.append(loop ? "loop() on" : "loop() off") }
        if e.baked != nil { out.append("the baked events") }
        if !e.removedKicks.isEmpty {
            out.append(e.removedKicks.count == 1 ? "a deleted kick" : "\(e.removedKicks.count) deleted kicks")
        }
        return out
    }
}
