import WobbleCore
import WobbleEngine

/// The studio core's export commands: exports with a preset or the scene's output, the chooser, the still.
extension StudioCore {
    /// Does one of the export commands (`StudioCommand.Area.export`); true when the studio quits now.
    func performExport(_ command: StudioCommand) -> Bool {
        switch command {
        case .export(let name):
            guard let preset = StudioCore.preset(named: name) else {
                fail("no preset '\(name ?? "")' (\(Preset.all.map(\.name).joined(separator: ", ")))")
                break
            }
            exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits, preset: preset)
        case .openExportChooser:
            guard !exporter.isExporting else { exporter.start(now: clock.now(), unsavedEdits: false); break }
            chooser = PresetChooser()
            say("export with: Up/Down and Enter, or 1-\(PresetChooser.choices.count); Esc cancels")
        case .chooserMove(let d):
            if var c = chooser { let a = c.move(by: d); chooser = c; choose(a) }
        case .chooserChoose(let i):
            if var c = chooser { let a = c.choose(i); chooser = c; choose(a) }
        case .chooserCancel:
            if chooser != nil { choose(.cancel) }
        case .writeStill:
            if let state = session.frameState(currentIndex), let img = session.image {
                exporter.writeStill(state, image: img)
                // The file written is not a change to reload for.
                watch.reset(extra: session.inputs)
            } else {
                fail("no frame to write: the scene failed")
            }
        default:
            break  // another area's (`perform` dispatches by `StudioCommand.area`)
        }
        return false
    }

    /// A preset by name: `.some(nil)` for nil (the scene's own output),
    /// nil when there is no such preset.
    static func preset(named name: String?) -> Preset?? {
        guard let name else { return .some(nil) }
        guard let p = Preset.all.first(where: { $0.name == name }) else { return nil }
        return .some(p)
    }

    /// What a chooser command did: moved, exported, or closed it.
    func choose(_ answer: PresetChooser.Answer) {
        switch answer {
        case .choosing:
            dirty = true
        case .cancel:
            chooser = nil
            dirty = true
            say("export cancelled")
        case .export(let choice):
            chooser = nil
            dirty = true
            switch choice {
            case .scene: exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits)
            case .preset(let p): exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits, preset: p)
            case .webPage: exporter.start(now: clock.now(), unsavedEdits: session.hasUnsavedEdits, webPage: true)
            }
        }
    }
}
