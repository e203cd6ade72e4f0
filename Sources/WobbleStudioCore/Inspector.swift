import WobbleCore
import WobbleEngine
import WobbleScript
import WobbleSystem

/// The inspector: which region is selected, its rows (name, motion, the
/// model's parameters as its table declares them, pin), changed by mouse
/// (sliders scrubbed, choices clicked) and keys (Up/Down a row, -/+ a
/// step, Enter renames), every change through the `SketchEditor` (one
/// undo step per gesture; the scene runs again with it). Computed sketches
/// are shown read-only with their line.
package final class Inspector {
    private let session: LiveSession
    private let editor: SketchEditor
    /// The selected sketch.
    package private(set) var selected: SketchOrigin.Kind?
    /// The focused row (an index into the rows).
    package private(set) var focused = 0
    /// The name being typed, nil when not renaming.
    package private(set) var typing: String?
    /// The whole name being typed is selected (as a rename field opens in
    /// every app: typing replaces it, Backspace clears it, an arrow keeps
    /// it and moves the caret).
    package private(set) var typingSelected = false
    /// Where typing inserts: a character index into `typing`.
    package private(set) var caret = 0
    /// The number row a slider drag moves.
    private var scrubbing: String?
    /// The models the motion row offers (the scene's).
    package var motions: MotionCatalog { session.options.motions }

    package init(session: LiveSession, editor: SketchEditor) {
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

    package var isRenaming: Bool { typing != nil }
    package var isScrubbing: Bool { scrubbing != nil }

    /// Selects a sketch (nil: none); says so unless `quiet`.
    package func select(_ kind: SketchOrigin.Kind?, quiet: Bool = false) {
        // A name being typed is left (it was for the other region); the
        // focused row stays, so Tab, +, Tab, + changes one parameter of
        // region after region.
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

    /// Selects the region at image point `p` at frame `k`: a handle's
    /// within `radius` image pixels, else the smallest region containing
    /// the point; nothing there deselects (the message to show then).
    package func selectRegion(at p: Point, radius: Double, frame k: Int) -> String? {
        if let hit = editor.handleHit(at: p, radius: radius, frame: k), let kind = hit.origin?.kind {
            select(kind)
            return nil
        }
        let inside = selectable(frame: k).filter { $0.shape.contains(p) }
        if let kind = inside.min(by: { Inspector.area($0.shape.bbox) < Inspector.area($1.shape.bbox) })?.kind {
            select(kind)
            return nil
        }
        select(nil)
        return "no region at (\(fmt1(p.x)), \(fmt1(p.y)))"
    }

    /// Tab: the next (or previous) region at frame `k` (a message when there is none).
    package func selectNext(_ d: Int, frame k: Int) -> String? {
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
    package func readOnly(_ kind: SketchOrigin.Kind) -> String? {
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

    /// What the column shows now: the selected sketch's parameters and
    /// name, where it is made, why it is read-only, the focused row, the
    /// name being typed.
    package func shown() -> (parameters: WobbleParameters?, name: String?, origin: String, readOnly: String?, focused: Int, typing: String?) {
        let s = state
        let rows = s.map { InspectorRow.rows($0.parameters.motion) } ?? []
        focused = min(focused, max(0, rows.count - 1))
        return (s?.parameters, s?.name, selected.map(originText) ?? "", selected.flatMap(readOnly), focused, typing)
    }

    /// The inspector's rows as values (a snapshot's): nil when nothing is selected.
    package func values() -> InspectorValues? {
        let v = shown()
        guard let kind = selected, let p = v.parameters else { return nil }
        let rows = InspectorRow.rows(p.motion).map { r -> InspectorValues.Row in
            switch r {
            case .name: return .init(key: "name", text: v.name ?? "")
            case .motion: return .init(key: "motion", text: p.motion.rawValue, choices: motions.models.map(\.name))
            case .pin: return .init(key: "pin", text: p.pin?.rawValue ?? "none", choices: InspectorRow.pinChoices.map { $0?.rawValue ?? "none" })
            case .number(let key):
                let value = InspectorRow.spec(key, of: p.motion)?.get(p)
                return .init(key: key, text: value.map(fmt) ?? "", value: value)
            }
        }
        return InspectorValues(selected: kind, name: v.name, origin: v.origin, readOnly: v.readOnly, focused: v.focused, typing: v.typing,
                               typingSelected: v.typing != nil && typingSelected, caret: caret, rows: rows)
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
        guard let spec = InspectorRow.spec(key, of: state?.parameters.motion) else { return }
        let q = (min(max(v, spec.valid.lowerBound), spec.valid.upperBound) / spec.step).rounded() * spec.step
        let value = max(spec.valid.lowerBound, min(spec.valid.upperBound, (q * 1e6).rounded() / 1e6))
        modify { s in
            spec.set(&s.parameters, value)
            return motions.validationError(s.parameters)
        }
    }

    /// Sets a number parameter by its key (`strength`, ...); false when
    /// there is no such row.
    @discardableResult
    package func set(parameter key: String, to v: Double) -> Bool {
        guard InspectorRow.spec(key, of: state?.parameters.motion) != nil else { return false }
        set(key, v)
        return true
    }

    package func setMotion(_ m: MotionKind) {
        modify { s in
            // A parameter left at the old model's default follows the model
            // (as assigning `motion` in a script does).
            s.parameters = s.parameters.switching(to: m)
            return nil
        }
    }

    package func setPin(_ pin: PinSide?) {
        modify { s in
            if let pin, let problem = s.points.shape.pinProblem(pin) { return problem }
            s.parameters.pin = pin
            return nil
        }
    }

    /// Steps the focused row: numbers by `steps` steps, choices to the next
    /// (or previous) one.
    package func step(_ steps: Int) {
        guard let s = state else { return }
        let rows = InspectorRow.rows(s.parameters.motion)
        guard rows.indices.contains(focused) else { return }
        switch rows[focused] {
        case .name:
            startRenaming()
        case .motion:
            // A choice moves one place whatever the step (Shift included).
            let all = motions.models.map(\.kind)
            let i = all.firstIndex(of: s.parameters.motion) ?? 0
            setMotion(all[((i + steps.signum()) % all.count + all.count) % all.count])
        case .pin:
            let all = InspectorRow.pinChoices
            let i = all.firstIndex(of: s.parameters.pin) ?? 0
            setPin(all[((i + steps.signum()) % all.count + all.count) % all.count])
        case .number(let key):
            guard let spec = InspectorRow.spec(key, of: s.parameters.motion) else { return }
            set(key, spec.get(s.parameters) + Double(steps) * spec.step)
        }
    }

    /// Moves the focus up or down a row.
    package func focus(by d: Int) {
        guard let s = state else { return }
        let n = InspectorRow.rows(s.parameters.motion).count
        focused = min(max(focused + d, 0), n - 1)
    }

    // MARK: Renaming

    package func startRenaming() {
        guard let k = selected, let s = state else { return }
        if let why = readOnly(k) { editor.status("this sketch is \(why.replacingOccurrences(of: "\n", with: " "))", true); return }
        typing = s.name ?? ""
        typingSelected = !(s.name ?? "").isEmpty
        caret = typing?.unicodeScalars.count ?? 0
        focused = 0
        editor.status("type the name; Enter keeps it, Esc leaves it", false)
    }

    /// Typed text while renaming: name characters (letters, digits, `_`),
    /// at the caret, in place of the name while it is selected; any other
    /// is refused with the reason.
    package func type(_ text: String) {
        guard var t = typing else { return }
        var refused: [String] = []
        for ch in text.unicodeScalars {
            guard ch.isASCII && (ch.properties.isAlphabetic || ch == "_" || (ch.value >= 48 && ch.value <= 57)) else {
                refused.append(ch == " " ? "a space" : ch.value < 32 || ch.value == 127 ? "a control character" : "'\(ch)'")
                continue
            }
            if typingSelected { t = ""; caret = 0; typingSelected = false }
            guard t.unicodeScalars.count < 60 else { continue }
            var scalars = Array(t.unicodeScalars)
            scalars.insert(ch, at: min(caret, scalars.count))
            t = String(String.UnicodeScalarView(scalars))
            caret += 1
        }
        typing = t
        if let first = refused.first {
            editor.status("\(first) cannot be in a name: a name is a Lua name (letters, digits and _, not starting with a digit)", true)
        }
    }

    /// The name given at once, kept when it may be (a typed name's
    /// checks); a name refused leaves the old one, not renaming.
    package func rename(to name: String) {
        startRenaming()
        guard typing != nil else { return }
        type(name)   // replaces the old name, which starts selected
        commitRenaming()
        typing = nil
    }

    /// Backspace: the selected name, else the character before the caret.
    package func backspace() {
        guard let t = typing else { return }
        if typingSelected {
            typing = ""
            caret = 0
            typingSelected = false
            return
        }
        var scalars = Array(t.unicodeScalars)
        guard caret > 0, caret <= scalars.count else { return }
        scalars.remove(at: caret - 1)
        caret -= 1
        typing = String(String.UnicodeScalarView(scalars))
    }

    /// An arrow while renaming: the selection goes (Left to the start of
    /// the name, Right to its end, as in a text field), else the caret
    /// moves a character.
    package func moveCaret(by d: Int) {
        guard let t = typing else { return }
        let n = t.unicodeScalars.count
        if typingSelected {
            typingSelected = false
            caret = d < 0 ? 0 : n
        } else {
            caret = min(max(caret + d.signum(), 0), n)
        }
    }

    package func cancelRenaming() {
        typing = nil
        editor.status("name left as it was", false)
    }

    /// Enter: the name typed becomes the sketch's (checked first).
    package func commitRenaming() {
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

    /// A press on row `i` of the column: `choice` the label of the choice
    /// under it (a choice row), `fraction` where on the slider (a number
    /// row, 0 to 1): a slider grabbed, a choice made, the name row clicked.
    package func press(row i: Int, choice: String?, fraction: Double) {
        guard let s = state else { return }
        let rows = InspectorRow.rows(s.parameters.motion)
        guard rows.indices.contains(i) else { return }
        focused = i
        switch rows[i] {
        case .name:
            startRenaming()
        case .motion, .pin:
            guard let ch = choice else { return }
            if rows[i] == .motion {
                if let m = motions.kind(named: ch) { setMotion(m) }
            } else {
                setPin(PinSide(rawValue: ch))
            }
        case .number(let key):
            guard let k = selected else { return }
            if let why = readOnly(k) { editor.status("this sketch is \(why.replacingOccurrences(of: "\n", with: " "))", true); return }
            scrubbing = key
            editor.beginChange()
            slide(to: fraction)
        }
    }

    /// The slider under way goes to `fraction` (0 to 1) of its width.
    package func slide(to fraction: Double) {
        guard let key = scrubbing, let spec = InspectorRow.spec(key, of: state?.parameters.motion) else { return }
        set(key, spec.value(atFraction: min(max(fraction, 0), 1)))
    }

    package func release() {
        guard scrubbing != nil else { return }
        scrubbing = nil
        editor.endChange()
    }
}

extension Inspector {
    package static func area(_ r: Rect) -> Double { (r.maxX - r.minX) * (r.maxY - r.minY) }
}
