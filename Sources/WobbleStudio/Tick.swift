import WobbleCore
import WobbleEngine
import WobbleScript

/// A tick on the timeline: a kick the script gave or one performed, with
/// what hovering it says (`impulse at 0.300 s, scene.lua line 5`).
struct Tick: Equatable {
    var time: Double
    var label: String
    var performed: Bool

    /// Every tick: the script's kicks with their lines, the pokes and
    /// shakes performed in the preview, and those of the take being recorded.
    static func all(script: [ScriptKick], performed: [PerformedEvent], take: Take?, scriptedDuration scripted: Double,
                    sceneName: String) -> [Tick] {
        func what(_ a: PerformedEvent.Action) -> String {
            if case .touch = a { return "touch" } else { return "shake" }
        }
        let own = script.map { k in
            Tick(time: k.time, label: "\(k.kind) at \(fmt3(k.time)) s, \(k.file ?? sceneName)\(k.line.map { " line \($0)" } ?? "")", performed: false)
        }
        let poked = performed.map { e in
            let t = e.anchor == .start ? e.time : scripted + e.time
            return Tick(time: t, label: "\(what(e.action)) performed at \(fmt3(t)) s (not in the scene: Backspace forgets it, R records a take)",
                        performed: true)
        }
        let recorded = take?.events.map { e in
            Tick(time: scripted + Double(e.milliseconds) / 1000,
                 label: "\(what(e.action)) of the take at +\(fmt3(Double(e.milliseconds) / 1000)) s", performed: true)
        } ?? []
        return own + poked + recorded
    }
}
