import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// Editing the sketches in the studio: a handle dragged, a sketch added,
/// the unsaved edits undone (Ctrl+Z) and saved into the scene (Ctrl+S),
/// all through the live session. It says what it did through `status`;
/// the studio runs the scene again when `editsPending` is set.
final class SketchEditor {
    private let session: LiveSession
    private let clock: StudioClock
    private let verbose: Bool
    /// Shows a status line (true: an error).
    var status: (_ text: String, _ isError: Bool) -> Void = { _, _ in }

    private struct Edits {
        var overrides: [Int: SketchPoints]
        var added: [SketchPoints]
    }
    private struct Drag {
        var origin: SketchOrigin.Kind
        var handle: Int
        var startWindow: (x: Int, y: Int)
        var start: SketchPoints
        var before: Edits
        var moved = false
    }
    private var drag: Drag?
    /// The unsaved edits before each drag or add.
    private var undo: [Edits] = []
    private var editableCache: (generation: Int, kinds: [SketchOrigin.Kind: Bool]) = (-1, [:])
    /// The edits changed since the scene last ran with them (a run is due
    /// after this input).
    var editsPending = false
    /// When the first input of edits not yet shown came.
    var editInputTime: Double?

    init(session: LiveSession, clock: StudioClock, verbose: Bool) {
        self.session = session
        self.clock = clock
        self.verbose = verbose
    }

    var isDragging: Bool { drag != nil }

    private var scenePath: String { session.options.scenePath }

    /// Whether the sketch of `origin` may be dragged (cached per run).
    func isEditable(_ origin: SketchOrigin?) -> Bool {
        guard let kind = origin?.kind else { return false }
        if editableCache.generation != session.generation { editableCache = (session.generation, [:]) }
        if let e = editableCache.kinds[kind] { return e }
        let e: Bool
        switch kind {
        case .call(let n): e = session.editableCall(n).call != nil
        case .added(let i): e = i < session.addedSketches.count
        }
        editableCache.kinds[kind] = e
        return e
    }

    /// The handle within 10 window pixels of `(x, y)` (the nearest) at
    /// frame `k`, with the sketch it belongs to: 0-3 the corners lt, rt,
    /// rb, lb, 4 the center.
    func handleHit(_ x: Int, _ y: Int, frame k: Int, layout: Layout) -> (origin: SketchOrigin?, handle: Int)? {
        var best: (origin: SketchOrigin?, handle: Int, d: Double)?
        let r = layout.imageRect, s = layout.scale
        for h in session.handleShapes(atFrame: k) {
            let points = [h.shape.lt, h.shape.rt, h.shape.rb, h.shape.lb, h.shape.center]
            for (i, p) in points.enumerated() where p.isFinite {
                let wx = p.x * s + Double(r.x) - 0.5, wy = p.y * s + Double(r.y) - 0.5
                let d = ((wx - Double(x)) * (wx - Double(x)) + (wy - Double(y)) * (wy - Double(y))).squareRoot()
                if d <= 10, d < (best?.d ?? .infinity) { best = (h.origin, i, d) }
            }
        }
        return best.map { ($0.origin, $0.handle) }
    }

    /// The points of a sketch as the edits have them now.
    private func currentPoints(_ kind: SketchOrigin.Kind) -> SketchPoints? {
        switch kind {
        case .call(let n):
            guard n >= 0, n < session.sketchCalls.count else { return nil }
            return session.sketchOverrides[n] ?? session.sketchCalls[n].points
        case .added(let i):
            return i >= 0 && i < session.addedSketches.count ? session.addedSketches[i] : nil
        }
    }

    private var edits: Edits { Edits(overrides: session.sketchOverrides, added: session.addedSketches) }

    private func fail(_ m: String) {
        status(m, true)
        printError("studio: \(m)")
    }

    func beginDrag(_ origin: SketchOrigin?, handle: Int, _ x: Int, _ y: Int) {
        guard let kind = origin?.kind else {
            fail("\(scenePath): this sketch is computed; edit the script")
            return
        }
        if case .call(let n) = kind, let problem = session.editableCall(n).problem {
            fail(problem)
            return
        }
        guard let start = currentPoints(kind) else { return }
        drag = Drag(origin: kind, handle: handle, startWindow: (x, y), start: start, before: edits)
    }

    func moveDrag(_ x: Int, _ y: Int, scale s: Double) {
        guard var d = drag, x != d.startWindow.x || y != d.startWindow.y || d.moved else { return }
        let p0 = d.start[handle: d.handle]
        let p = Point(((p0.x + Double(x - d.startWindow.x) / s) * 10).rounded() / 10,
                      ((p0.y + Double(y - d.startWindow.y) / s) * 10).rounded() / 10)
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

    func endDrag() {
        guard let d = drag else { return }
        drag = nil
        guard d.moved, let p = currentPoints(d.origin) else { return }
        undo.append(d.before)
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

    private func describe(_ kind: SketchOrigin.Kind) -> String {
        switch kind {
        case .call(let n):
            return session.sketchCalls.indices.contains(n) ? "the sketch of line \(session.sketchCalls[n].line ?? 0)" : "a sketch"
        case .added(let i): return "added sketch \(i + 1)"
        }
    }

    private func setPoints(_ kind: SketchOrigin.Kind, _ p: SketchPoints) {
        switch kind {
        case .call(let n): session.sketchOverrides[n] = p
        case .added(let i): if session.addedSketches.indices.contains(i) { session.addedSketches[i] = p }
        }
    }

    private func edited() {
        editsPending = true
        if editInputTime == nil { editInputTime = clock.now() }
    }

    /// Adds a 90x90 sketch centred at `p` (rounded to a tenth of a pixel).
    func add(at p: Point) {
        guard session.clip != nil else { status("cannot add: the scene failed", true); return }
        let c = Point((p.x * 10).rounded() / 10, (p.y * 10).rounded() / 10)
        undo.append(edits)
        session.addedSketches.append(.square(centeredAt: c))
        edited()
        status("added a 90x90 sketch at (\(SketchSource.format(c.x)), \(SketchSource.format(c.y))); Ctrl+S saves, Ctrl+Z undoes", false)
        if verbose { printError("studio: added a sketch at \(SketchSource.format(c.x)),\(SketchSource.format(c.y))") }
    }

    func undoLast() {
        drag = nil
        guard let last = undo.popLast() else { status("nothing to undo", false); return }
        session.sketchOverrides = last.overrides
        session.addedSketches = last.added
        edited()
        status(undo.isEmpty ? "undone: no unsaved edits" : "undone (\(undo.count) more)", false)
        if verbose { printError("studio: undone (\(undo.count) left)") }
    }

    /// Writes the edits into the scene file; true when it wrote them (the
    /// saved scene is then due to run).
    func save(sceneName: String) -> Bool {
        guard session.hasUnsavedEdits else { status("nothing to save", false); return false }
        drag = nil
        do {
            let r = try session.saveEdits(runAfter: false)
            undo.removeAll()
            let what = [r.edited > 0 ? "\(r.edited) sketch\(r.edited == 1 ? "" : "es") edited" : nil,
                        r.added > 0 ? "\(r.added) added" : nil].compactMap { $0 }.joined(separator: ", ")
            status("saved \(sceneName): \(what)", false)
            printError("studio: saved \(scenePath) (\(what))")
            return true
        } catch {
            status("\(error)", true)
            printError("wobble-run: \(error)")
            return false
        }
    }
}
