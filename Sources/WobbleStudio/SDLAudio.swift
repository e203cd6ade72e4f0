// The only file that calls SDL's audio devices (SDL.swift starts the
// subsystem, as it does the window's): the soundtrack played through an
// SDL audio device (mono 32-bit float at the track's rate; SDL converts
// for the device). Its callback runs on SDL's audio thread with the
// device lock held; the window thread takes the same lock to change what
// plays and to read the clock.
internal import CSDL2
import Foundation
import WobbleStudioCore
import WobbleSystem

/// What the device's thread and the window thread share; guarded by the
/// SDL device lock (the callback runs with it held).
private final class AudioState: @unchecked Sendable {
    var track: AudioTrack?
    /// The clip sample the next block starts at.
    var position = 0
    /// The clip sample playing started at.
    var startPosition = 0
    var muted = false
    var clock: AudioClock
    init(clock: AudioClock) { self.clock = clock }
}

/// The soundtrack through SDL audio (`SDL_OpenAudioDevice` with a callback).
final class SDLAudioSink: AudioSink {
    private let device: SDL_AudioDeviceID
    private let state: AudioState
    private let rate: Int
    private let latency: Int
    let name: String

    /// Opens the default output device at `rate` samples per second.
    ///
    /// - Throws: `AudioUnavailable` when SDL has no audio driver, only its
    ///   `dummy` one (`WOBBLE_STUDIO_DUMMY_AUDIO=1` accepts it: its clock
    ///   then drives the preview, which measures the sync where nothing can
    ///   be heard), or no device opens.
    init(rate: Int = 44_100) throws {
        let env = Environment.all
        let dummyAccepted = env["WOBBLE_STUDIO_DUMMY_AUDIO"] == "1"
        if !SDLLibrary.isStarted(.audio) {
            // ALSA without a sound card prints a dozen lines of its own
            // on stderr when SDL tries it: it is tried only when there is
            // a card to play on (the sound servers fail quietly).
            let drivers = (env["SDL_AUDIODRIVER"] ?? "").isEmpty
                ? ["pipewire", "pulseaudio"] + (SDLAudioSink.hasALSACard ? ["alsa"] : []) + (dummyAccepted ? ["dummy"] : []) : nil
            do {
                try SDLLibrary.start(.audio, drivers: drivers)
            } catch {
                let why = SDLAudioSink.hasALSACard ? "SDL: \(error.message)" : "no sound server answers and there is no sound card"
                throw AudioUnavailable(description: "no audio device (\(why))")
            }
        }
        let driver = SDLLibrary.audioDriver
        if driver == "dummy" && !dummyAccepted || driver == "disk" {
            SDLLibrary.stop(.audio)
            throw AudioUnavailable(description: "no audio device (SDL's '\(driver)' audio driver)")
        }
        let state = AudioState(clock: AudioClock(rate: Double(rate), latency: 0))
        var want = SDL_AudioSpec()
        want.freq = Int32(rate)
        want.format = SDL_AudioFormat(AUDIO_F32LSB)
        want.channels = 1
        want.samples = 1024
        want.userdata = Unmanaged.passUnretained(state).toOpaque()
        want.callback = { userdata, stream, len in
            guard let userdata, let stream, len > 0 else { return }
            let state = Unmanaged<AudioState>.fromOpaque(userdata).takeUnretainedValue()
            let n = Int(len) / MemoryLayout<Float>.size
            stream.withMemoryRebound(to: Float.self, capacity: n) { p in
                let out = UnsafeMutableBufferPointer(start: p, count: n)
                if let track = state.track {
                    state.position = track.fill(out, from: state.position, muted: state.muted)
                    state.clock.took(n, at: monotonic())
                } else {
                    out.initialize(repeating: 0)
                }
            }
        }
        var have = SDL_AudioSpec()
        let id = SDL_OpenAudioDevice(nil, 0, &want, &have, 0)
        guard id != 0 else {
            let e = SDLLibrary.error(or: "unknown error")
            SDLLibrary.stop(.audio)
            throw AudioUnavailable(description: "no audio device (SDL '\(driver)': \(e))")
        }
        device = id
        self.state = state
        self.rate = rate
        // The block being played while the next is taken.
        latency = Int(have.samples)
        name = "SDL audio '\(driver)', \(rate) Hz, blocks of \(have.samples) samples"
    }

    deinit {
        SDL_CloseAudioDevice(device)
    }

    /// A playback device of an ALSA sound card is there (`/dev/snd/pcmC*p`).
    static var hasALSACard: Bool {
        let names = FileSystem.names(in: "/dev/snd")
        return names.contains { $0.hasPrefix("pcmC") && $0.hasSuffix("p") }
    }

    func play(_ track: AudioTrack, from position: Int) {
        SDL_LockAudioDevice(device)
        state.track = track
        state.position = position
        state.startPosition = position
        state.clock = AudioClock(rate: Double(track.rate), latency: latency)
        SDL_UnlockAudioDevice(device)
        SDL_PauseAudioDevice(device, 0)
    }

    func stop() {
        SDL_PauseAudioDevice(device, 1)
        SDL_LockAudioDevice(device)
        state.track = nil
        SDL_UnlockAudioDevice(device)
    }

    func heard(at now: Double) -> Double? {
        SDL_LockAudioDevice(device)
        defer { SDL_UnlockAudioDevice(device) }
        guard let track = state.track else { return nil }
        let h = state.clock.heard(at: now)
        return (Double(state.startPosition) + h).truncatingRemainder(dividingBy: Double(track.length))
    }

    var muted: Bool {
        get {
            SDL_LockAudioDevice(device)
            defer { SDL_UnlockAudioDevice(device) }
            return state.muted
        }
        set {
            SDL_LockAudioDevice(device)
            state.muted = newValue
            SDL_UnlockAudioDevice(device)
        }
    }
}
