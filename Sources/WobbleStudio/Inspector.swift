import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// The inspector: which region is selected, its rows (name, motion,
/// duration, strength, decay or damping, threshold, pin), changed by mouse
/// (sliders scrubbed, choices clicked) and keys (Up/Down a row, -/+ a
/// step, Enter renames), every change through the `SketchEditor` (one
/// undo step per gesture; the scene runs again with it). Computed sketches
/// are shown read-only with their line.
final class Inspector {
    private let session: LiveSession
    private let editor: SketchEditor
    /// The selected sketch.
    private(set) var selected: SketchOrigin.Kind?
    /// The focused row (an index into the rows).
    private(set) var focused = 0
    /// The name being typed, nil when not renaming.
    private(set) var typing: String?
    /// The number row a slider drag moves.
    private var scrubbing: String?

    init(session: LiveSession, editor: SketchEditor) {
        self.session = session
        self.editor = editor
        // The selection follows its call when another program's save moves
        // it, and goes when the call is gone (never onto the call that has
        // its number now).
        editor.callsMoved = { [unowned self] moved in
            guard case .call(let n) = selected else { return }
            if let m = moved.ordinals[n] { selected = .call(m) } else { select(nil) }
        }
    }

    var isRenaming: Bool { typing != nil }
    var isScrubbing: Bool { scrubbing != nil }

    /// Selects a sketch (nil: none); says so unless `quiet`.
    func select(_ kind: SketchOrigin.Kind?, quiet: Bool = false) {
        if kind != selected { typing = nil }
        selected = kind
        guard let kind, !quiet else { return }
        // An added region is described by its name: said once.
        let what = editor.describe(kind)
        let named = session.currentState(kind)?.name.map { $0 == what ? what : "\($0), \(what)" } ?? what
        editor.status("selected \(named)\(readOnly(kind).map { " (\($0.replacingOccurrences(of: "\n", with: " ")))" } ?? "")", false)
    }

    /// The regions that can be selected at frame `k`, in drawing order (each once).
    private func selectable(frame k: Int) -> [(kind: SketchOrigin.Kind, shape: RegionShape)] {
        var seen = Set<SketchOrigin.Kind>()
        var out: [(SketchOrigin.Kind, RegionShape)] = []
        for h in session.handleShapes(atFrame: k) {
            guard let kind = h.origin?.kind, seen.insert(kind).inserted else { continue }
            out.append((kind, h.shape))
        }
        return out
    }

    /// Selects the region under window pixel `(x, y)` at frame `k`: a
    /// handle's, else the smallest region containing the point; nothing
    /// there deselects (the message to show then).
    func selectRegion(at x: Int, _ y: Int, frame k: Int, layout: Layout) -> String? {
        if let hit = editor.handleHit(x, y, frame: k, layout: layout), let kind = hit.origin?.kind {
            select(kind)
            return nil
        }
        let p = layout.imagePointUnclamped(x, y)
        let inside = selectable(frame: k).filter { $0.shape.contains(p) }
        if let kind = inside.min(by: { Inspector.area($0.shape.bbox) < Inspector.area($1.shape.bbox) })?.kind {
            select(kind)
            return nil
        }
        select(nil)
        return "no region at (\(fmt1(p.x)), \(fmt1(p.y)))"
    }

    /// Tab: the next (or previous) region at frame `k` (a message when there is none).
    func selectNext(_ d: Int, frame k: Int) -> String? {
        let all = selectable(frame: k).map(\.kind)
        guard !all.isEmpty else { return "no region to select" }
        let i = selected.flatMap { all.firstIndex(of: $0) }.map { $0 + d } ?? (d > 0 ? 0 : all.count - 1)
        select(all[(i % all.count + all.count) % all.count])
        return nil
    }

    /// The selected sketch's state now; deselects one that is gone.
    private var state: SketchState? {
        guard let k = selected else { return nil }
        guard let s = session.currentState(k) else { selected = nil; typing = nil; return nil }
        return s
    }

    /// Why the sketch cannot be changed here, nil when it can.
    func readOnly(_ kind: SketchOrigin.Kind) -> String? {
        guard case .call(let n) = kind else { return nil }
        guard editor.isEditable(SketchOrigin(kind)) else {
            let line = session.sketchCalls.indices.contains(n) ? session.sketchCalls[n].line : nil
            return "computed: read-only;\nedit " + (line.map { "line \($0) of" } ?? "it in") + " the script"
        }
        return nil
    }

    private func originText(_ kind: SketchOrigin.Kind) -> String {
        let scene = ScenePaths.shown(ScenePaths.name(session.options.scenePath))
        switch kind {
        case .call(let n):
            let line = session.sketchCalls.indices.contains(n) ? session.sketchCalls[n].line : nil
            return line.map { "line \($0) of \(scene)" } ?? "made by the script"
        case .added: return "added: Ctrl+S writes it"
        }
    }

    /// The column as it is now.
    func panel(width: Int, height: Int) -> InspectorPanel {
        let s = state
        let rows = s.map { InspectorRow.rows($0.parameters.motion) } ?? []
        focused = min(focused, max(0, rows.count - 1))
        return InspectorPanel(width: width, height: height, parameters: s?.parameters, name: s?.name, origin: selected.map(originText) ?? "",
                              readOnly: selected.flatMap(readOnly), focused: focused, typing: typing)
    }

    // MARK: Changing

    /// Changes the selected sketch with `f` (one undo step unless a scrub
    /// is under way); says why not when it cannot be changed.
    private func modify(_ f: (inout SketchState) -> String?) {
        guard let k = selected, var s = state else { return }
        if let why = readOnly(k) {
            editor.status("this sketch is \(why.replacingOccurrences(of: "\n", with: " "))", true)
            return
        }
        if let problem = f(&s) { editor.status(problem, true); return }
        if scrubbing != nil { editor.change(k, to: s) } else { editor.apply(k, s) }
    }

    /// Sets a number parameter (clamped to what `addSketch` accepts, to the
    /// step's precision).
    private func set(_ key: String, _ v: Double) {
        guard let spec = InspectorRow.spec(key) else { return }
        let q = (min(max(v, spec.valid.lowerBound), spec.valid.upperBound) / spec.step).rounded() * spec.step
        let value = max(spec.valid.lowerBound, min(spec.valid.upperBound, (q * 1e6).rounded() / 1e6))
        modify { s in
            spec.set(&s.parameters, value)
            return s.parameters.validationError()
        }
    }

    private func setMotion(_ m: MotionKind) {
        modify { s in
            // A threshold left at the old model's default follows the model
            // (as assigning `motion` in a script does).
            if s.parameters.threshold == WobbleParameters.defaultThreshold(s.parameters.motion) {
                s.parameters.threshold = WobbleParameters.defaultThreshold(m)
            }
            s.parameters.motion = m
            return nil
        }
    }

    private func setPin(_ pin: PinSide?) {
        modify { s in
            if let pin, let problem = s.points.shape.pinProblem(pin) { return problem }
            s.parameters.pin = pin
            return nil
        }
    }

    /// Steps the focused row: numbers by `steps` steps, choices to the next
    /// (or previous) one.
    func step(_ steps: Int) {
        guard let s = state else { return }
        let rows = InspectorRow.rows(s.parameters.motion)
        guard rows.indices.contains(focused) else { return }
        switch rows[focused] {
        case .name:
            startRenaming()
        case .motion:
            // A choice moves one place whatever the step (Shift included).
            let all = MotionKind.allCases
            let i = all.firstIndex(of: s.parameters.motion) ?? 0
            setMotion(all[((i + steps.signum()) % all.count + all.count) % all.count])
        case .pin:
            let all = InspectorRow.pinChoices
            let i = all.firstIndex(of: s.parameters.pin) ?? 0
            setPin(all[((i + steps.signum()) % all.count + all.count) % all.count])
        case .number(let key):
            guard let spec = InspectorRow.spec(key) else { return }
            set(key, spec.get(s.parameters) + Double(steps) * spec.step)
        }
    }

    /// Moves the focus up or down a row.
    func focus(by d: Int) {
        guard let s = state else { return }
        let n = InspectorRow.rows(s.parameters.motion).count
        focused = min(max(focused + d, 0), n - 1)
    }

    // MARK: Renaming

    func startRenaming() {
        guard let k = selected, let s = state else { return }
        if let why = readOnly(k) { editor.status("this sketch is \(why.replacingOccurrences(of: "\n", with: " "))", true); return }
        typing = s.name ?? ""
        focused = 0
        editor.status("type the name; Enter keeps it, Esc leaves it", false)
    }

    /// Typed text while renaming: name characters (letters, digits, `_`);
    /// any other is refused with the reason.
    func type(_ text: String) {
        guard var t = typing else { return }
        var refused: [String] = []
        for ch in text.unicodeScalars {
            guard ch.isASCII && (ch.properties.isAlphabetic || ch == "_" || (ch.value >= 48 && ch.value <= 57)) else {
                refused.append(ch == " " ? "a space" : ch.value < 32 || ch.value == 127 ? "a control character" : "'\(ch)'")
                continue
            }
            if t.count < 60 { t.unicodeScalars.append(ch) }
        }
        typing = t
        if let first = refused.first {
            editor.status("\(first) cannot be in a name: a name is a Lua name (letters, digits and _, not starting with a digit)", true)
        }
    }

    func backspace() {
        guard var t = typing, !t.isEmpty else { return }
        t.removeLast()
        typing = t
    }

    func cancelRenaming() {
        typing = nil
        editor.status("name left as it was", false)
    }

    /// Enter: the name typed becomes the sketch's (checked first).
    func commitRenaming() {
        guard let name = typing, let k = selected else { return }
        if name == state?.name { typing = nil; return }
        if let problem = editor.renameProblem(k, to: name) {
            editor.status("not renamed: \(problem)", true)
            return
        }
        typing = nil
        modify { s in
            s.name = name
            return nil
        }
        editor.status("renamed to \(name); Ctrl+S saves", false)
    }

    // MARK: Mouse

    /// A press at panel pixel `(x, y)`: a slider grabbed, a choice made, the name row clicked.
    func press(_ x: Int, _ y: Int, panel: InspectorPanel) {
        guard let hit = panel.rows().enumerated().first(where: { y >= $0.element.y && y < $0.element.y + $0.element.h }) else { return }
        focused = hit.offset
        switch hit.element.row {
        case .name:
            startRenaming()
        case .motion, .pin:
            guard let ch = panel.choices(hit.element.row).first(where: { x >= $0.x && x < $0.x + $0.w }) else { return }
            if hit.element.row == .motion {
                if let m = MotionKind(rawValue: ch.label) { setMotion(m) }
            } else {
                setPin(PinSide(rawValue: ch.label))
            }
        case .number(let key):
            guard let k = selected else { return }
            if let why = readOnly(k) { editor.status("this sketch is \(why.replacingOccurrences(of: "\n", with: " "))", true); return }
            scrubbing = key
            editor.beginChange()
            drag(x, panel: panel)
        }
    }

    /// The slider under way follows panel x `x`.
    func drag(_ x: Int, panel: InspectorPanel) {
        guard let key = scrubbing, let spec = InspectorRow.spec(key) else { return }
        let (sx, sw) = panel.sliderX
        let f = min(max(Double(x - sx) / Double(max(1, sw - 1)), 0), 1)
        set(key, spec.value(atFraction: f))
    }

    func release() {
        guard scrubbing != nil else { return }
        scrubbing = nil
        editor.endChange()
    }
}

extension Inspector {
    static func area(_ r: Rect) -> Double { (r.maxX - r.minX) * (r.maxY - r.minY) }

    /// The keys the inspector takes: every key while renaming (Enter keeps
    /// the name, Esc leaves it, Backspace deletes), Tab, Up/Down with a
    /// region selected, -/+ and Enter. True when it took the key; a message
    /// for the status line goes to `say`.
    func handleKey(_ key: StudioKey, shift: Bool, frame k: Int, say: (String) -> Void) -> Bool {
        if isRenaming {
            switch key {
            case .enter: commitRenaming()
            case .escape: cancelRenaming()
            case .backspace: backspace()
            default: break
            }
            return true
        }
        switch key {
        case .tab: if let m = selectNext(shift ? -1 : 1, frame: k) { say(m) }
        case .up where selected != nil && !shift: focus(by: -1)
        case .down where selected != nil && !shift: focus(by: 1)
        // (`+` is Shift+`=` on many keyboards: Shift makes no difference.)
        case .minus: step(-1)
        case .plus: step(1)
        case .pageDown: step(-10)
        case .pageUp: step(10)
        case .enter: startRenaming()
        default: return false
        }
        return true
    }

    /// A press at window pixel `(x, y)`: in the column, a row's control;
    /// true when it was in the column.
    func mouseDown(_ x: Int, _ y: Int, layout: Layout) -> Bool {
        guard layout.panelContains(x, y) else { return false }
        let r = layout.panelRect
        press(x - r.x, y - r.y, panel: panel(width: r.w, height: r.h))
        return true
    }

    /// The mouse moved to window x `x`: a slider being dragged follows; true when one is.
    func mouseMoved(_ x: Int, layout: Layout) -> Bool {
        guard isScrubbing else { return false }
        let r = layout.panelRect
        drag(x - r.x, panel: panel(width: r.w, height: r.h))
        return true
    }

    /// The button was released: a slider drag ends (one undo step); true when one did.
    func mouseUp() -> Bool {
        guard isScrubbing else { return false }
        release()
        return true
    }
}
