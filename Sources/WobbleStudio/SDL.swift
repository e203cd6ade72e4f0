// SDL as a library, for the two SDL files of the studio's window surface
// (SDLWindow.swift: video, input and controllers; SDLAudio.swift: the
// soundtrack's device): the subsystems started and stopped, the hints that
// pick their drivers, SDL's last error. Only `wobble-run edit` starts SDL.
internal import CSDL2

/// The one place SDL's subsystems start and stop, and its error is read.
enum SDLLibrary {
    /// An SDL subsystem the studio uses.
    enum Subsystem {
        /// The window: video (with its events).
        case video
        /// Game controllers and their sensors (a shake from a controller).
        case controllers
        /// The soundtrack's output device.
        case audio

        var flags: UInt32 {
            switch self {
            case .video: UInt32(SDL_INIT_VIDEO)
            case .controllers: UInt32(SDL_INIT_GAMECONTROLLER) | UInt32(SDL_INIT_SENSOR)
            case .audio: UInt32(SDL_INIT_AUDIO)
            }
        }

        /// The hint that names the drivers SDL tries for it, in order.
        var driverHint: String? {
            switch self {
            case .video: SDL_HINT_VIDEODRIVER
            case .audio: SDL_HINT_AUDIODRIVER
            case .controllers: nil
            }
        }
    }

    /// SDL's last error, or `fallback` when it has none.
    static func error(or fallback: String = "unknown SDL error") -> String {
        guard let e = SDL_GetError() else { return fallback }
        let s = String(cString: e)
        return s.isEmpty ? fallback : s
    }

    /// Whether `subsystem` is started.
    static func isStarted(_ subsystem: Subsystem) -> Bool { SDL_WasInit(subsystem.flags) == subsystem.flags }

    /// Sets SDL hint `name` (before the subsystem it concerns starts).
    static func hint(_ name: String, _ value: String) { SDL_SetHint(name, value) }

    /// Starts `subsystem`, trying `drivers` in order when given (else SDL's
    /// own choice, or what `SDL_VIDEODRIVER` / `SDL_AUDIODRIVER` name).
    /// Throws SDL's error as a line when it does not start.
    static func start(_ subsystem: Subsystem, drivers: [String]? = nil) throws(SDLFailure) {
        if let drivers, let name = subsystem.driverHint { SDL_SetHint(name, drivers.joined(separator: ",")) }
        guard SDL_InitSubSystem(subsystem.flags) == 0 else { throw SDLFailure(message: error()) }
    }

    /// Stops `subsystem` (after a start that turned out unusable).
    static func stop(_ subsystem: Subsystem) { SDL_QuitSubSystem(subsystem.flags) }

    /// The audio driver SDL chose (`pipewire`, `dummy`, …), "none" before audio starts.
    static var audioDriver: String { SDL_GetCurrentAudioDriver().map { String(cString: $0) } ?? "none" }

    /// Stops every subsystem and SDL itself (the window closed).
    static func shutdown() { SDL_Quit() }
}

/// SDL's error when a subsystem does not start.
struct SDLFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
