import WobbleCore
import WobbleEngine
import WobbleScript

/// The timeline as an editor: `B` bakes the last take's pokes and shakes
/// into the scene's `perform{...}` list at their times in the clip; a tick
/// is selected by a click (a scripted `touch`/`impulse`/`shake` alone on
/// its line, or a baked event), deleted with `Delete`, and a baked one
/// dragged along the timeline to another time. Each change is one undo
/// step of the sketch editor's history and is written by `Ctrl+S`.
package final class TimelineEditor {
    private let session: LiveSession
    private let editor: SketchEditor
    /// The tick selected (nil: none).
    package private(set) var selected: TickRef?
    /// A baked event being dragged: its index, whether its undo step is
    /// recorded, and the timeline's length when the drag began.
    private var dragging: (index: Int, recorded: Bool, length: Double)?

    package init(session: LiveSession, editor: SketchEditor) {
        self.session = session
        self.editor = editor
    }

    package var isDragging: Bool { dragging != nil }

    /// The timeline's length held while a tick is dragged: moving the last
    /// baked event changes the clip's length at every step, and a timeline
    /// rescaled under the mouse would move the tick away from it. The
    /// length follows the clip again on release.
    package var heldLength: Double? { dragging?.length }

    /// Whether the scripted kick on `line` of the scene may be deleted.
    package func isDeletable(line: Int) -> Bool {
        session.sceneText.map { TimelineSource.isKickStatement($0, line: line) } ?? false
    }

    /// `B`: the last take's events, at their offsets into the take as times
    /// in the clip (folded into the loop's period for a looping scene),
    /// join the baked list; the take's events stop playing after the clip.
    /// False (with the reason) when there is no take.
    @discardableResult
    package func bake(take: Take?, loopPeriod: Double?) -> Bool {
        guard let take, !take.events.isEmpty else {
            editor.status("nothing to bake: record a take first (R, poke and shake, R)", false)
            return false
        }
        let added = take.events.map { e -> PerformedEvent in
            var t = Double(e.milliseconds) / 1000
            if let p = loopPeriod, p > 0 { t = (t.truncatingRemainder(dividingBy: p) * 1000).rounded() / 1000 }
            return PerformedEvent(time: t, action: e.action)
        }
        let list = (session.baked + added).enumerated().sorted { l, r in
            l.element.time != r.element.time ? l.element.time < r.element.time : l.offset < r.offset
        }.map(\.element)
        editor.change { $0.baked = list }
        // The take's own events (after the clip) are in the scene now.
        session.setPerformed(session.performed.filter { $0.anchor != .end })
        selected = nil
        let times = added.map(\.time)
        editor.status("baked \(added.count) poke\(added.count == 1 ? "" : "s") and shake\(added.count == 1 ? "" : "s") into the clip at "
                      + "\(fmt3(times.min() ?? 0))–\(fmt3(times.max() ?? 0)) s (Ctrl+S writes them into the scene)", false)
        return true
    }

    /// A press on the timeline at `tick` (nil: none near): selects it; a
    /// baked one starts a drag on a timeline `length` seconds long. True
    /// when it took the press (no scrub).
    package func press(_ tick: Tick?, length: Double) -> Bool {
        guard let ref = tick?.ref else {
            selected = nil
            return false
        }
        selected = ref
        if case .baked(let i) = ref { dragging = (i, false, length) }
        editor.status("selected " + (tick?.label ?? ""), false)
        return true
    }

    /// The drag moved to clip time `t`, snapped to the nearest frame's time
    /// at `fps` (at or after 0; within the loop's period).
    package func drag(to t: Double, fps: Double, loopPeriod: Double?) {
        guard var d = dragging, session.baked.indices.contains(d.index) else { return }
        let snapped = fps > 0 ? (t * fps).rounded() / fps : t
        var time = max(0, (snapped * 1000).rounded() / 1000)
        if let p = loopPeriod, p > 0 { time = min(time, p - 0.001) }
        guard time != session.baked[d.index].time else { return }
        editor.change(record: !d.recorded) { e in
            var list = e.baked ?? session.sceneBaked
            list[d.index].time = time
            e.baked = list
        }
        d.recorded = true
        dragging = d
        editor.status("moved to \(fmt3(time)) s (Ctrl+S writes it)", false)
    }

    package func endDrag() { dragging = nil }

    /// `Delete`: deletes the selected tick; false when none is selected.
    package func deleteSelected() -> Bool {
        guard let ref = selected else { return false }
        selected = nil
        switch ref {
        case .script(let line):
            guard isDeletable(line: line) else {
                editor.status("line \(line) is not a touch, impulse or shake alone on its line: delete it in a text editor", true)
                return true
            }
            editor.change { $0.removedKicks.insert(line) }
            editor.status("deleted the kick of line \(line) (Ctrl+S takes it out of the scene; Ctrl+Z brings it back)", false)
        case .baked(let i):
            guard session.baked.indices.contains(i) else { return true }
            editor.change { e in
                var list = e.baked ?? session.sceneBaked
                list.remove(at: i)
                e.baked = list
            }
            editor.status("deleted the baked event (Ctrl+S writes the list; Ctrl+Z brings it back)", false)
        }
        return true
    }
}
