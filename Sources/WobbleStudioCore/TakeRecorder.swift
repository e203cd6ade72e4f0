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

    /// Ends the take being recorded (`seconds` long) and starts writing it
    /// after `sceneText` (nil: the scene file as it is) in the background
    /// (`poll` says how it ended).
    package func stop(seconds: Double, sceneName: String, sceneText: [UInt8]?, loop: Take.Loop? = nil, scene: Scene) {
        guard let take else { return }
        self.take = nil
        if !take.events.isEmpty { lastTake = take }
        guard !take.events.isEmpty else {
            status("take: nothing performed, nothing written", false)
            return
        }
        writing = (TakeJob(take: take, scenePath: options.scenePath, sceneText: sceneText, recordedSeconds: seconds, loop: loop,
                           options: options), sceneName, scene)
        status("writing the take (its scene runs once to check it)...", false)
    }

    /// The take being written, nil when none is.
    private var writing: (job: TakeJob, sceneName: String, scene: Scene)?

    package var isWriting: Bool { writing != nil }

    /// Waits (wall time) up to `seconds` for the take being written to be
    /// done (`poll` then says so); true when none is being written.
    package func waitForWrite(upTo seconds: Double) -> Bool { writing?.job.wait(seconds: seconds) ?? true }

    /// Looks whether the take being written is done (each turn of the
    /// window's loop) and says how it ended; a take that cannot be written
    /// goes to stderr, nothing performed is lost.
    package func poll() {
        guard let w = writing, let outcome = w.job.outcome else { return }
        writing = nil
        let n = w.job.take.events.count
        if let path = outcome.path {
            status("wrote \(path) (\(n) event\(n == 1 ? "" : "s"))" + w.scene.said, false)
            printError("studio: wrote \(path)")
            return
        }
        let why = outcome.error ?? "stopped"
        status("take not written (the performance is on stderr): " + (outcome.cancelled ? "cancelled: " : "") + why, true)
        printError("wobble-run: take not written: \(why)")
        // Nothing performed is lost: the block the take would end with.
        let block = w.job.take.block(sceneName: w.sceneName)
        printError("studio: the performance, to add at the end of \(w.sceneName):\n" + (block.hasSuffix("\n") ? String(block.dropLast()) : block))
    }

    /// Stops the take being written (`reason` says why) and waits for it to end.
    package func cancel(_ reason: String) {
        guard let w = writing else { return }
        w.job.cancel(reason)
        _ = w.job.wait(seconds: Exporter.stopGrace)
        poll()
    }

    /// The studio quits: the take being written is given the time its
    /// checks may take (each run is held to the scene's timeout), then
    /// stopped; how it ended is said either way.
    package func finishWriting() {
        guard let w = writing else { return }
        // Two checks at most (a take that never rests is checked again with an end).
        if !w.job.wait(seconds: 2 * (options.timeout ?? 10) + Exporter.stopGrace) {
            cancel("the studio quit")
        }
        poll()
    }
}
