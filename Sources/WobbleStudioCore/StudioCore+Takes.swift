import WobbleCore
import WobbleEngine
import WobbleSystem

/// The studio core's takes commands: pokes and shakes, recording a take, the timeline's ticks, the loop, baking.
extension StudioCore {
    /// Does one of the takes commands (`StudioCommand.Area.takes`); true when the studio quits now.
    func performTakes(_ command: StudioCommand) -> Bool {
        switch command {
        case .pokeBegin(let p):
            guard session.clip != nil else { break }
            if liveShapes().contains(where: { $0.contains(p) }) {
                pokeStart = p
            } else {
                say("(\(fmt1(p.x)), \(fmt1(p.y))) is not inside a live region")
            }
        case .pokeEnd(let b):
            guard let a = pokeStart else { break }
            pokeStart = nil
            guard b.isFinite, b != a else { break }
            performEvent(.touch(from: a, to: b))
        case .shake(let ax, let ay):
            performEvent(.shake(ax: ax, ay: ay))
        case .accelerometer(let x, let y):
            // SDL's controller axes: x right, y up, as the phone's were.
            let g = gravity.map { ($0.0 * 0.9 + x * 0.1, $0.1 * 0.9 + y * 0.1) } ?? (x, y)
            gravity = g
            let ax = x - g.0, ay = y - g.1
            let now = clock.now()
            if (ax * ax + ay * ay).squareRoot() > Scene.shakeThreshold, now - lastControllerShake > 0.15 {
                lastControllerShake = now
                performEvent(.shake(ax: ax, ay: ay))
            }
        case .toggleRecording:
            toggleRecording()
        case .forgetPokes:
            forgetPokes()
        case .pressTick(let tick):
            _ = timelineEditor.press(tick, length: timelineLength)
        case .hoverTimeline(let at, let within):
            let before = hoveredTick?.label
            hoverAt = at.map { ($0, max(0, within)) }
            if hoveredTick?.label != before { dirty = true }
        case .dragTick(let t):
            timelineEditor.drag(to: t, fps: session.clip?.fps ?? 30, loopPeriod: loopPeriod)
        case .endTickDrag(let t):
            timelineEditor.drag(to: t, fps: session.clip?.fps ?? 30, loopPeriod: loopPeriod)
            timelineEditor.endDrag()
        case .deleteSelected:
            if !timelineEditor.deleteSelected() && !deleteSelectedRegion() { forgetPokes() }
        case .toggleLoop:
            toggleLoop()
        case .bake:
            if timelineEditor.bake(take: recorder.lastTake, loopPeriod: loopPeriod), verbose {
                printError("studio: baked \(session.baked.count) event\(session.baked.count == 1 ? "" : "s") into the clip")
            }
        default:
            break  // another area's (`perform` dispatches by `StudioCommand.area`)
        }
        return false
    }

    func forgetPokes() {
        if session.performed.isEmpty {
            say("no pokes to forget")
        } else {
            session.setPerformed([])
            requestRun()
            say("pokes forgotten")
        }
    }

    /// `L`: `loop()` on or off for the scene, as an unsaved edit (the
    /// preview plays the loop at once; `Ctrl+S` writes or removes the line).
    func toggleLoop() {
        let looping = session.clip?.loop != nil
        let want = !looping
        // The loop is the clip being watched (with the baked events' motion
        // after the script's end), not the script's own end.
        editor.setLoop(want == session.sceneLoops ? nil : want, period: clipLength)
        say(want ? "loop on: the clip plays as an endless loop (Ctrl+S writes loop() into the scene)"
                 : "loop off" + (session.sceneLoops ? " (Ctrl+S takes loop() out of the scene)" : ""))
        if verbose { printError("studio: loop \(want ? "on" : "off")") }
    }

    /// The live regions at the frame shown (what a poke may hit).
    func liveShapes() -> [RegionShape] {
        guard let clip = session.clip else { return [] }
        return clip.timeline.snapshot(at: Double(currentIndex) / clip.fps).models.map(\.shape)
    }

    /// A poke or shake now: at the live clock while recording (a take
    /// event), else at the playhead's time.
    func performEvent(_ raw: PerformedEvent.Action) {
        guard session.clip != nil else { fail("nothing to poke: the scene failed"); return }
        let (event, when) = recorder.event(for: raw, recordedSeconds: transport.recordedSeconds ?? 0, playhead: playhead)
        let what: String
        switch event.action {
        case .touch(let a, let b): what = "touch(\(fmt1(a.x)), \(fmt1(a.y)), \(fmt1(b.x)), \(fmt1(b.y)))"
        case .shake(let ax, let ay): what = "shake(\(fmt3(ax)), \(fmt3(ay)))"
        }
        // The clip with it is swapped in when the run ends (a failure is
        // shown then).
        session.setPerformed(session.performed + [event])
        requestRun()
        say("\(what) at \(when)")
        if verbose { printError("studio: performed \(what) at \(when)") }
        dirty = true
    }

    /// The scene a take is of, and its text: with the unsaved edits when
    /// there are some and they go into the file (what plays).
    func takeScene() -> (scene: TakeRecorder.Scene, text: [UInt8]?) {
        guard session.hasUnsavedEdits else { return (.saved, nil) }
        guard let text = try? session.editedText() else { return (.savedNotEdited, nil) }
        return (.edited, text)
    }

    func stopRecording() {
        let (scene, text) = takeScene()
        // A looping scene's take ends on a whole number of its periods.
        let loop = session.clip.flatMap { c in
            loopPeriod.map { Take.Loop(scriptEnd: session.scriptedDuration, period: $0, fps: c.fps) }
        }
        recorder.stop(seconds: transport.stopRecording() ?? 0, sceneName: sceneName, sceneText: text, loop: loop, scene: scene)
    }

    /// A looping scene's period: its scripted clip, whole frames (the clip
    /// playing may have a take's events after it); nil when it does not loop.
    package var loopPeriod: Double? {
        guard let c = session.clip, c.loop != nil else { return nil }
        return Scene.frameCount(end: session.scriptedDuration, fps: c.fps) / c.fps
    }

    func toggleRecording() {
        if recorder.isRecording {
            stopRecording()
            // The take file has the pokes: the preview plays the scene again.
            if !session.performed.isEmpty {
                session.setPerformed([])
                requestRun()
            }
            return
        }
        guard session.clip != nil else { fail("cannot record: the scene failed"); return }
        guard !recorder.isWriting else { fail("the last take is still being written: R again when it is done"); return }
        if !session.performed.isEmpty {
            session.setPerformed([])
            requestRun()
        }
        recorder.start(scriptedEnd: session.scriptedDuration, scene: takeScene().scene)
        transport.startRecording(from: session.scriptedDuration)
    }

    /// A take being recorded is written, and one being written is waited
    /// for (the studio quits, or its display went away: the process exits
    /// next, so the write is done here, within its checks' timeouts).
    package func finishRecordingOnQuit() {
        if recorder.isRecording { stopRecording() }
        recorder.finishWriting()
    }
}
