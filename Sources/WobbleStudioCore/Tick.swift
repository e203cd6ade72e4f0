import WobbleCore
import WobbleEngine
import WobbleScript

/// A tick on the timeline: a kick the script gave or one performed, with
/// what hovering it says (`impulse at 0.300 s, scene.lua line 5`).
package struct Tick: Equatable, Codable {
    package var time: Double
    package var label: String
    package var performed: Bool
    /// What selecting the tick selects (nil: it cannot be selected).
    package var ref: TickRef? = nil
    /// Selected (drawn white and taller).
    package var selected = false
    /// A beat or onset of the soundtrack (nil: a kick).
    package var sound: SoundMark? = nil

    package init(time: Double, label: String, performed: Bool, ref: TickRef? = nil, selected: Bool = false, sound: SoundMark? = nil) {
        self.time = time
        self.label = label
        self.performed = performed
        self.ref = ref
        self.selected = selected
        self.sound = sound
    }

    /// What a soundtrack's tick marks.
    package enum SoundMark: Codable { case beat, onset }

    /// Every tick: the script's kicks with their lines, the pokes and
    /// shakes performed in the preview, and those of the take being recorded.
    package static func all(script: [ScriptKick], performed: [PerformedEvent], take: Take?, scriptedDuration scripted: Double,
                    sceneName: String, baked: [PerformedEvent] = [], deletable: (Int) -> Bool = { _ in false },
                    selected: TickRef? = nil, sound: SceneSound? = nil, clipLength: Double = 0) -> [Tick] {
        func what(_ a: PerformedEvent.Action) -> String {
            if case .touch = a { return "touch" } else { return "shake" }
        }
        let own = script.map { k in
            let ref = k.file == nil ? k.line.flatMap { deletable($0) ? TickRef.script(line: $0) : nil } : nil
            return Tick(time: k.time, label: "\(k.kind) at \(fmt3(k.time)) s, \(k.file ?? sceneName)\(k.line.map { " line \($0)" } ?? "")"
                            + (ref != nil ? " (click selects, Delete deletes)" : ""),
                        performed: false, ref: ref, selected: ref != nil && ref == selected)
        }
        let bakedTicks = baked.enumerated().map { i, e in
            Tick(time: e.time, label: "\(what(e.action)) baked at \(fmt3(e.time)) s (click selects, drag moves, Delete deletes)",
                 performed: false, ref: .baked(index: i), selected: selected == .baked(index: i))
        }
        let poked = performed.map { e in
            let t = e.anchor == .start ? e.time : scripted + e.time
            return Tick(time: t, label: "\(what(e.action)) performed at \(fmt3(t)) s (not in the scene: with nothing selected Backspace forgets the pokes; R records a take)",
                        performed: true)
        }
        let recorded = take?.events.map { e in
            Tick(time: scripted + Double(e.milliseconds) / 1000,
                 label: "\(what(e.action)) of the take at +\(fmt3(Double(e.milliseconds) / 1000)) s", performed: true)
        } ?? []
        return own + bakedTicks + poked + recorded + soundTicks(sound, clipLength: clipLength)
    }

    /// The soundtrack's beats and onsets within the clip (after the kicks:
    /// a kick at the same place is the one hovered and clicked).
    package static func soundTicks(_ sound: SceneSound?, clipLength: Double) -> [Tick] {
        guard let sound else { return [] }
        let name = "the soundtrack '\(sound.track.shown)'"
        let beats = sound.beats.enumerated().filter { $0.element < clipLength }.map { i, t in
            Tick(time: t, label: "beat \(i + 1) at \(fmt3(t)) s of \(name)", performed: false, sound: .beat)
        }
        let onsets = sound.onsets.filter { $0 < clipLength }.map { t in
            Tick(time: t, label: "onset at \(fmt3(t)) s of \(name)", performed: false, sound: .onset)
        }
        return beats + onsets
    }
}

/// A tick that can be selected: a scripted kick by its line in the scene
/// (deleted with the whole statement), or an event of the scene's baked
/// `perform{...}` list by its index (deleted or moved in time).
package enum TickRef: Equatable, Codable {
    case script(line: Int)
    case baked(index: Int)
}
