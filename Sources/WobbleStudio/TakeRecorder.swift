import WobbleCore
import WobbleEngine
import WobbleSystem

/// Recording a take in the studio: R starts it at the end of the scripted
/// clip, each poke and shake performed meanwhile becomes an event at the
/// live clock's millisecond, R (or quitting) writes the take file next to
/// the scene. It says what it did through `status`.
final class TakeRecorder {
    private let options: SessionOptions
    private let verbose: Bool
    /// Shows a status line (true: an error).
    var status: (_ text: String, _ isError: Bool) -> Void = { _, _ in }
    /// The take being recorded, nil when none is.
    private(set) var take: Take?

    init(options: SessionOptions, verbose: Bool) {
        self.options = options
        self.verbose = verbose
    }

    var isRecording: Bool { take != nil }

    /// Starts a take (the scripted clip ends at `scriptedEnd` seconds).
    func start(scriptedEnd: Double) {
        take = Take()
        status("recording from the end of the clip: poke and shake; R writes the take", false)
        if verbose { printError("studio: recording from \(fmt3(scriptedEnd)) s") }
    }

    /// The event for a poke or shake now: at the live clock while recording
    /// (`recordedSeconds` into the take; it becomes one of the take's
    /// events), else at the playhead's time; with the time as shown.
    func event(for raw: PerformedEvent.Action, recordedSeconds: Double, playhead: Double) -> (event: PerformedEvent, when: String) {
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

    /// Ends the take being recorded (`seconds` long) and writes it; a take
    /// that cannot be written goes to stderr, nothing performed is lost.
    func stop(seconds: Double, sceneName: String) {
        guard let take else { return }
        self.take = nil
        guard !take.events.isEmpty else {
            status("take: nothing performed, nothing written", false)
            return
        }
        do {
            let path = try take.write(scenePath: options.scenePath, recordedSeconds: seconds, options: options)
            status("wrote \(path) (\(take.events.count) event\(take.events.count == 1 ? "" : "s"))", false)
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
