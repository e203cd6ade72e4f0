import WobbleCore
import WobbleEngine
import WobbleSystem

/// Recording a take in the studio: R starts it at the end of the scripted
/// clip, each poke and shake performed meanwhile becomes an event at the
/// live clock's millisecond, R (or quitting) writes the take file next to
/// the scene. It says what it did through `status`.
package final class TakeRecorder {
    private let options: SessionOptions
    private let verbose: Bool
    /// Shows a status line (true: an error).
    package var status: (_ text: String, _ isError: Bool) -> Void = { _, _ in }
    /// The take being recorded, nil when none is.
    package private(set) var take: Take?
    /// The last take recorded (what `B` bakes), kept after it was written.
    package var lastTake: Take?

    package init(options: SessionOptions, verbose: Bool) {
        self.options = options
        self.verbose = verbose
    }

    package var isRecording: Bool { take != nil }

    /// What a take is of: the scene as saved, or with the unsaved edits.
    package enum Scene: Equatable {
        case saved
        case edited
        /// There are unsaved edits, but they cannot go into the file (a conflict).
        case savedNotEdited
        package var said: String {
            switch self {
            case .saved: return ""
            case .edited: return "; with the unsaved edits (the scene file has them once saved)"
            case .savedNotEdited: return "; as saved (the unsaved edits conflict with the file and are not in it)"
            }
        }
    }

    /// Starts a take (the scripted clip ends at `scriptedEnd` seconds) of `scene`.
    package func start(scriptedEnd: Double, scene: Scene) {
        take = Take()
        status("recording from the end of the clip: poke and shake; R writes the take" + scene.said, false)
        if verbose { printError("studio: recording from \(fmt3(scriptedEnd)) s") }
    }

    /// The event for a poke or shake now: at the live clock while recording
    /// (`recordedSeconds` into the take; it becomes one of the take's
    /// events), else at the playhead's time; with the time as shown.
    package func event(for raw: PerformedEvent.Action, recordedSeconds: Double, playhead: Double) -> (event: PerformedEvent, when: String) {
        let action = Take.rounded(raw)
        if var t = take {
            let ms = max(0, Int((recordedSeconds * 1000).rounded()))
            t.events.append((ms, action))
            take = t
            return (Take.performed(milliseconds: ms, action: action), "+\(fmt3(Double(ms) / 1000)) s")
        }
        let s = (playhead * 1000).rounded() / 1000
        return (PerformedEvent(time: s, action: action), "\(fmt3(s)) s")
    }

    /// Ends the take being recorded (`seconds` long) and writes it after
    /// `sceneText` (nil: the scene file as it is); a take that cannot be
    /// written goes to stderr, nothing performed is lost.
    package func stop(seconds: Double, sceneName: String, sceneText: [UInt8]?, loop: Take.Loop? = nil, scene: Scene) {
        guard let take else { return }
        self.take = nil
        if !take.events.isEmpty { lastTake = take }
        guard !take.events.isEmpty else {
            status("take: nothing performed, nothing written", false)
            return
        }
        do {
            let path = try take.write(scenePath: options.scenePath, sceneText: sceneText, recordedSeconds: seconds, loop: loop, options: options)
            status("wrote \(path) (\(take.events.count) event\(take.events.count == 1 ? "" : "s"))" + scene.said, false)
            printError("studio: wrote \(path)")
        } catch {
            status("take not written (the performance is on stderr): \(error)", true)
            printError("wobble-run: take not written: \(error)")
            // Nothing performed is lost: the block the take would end with.
            let block = take.block(sceneName: sceneName)
            printError("studio: the performance, to add at the end of \(sceneName):\n" + (block.hasSuffix("\n") ? String(block.dropLast()) : block))
        }
    }
}
