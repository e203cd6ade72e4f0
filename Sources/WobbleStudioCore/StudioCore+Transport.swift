import WobbleCore

/// The studio core's transport commands: play, pause, step, seek, the handles shown, the sound muted.
extension StudioCore {
    /// Does one of the transport commands (`StudioCommand.Area.transport`); true when the studio quits now.
    func performTransport(_ command: StudioCommand) -> Bool {
        switch command {
        case .togglePlay:
            transport.togglePlaying()
            dirty = true
        case .step(let d):
            transport.pause()
            seek(frame: currentIndex + d)
        case .home:
            transport.pause()
            seek(frame: 0)
        case .pause:
            transport.pause()
        case .seek(let k):
            transport.pause()
            seek(frame: k)
        case .toggleHandles:
            handles.toggle()
            say(handles ? "handles shown" : "handles hidden")
        case .toggleMute:
            guard session.sound != nil else { say("the scene has no soundtrack (soundtrack(sound(\"drums.wav\")) gives it one)"); break }
            say(player.toggleMute() ? "sound muted (M)" : "sound on" + (player.unavailable.map { ", but \($0)" } ?? ""))
        case .unbound:
            break
        default:
            break  // another area's (`perform` dispatches by `StudioCommand.area`)
        }
        return false
    }

    func seek(frame k: Int) {
        guard let clip = session.clip else { return }
        transport.seek(frame: k, frameCount: clip.frameCount, fps: clip.fps)
        dirty = true
    }
}
