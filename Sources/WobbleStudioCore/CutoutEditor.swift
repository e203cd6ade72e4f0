import Foundation
import Synchronization
import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// Cutouts in the studio: `C` finds the selected region's object (GrabCut
/// from the region), `Shift`+drag marks object and `Alt`+drag background
/// (GrabCut again with every stroke so far), `Shift`+click adds a region
/// fitted around the object under the mouse. GrabCut runs on a worker
/// thread, one job at a time, while the window keeps answering; its
/// result becomes an edit of the region (`cutout` a mask in memory, one
/// undo step) that `Ctrl+S` writes as `<scene>-masks/<name>.png`, with the
/// strokes beside it (`<name>.strokes`): the strokes are the cutout's
/// state, so a stroke after a save reruns GrabCut with every stroke since
/// the first, read back from there. Moving a cut region's handles recuts
/// it (in the background, part of the drag's undo step), and a mask never
/// reaches past its region: each is cleared outside the region's curves.
/// The masks' outlines and the stroke being painted are drawn over the picture
/// by the front end (`strokeShown`, `overlayVersion`). Strokes come in
/// image pixels; what counts as a click (a press that did not move) is
/// the front end's to say: it sends the points of a stroke that moved.
package final class CutoutEditor {
    private let session: LiveSession
    private let editor: SketchEditor
    private let clock: TimeSource
    private let verbose: Bool
    /// Shows a status line (true: an error).
    package var status: (_ text: String, _ isError: Bool) -> Void = { _, _ in }
    /// Selects a region (the one a `Shift`+click added).
    package var select: (SketchOrigin.Kind) -> Void = { _ in }


    /// What a job computes on the worker.
    private enum Job: Sendable {
        /// The object of a region: its shape, the strokes, the mask it has
        /// in memory (GrabCut starts from it; `CutoutVision.refined`).
        /// `fresh`: how many of the strokes (the last) are new and may grow
        /// the region (none for a recut after the handles moved).
        case cut(shape: RegionShape, strokes: [CutoutStroke], from: GreyMask?, fresh: Int)
        /// The objects a click may mean, and a region fitted around each.
        case fit(Point)
        /// A magnetic outline through the points: its mask and region.
        case outline([Point])
    }
    private enum Done: Sendable {
        /// The mask, and the region grown where an object stroke reached
        /// past it (nil when it did not grow).
        case mask(GreyMask, SketchPoints?)
        case fitted([Fitted])
    }
    /// One object a `Shift`+click may mean and the region fitted around it.
    private struct Fitted: Sendable {
        let mask: GreyMask
        let points: SketchPoints
        /// Whether `mask` is matted (a soft edge); a click's later objects
        /// are matted when they are first shown.
        var matted = true
    }
    /// The last `Shift`+click's objects: another `Shift`+click within
    /// `cycleSlop` pixels of it, while its region still has the cutout it
    /// gave, fits the region around the next one (no GrabCut again).
    private var lastFit: (point: Point, kind: SketchOrigin.Kind, candidates: [Fitted], index: Int)?
    /// How near (image pixels) a `Shift`+click must be to the last one to
    /// cycle through its objects.
    package static let cycleSlop = 4.0
    /// A job's mailbox: the worker puts the result in, the window's thread takes it.
    private final class Mailbox: Sendable {
        package let result = Mutex<Result<Done, CutoutTools.Problem>?>(nil)
        package let group = DispatchGroup()
    }
    private struct Flight {
        package var kind: SketchOrigin.Kind?
        /// A recut after the region moved: applied without an undo step of its own.
        package var recut = false
        package var what: String
        package var strokes: [CutoutStroke]
        package var job: Job
        package var started: Double
        package var shown: Int
        package let mailbox: Mailbox
    }
    private let worker = SerialQueue(label: "wobble-run.studio.cutout")
    private var flight: Flight?
    /// Strokes that ended while a job ran: they go into the next one.
    private var waiting: (kind: SketchOrigin.Kind, strokes: [CutoutStroke], recut: Bool)?
    /// How many GrabCut jobs ran (tests count them).
    package private(set) var jobsRun = 0

    /// The stroke being painted: its region and whether
    /// it moved yet (a `Shift` press that does not is a click).
    private var stroke: (kind: SketchOrigin.Kind?, moved: Bool, stroke: CutoutStroke)?
    /// Changes whenever what `paint` draws changes.
    package private(set) var overlayVersion = 0

    package init(session: LiveSession, editor: SketchEditor, clock: TimeSource, verbose: Bool) {
        self.session = session
        self.editor = editor
        self.clock = clock
        self.verbose = verbose
    }

    package var isComputing: Bool { flight != nil }
    package var isStroking: Bool { stroke != nil }

    /// Waits up to `seconds` for the job in flight (tests on a manual clock).
    @discardableResult
    package func waitForJob(upTo seconds: Double) -> Bool {
        guard let f = flight else { return true }
        return f.mailbox.group.wait(timeout: .now() + max(0, seconds)) == .success
    }

    // MARK: The magnetic outline

    /// The points of the magnetic outline being clicked (image pixels),
    /// nil when none is: `O` begins one, each click on the picture adds a
    /// point on the object's edge, a click within `closeSlop` of the first
    /// point (or `O` again) closes it, with three points or more: the path
    /// between the points snaps to the object's edge
    /// (`CutoutVision.magneticOutline`, on the worker) and a region fitted
    /// around what it closes is added with that cutout (one undo step).
    package private(set) var outlinePoints: [Point]?
    /// How near (image pixels) a click must be to the first point to close the outline.
    package static let closeSlop = 6.0

    package var isOutlining: Bool { outlinePoints != nil }

    /// `O`: begins an outline; closes the one being clicked (with three
    /// points or more; else it is left).
    package func outlineKey() {
        guard let points = outlinePoints else {
            guard session.clip != nil else { status("cannot cut out: the scene failed", true); return }
            outlinePoints = []
            overlayVersion += 1
            status("magnetic outline: click points along the object's edge; a click on the first point or O closes it", false)
            return
        }
        if points.count >= 3 { closeOutline() } else {
            outlinePoints = nil
            overlayVersion += 1
            status("outline left (it needs three points or more)", false)
        }
    }

    /// A click on the picture at image point `p` while outlining.
    package func addOutlinePoint(_ p: Point) {
        guard var points = outlinePoints, p.isFinite else { return }
        if points.count >= 3, (p - points[0]).length <= CutoutEditor.closeSlop {
            closeOutline()
            return
        }
        points.append(p)
        outlinePoints = points
        overlayVersion += 1
        status("outline: \(points.count) point\(points.count == 1 ? "" : "s")\(points.count >= 3 ? "; a click on the first point or O closes it" : "")", false)
    }

    private func closeOutline() {
        guard let points = outlinePoints, points.count >= 3 else { return }
        guard let image = session.image, session.clip != nil else { status("cannot cut out: the scene failed", true); return }
        guard flight == nil else { busy(); return }
        outlinePoints = nil
        overlayVersion += 1
        launch(.outline(points), kind: nil, what: "the outline of \(points.count) points", strokes: [], image: image)
    }

    // MARK: Keys and strokes

    /// `C`: the cutout of `kind` (the selected region) from its region.
    package func cut(_ kind: SketchOrigin.Kind?) {
        guard let kind else {
            status("C cuts out the selected region: select one first (Ctrl+click or Tab)", true)
            return
        }
        start(kind, strokes: [])
    }

    /// A press with `Shift` (`object`) or `Alt` at image point `p`: a
    /// stroke of brush `radius` (image pixels) on `kind`'s cutout begins
    /// (with `Shift` a click instead adds a region: `endStroke`).
    package func beginStroke(at p: Point, radius: Double, object: Bool, kind: SketchOrigin.Kind?) {
        stroke = (kind, false, CutoutStroke(points: [p], radius: radius, object: object))
        overlayVersion += 1
    }

    /// The stroke moved (beyond a click's slop) to image point `p`.
    package func moveStroke(to p: Point) {
        guard var s = stroke else { return }
        s.moved = true
        s.stroke.points.append(p)
        stroke = s
        overlayVersion += 1
    }

    /// The stroke ends: it refines its region's cutout; a `Shift` press
    /// that did not move is a click that fits a new region around the
    /// object there (`Alt`: a dot of background).
    package func endStroke() {
        guard let s = stroke else { return }
        stroke = nil
        overlayVersion += 1
        if !s.moved && s.stroke.object {
            fit(at: s.stroke.points[0])
            return
        }
        guard let kind = s.kind else {
            status("\(s.stroke.object ? "Shift" : "Alt")+drag marks \(s.stroke.object ? "object" : "background") in a region's cutout: select the region first (Ctrl+click)", true)
            return
        }
        if flight != nil {
            // Into the next job (after the one running, which lacks it).
            if let w = waiting, w.kind == kind { waiting?.strokes.append(s.stroke); waiting?.recut = false } else { waiting = (kind, [s.stroke], false) }
            status("the stroke is marked; GrabCut runs with it when the cutout under way ends", false)
            return
        }
        start(kind, strokes: [s.stroke])
    }

    /// `Shift`+click on the picture at image point `p`.
    package func fit(at p: Point) {
        guard session.clip != nil, let image = session.image else { status("cannot cut out: the scene failed", true); return }
        guard p.x >= 0, p.y >= 0, p.x < Double(image.width), p.y < Double(image.height) else {
            status("Shift+click on the picture adds a region around the object there", true)
            return
        }
        guard flight == nil else { busy(); return }
        if let last = lastFit, (p - last.point).length <= CutoutEditor.cycleSlop, var state = session.currentState(last.kind),
           case .memory(let m)? = state.parameters.cutout?.source, m.mask == last.candidates[last.index].mask {
            // The same place again: the next object there.
            let i = (last.index + 1) % last.candidates.count
            let next = matted(last.candidates[i], image: image)
            lastFit?.candidates[i] = next
            state.points = next.points
            state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: next.mask)), shape: next.points.shape, place: nil)
            editor.apply(last.kind, state)
            lastFit?.index = i
            status("\(state.name ?? editor.describe(last.kind)): \(objectOf(i, last.candidates.count)); Ctrl+Z undoes", false)
            return
        }
        launch(.fit(p), kind: nil, what: "the object at (\(fmt1(p.x)), \(fmt1(p.y)))", strokes: [], image: image)
    }

    /// `candidate` with its mask matted (as the first object of a click
    /// is: no hard edge left to show as a line where the object moves),
    /// the region fitted around the matted mask; as it is where the matte
    /// fails.
    private func matted(_ candidate: Fitted, image: RGBAImage) -> Fitted {
        guard !candidate.matted else { return candidate }
        guard let mask = try? CutoutTools.clickMatte(image: image, mask: candidate.mask),
              let region = CutoutTools.fitRegion(around: mask) else { return candidate }
        return Fitted(mask: mask, points: CutoutEditor.inside(region, width: image.width, height: image.height), matted: true)
    }

    /// The handles of `kind` were moved (a drag ended): when it has a
    /// cutout of the studio's (in memory, or a mask the studio saved in
    /// `<scene>-masks`, read back into memory then; a mask file of the
    /// user's is used as given, and `"auto"` follows its region by
    /// itself), its mask is cleared outside the region's new curves at
    /// once and GrabCut runs again from the new region with the cutout's
    /// strokes, in the background; both without an undo step of their own
    /// (undoing the drag undoes them).
    package func recut(_ kind: SketchOrigin.Kind) {
        guard var state = session.currentState(kind), let cutout = state.parameters.cutout else { return }
        switch cutout.source {
        case .memory(let m):
            let clipped = CutoutTools.clipped(m.mask, to: state.points.shape)
            if clipped != m.mask {
                state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: clipped, strokes: m.strokes)),
                                                        shape: cutout.shape, place: cutout.place)
                editor.change(kind, to: state)
            }
        case .file(let path, let written) where written.hasPrefix(session.masksFolderName + "/"):
            // A saved mask is cleared outside the new curves at once too:
            // from now on it is in memory with its strokes (a save writes
            // it back to the region's own file). One that cannot be read
            // is left to the recut.
            if let image = session.image, let strokes = strokes(of: cutout, name: state.name ?? editor.describe(kind)),
               let saved = try? CutoutTools.readMask(path, width: image.width, height: image.height) {
                let clipped = CutoutTools.clipped(saved, to: state.points.shape)
                if clipped != saved {
                    state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: clipped, strokes: strokes)),
                                                            shape: cutout.shape, place: cutout.place)
                    editor.change(kind, to: state)
                }
            }
        default:
            return
        }
        if flight != nil {
            if waiting == nil || waiting?.kind == kind {
                waiting = (kind, waiting?.strokes ?? [], waiting.map { $0.recut } ?? true)
            }
            return
        }
        start(kind, strokes: [], recut: true)
    }

    /// The strokes a cutout has: a mask in memory carries them; a mask the
    /// studio saved has them beside it (`<name>.strokes`, none when there
    /// is no such file). Nil, with the reason shown, when that file cannot
    /// be read (a save would otherwise lose them).
    private func strokes(of cutout: CutoutRequest?, name: String) -> [CutoutStroke]? {
        switch cutout?.source {
        case .memory(let m)?:
            return m.strokes
        case .file(let path, let written)?:
            let file = CutoutStrokesFile.path(besideMask: path)
            guard Posix.kind(file) != nil else { return [] }
            do {
                let bytes = try Posix.readFile(file, shown: CutoutStrokesFile.path(besideMask: written), limit: 16 << 20)
                return try CutoutStrokesFile.parse(String(decoding: bytes, as: UTF8.self))
            } catch {
                status("\(name): cannot read the cutout's strokes, \(CutoutStrokesFile.path(besideMask: written)): \(error)", true)
                return nil
            }
        default:
            return []
        }
    }

    /// Runs GrabCut for `kind` with the strokes it has (a mask of the
    /// studio's, in memory or saved) and `more`.
    private func start(_ kind: SketchOrigin.Kind, strokes more: [CutoutStroke], recut: Bool = false) {
        guard session.clip != nil, let image = session.image else { status("cannot cut out: the scene failed", true); return }
        guard flight == nil else { busy(); return }
        if case .call(let n) = kind, let problem = session.editableCall(n).problem {
            status(problem, true)
            return
        }
        guard let state = session.currentState(kind) else { return }
        guard let had = strokes(of: state.parameters.cutout, name: state.name ?? editor.describe(kind)) else { return }
        let strokes = had + more
        let shape = state.points.shape
        let regionBox = CutoutEditor.pixelBox(shape.bbox)
        let name = state.name ?? editor.describe(kind)
        guard regionBox.x0 >= 0, regionBox.y0 >= 0, regionBox.x1 <= image.width, regionBox.y1 <= image.height, !regionBox.isEmpty else {
            status("\(name): cutout: \(CutoutTools.Problem.outsideImage(box: regionBox, width: image.width, height: image.height))", true)
            return
        }
        var from: GreyMask?
        if !more.isEmpty || recut, case .memory(let m)? = state.parameters.cutout?.source { from = CutoutTools.clipped(m.mask, to: shape) }
        launch(.cut(shape: shape, strokes: strokes, from: from, fresh: recut ? 0 : more.count), kind: kind, what: name, strokes: strokes, image: image)
        flight?.recut = recut
    }

    private func busy() {
        status("a cutout is being computed (\(flight?.what ?? "")); wait for it", true)
    }

    private func launch(_ job: Job, kind: SketchOrigin.Kind?, what: String, strokes: [CutoutStroke], image: RGBAImage) {
        let mailbox = Mailbox()
        flight = Flight(kind: kind, what: what, strokes: strokes, job: job, started: clock.now(), shown: 0, mailbox: mailbox)
        jobsRun += 1
        mailbox.group.enter()
        worker.async {
            let r: Result<Done, CutoutTools.Problem>
            do {
                r = .success(try CutoutEditor.compute(job, image: image))
            } catch let e as CutoutTools.Problem {
                r = .failure(e)
            } catch {
                r = .failure(.vision("\(error)"))
            }
            mailbox.result.withLock { $0 = r }
            mailbox.group.leave()
        }
        status("cutting out \(what)… (the window keeps answering)", false)
        if verbose { printError("studio: cutting out \(what)") }
    }

    /// What a job computes (on the worker).
    private static func compute(_ job: Job, image: RGBAImage) throws -> Done {
        switch job {
        case .cut(let shape, let strokes, let from, let fresh):
            let found = try CutoutTools.refinedGrowing(image: image, region: shape, strokes: strokes, from: from, fresh: fresh)
            return .mask(found.mask, found.region.map { inside($0, width: image.width, height: image.height) })
        case .fit(let p):
            // The first candidate matted (a soft edge, as "auto"'s and
            // `wobble-run cutout --at`'s); the others when first shown
            // (a click's answer stays quick).
            let fitted = try CutoutTools.clickCandidates(image: image, at: p).enumerated().compactMap { i, found in
                let mask = i == 0 ? try CutoutTools.clickMatte(image: image, mask: found) : found
                return CutoutTools.fitRegion(around: mask).map {
                    Fitted(mask: mask, points: inside($0, width: image.width, height: image.height), matted: i == 0)
                }
            }
            guard !fitted.isEmpty else { throw CutoutTools.Problem.noObject }
            return .fitted(fitted)
        case .outline(let points):
            let mask = try CutoutTools.magneticOutline(image: image, points: points).mask
            guard let region = CutoutTools.fitRegion(around: mask) else { throw CutoutTools.Problem.noObject }
            return .fitted([Fitted(mask: mask, points: inside(region, width: image.width, height: image.height))])
        }
    }

    /// Takes a finished job's result (call it every turn of the loop): the
    /// mask becomes the region's edit; while it runs the seconds are shown.
    /// True when something changed.
    @discardableResult
    package func poll() -> Bool {
        guard var f = flight else { return false }
        guard let result = f.mailbox.result.withLock({ $0 }) else {
            let n = Int(clock.now() - f.started)
            if n > f.shown {
                f.shown = n
                flight = f
                status("cutting out \(f.what)… \(n) s (the window keeps answering)", false)
            }
            return false
        }
        flight = nil
        switch result {
        case .failure(let e):
            status("\(f.what): cutout: \(e)", true)
            printError("studio: \(f.what): cutout: \(e)")
        case .success(.mask(let mask, let grown)):
            apply(mask, to: f.kind, strokes: f.strokes, seconds: clock.now() - f.started, recut: f.recut, grown: grown)
        case .success(.fitted(let candidates)):
            switch f.job {
            case .fit(let p): add(candidates, at: p)
            case .outline: add(candidates, at: nil)
            case .cut: break
            }
        }
        if let w = waiting {
            waiting = nil
            start(w.kind, strokes: w.strokes, recut: w.recut)
        }
        overlayVersion += 1
        return true
    }

    /// The region's cutout is `mask` now: one undo step.
    /// (`recut`: no undo step of its own, the drag's undoes it.)
    private func apply(_ mask: GreyMask, to kind: SketchOrigin.Kind?, strokes: [CutoutStroke], seconds: Double, recut: Bool = false,
                       grown: SketchPoints? = nil) {
        guard let kind, var state = session.currentState(kind) else {
            status("the region is gone: its cutout is dropped", true)
            return
        }
        // An object stroke that reached past the region grew it: the
        // handles move there (the same undo step as the mask).
        if let grown { state.points = grown }
        let place = state.parameters.cutout?.place ?? placeOf(kind)
        state.parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: mask, strokes: strokes)), shape: state.points.shape, place: place)
        if recut { editor.change(kind, to: state) } else { editor.apply(kind, state) }
        let n = mask.pixels.reduce(0) { $0 + ($1 > 127 ? 1 : 0) }
        let what = state.name ?? editor.describe(kind)
        status("cut out \(what) in \(fmt1(seconds)) s: \(n) pixels of object; Shift+drag marks object, Alt+drag background; Ctrl+S saves the mask, Ctrl+Z undoes", false)
        if verbose { printError("studio: cut out \(what) (\(n) pixels, \(strokes.count) stroke\(strokes.count == 1 ? "" : "s"), \(fmt3(seconds)) s)") }
    }

    /// A region fitted around a `Shift`+click's first object, with that
    /// cutout: one undo step; the others wait for a `Shift`+click there again.
    /// (`p` nil: a magnetic outline's, no other candidates.)
    private func add(_ candidates: [Fitted], at p: Point?) {
        let first = candidates[0]
        var parameters = WobbleParameters.original
        parameters.cutout = CutoutRequest(source: .memory(MaskImage(mask: first.mask)), shape: first.points.shape, place: nil)
        let what = p == nil ? "around the outline" : "around \(objectOf(0, candidates.count))"
        guard let kind = editor.add(first.points, parameters: parameters, what: what) else { return }
        lastFit = p.map { ($0, kind, candidates, 0) }
        select(kind)
        if verbose { printError("studio: fitted \(editor.describe(kind)) around the object") }
    }

    /// `object 1 of 3 (Shift+click there again for another)`.
    private func objectOf(_ i: Int, _ n: Int) -> String {
        n == 1 ? "the object" : "object \(i + 1) of \(n) (Shift+click there again for another)"
    }

    /// `scene.lua:12` for a call (what the run's messages say), nil for an added region.
    private func placeOf(_ kind: SketchOrigin.Kind) -> String? {
        guard case .call(let n) = kind, session.sketchCalls.indices.contains(n), let line = session.sketchCalls[n].line else { return nil }
        return "\(session.options.scenePath):\(line)"
    }

    // MARK: Drawing

    /// The stroke being painted (drawn over the picture), nil when none.
    package var strokeShown: CutoutStroke? { stroke?.stroke }

    /// The pixels of `mask` above 127 with a 4-neighbour at or below it (or the image's edge).
    package static func outline(_ mask: GreyMask) -> [Int] {
        let w = mask.width, h = mask.height
        let ob = mask.objectBox
        guard !ob.isEmpty else { return [] }
        var out: [Int] = []
        mask.pixels.withUnsafeBufferPointer { p in
            func solid(_ x: Int, _ y: Int) -> Bool { x >= 0 && y >= 0 && x < w && y < h && p[y * w + x] > 127 }
            for y in ob.y0..<ob.y1 {
                for x in ob.x0..<ob.x1 where solid(x, y) {
                    if !solid(x - 1, y) || !solid(x + 1, y) || !solid(x, y - 1) || !solid(x, y + 1) { out.append(y * w + x) }
                }
            }
        }
        return out
    }

    /// The pixels a rectangle touches.
    package static func pixelBox(_ r: Rect) -> PixelRect {
        func f(_ v: Double) -> Int { Int(clamping: v, to: -(1 << 40) ... (1 << 40), rounding: .down) }
        func c(_ v: Double) -> Int { Int(clamping: v, to: -(1 << 40) ... (1 << 40), rounding: .up) }
        return PixelRect(x0: f(r.minX), y0: f(r.minY), x1: c(r.maxX), y1: c(r.maxY))
    }

    /// A fitted region kept inside the picture (a cutout may not reach
    /// outside it), its points to a tenth of a pixel (as a save writes them).
    package static func inside(_ p: SketchPoints, width: Int, height: Int) -> SketchPoints {
        func clamp(_ q: Point) -> Point {
            Point((min(max(q.x, 0), Double(width)) * 10).rounded() / 10, (min(max(q.y, 0), Double(height)) * 10).rounded() / 10)
        }
        return SketchPoints(lt: clamp(p.lt), rt: clamp(p.rt), rb: clamp(p.rb), lb: clamp(p.lb), center: p.center.map(clamp))
    }
}
