import WobbleCore
import WobbleEngine

/// `Shift+E`: the export chooser, as an animator knows it from an
/// application's render queue or export dialog — a short list of targets
/// (the scene's own output, then every platform preset the command line's
/// `--preset` knows, with its limits); a front end moves its row, exports
/// the row chosen, or closes it without exporting. The export then runs
/// in the background as `E`'s does. (The window: `Up`/`Down` and `Enter`,
/// or the row's number; `Esc` or any other key closes it.)
package struct PresetChooser: Codable, Equatable {
    /// The rows: nil is the scene's own output (what `E` writes), then the platforms.
    package static let choices: [Preset?] = [nil] + Preset.all

    /// The row chosen so far.
    package var row = 0

    /// What a command did.
    package enum Answer: Equatable {
        /// Still choosing (the row moved).
        case choosing
        /// Export to this choice (nil: the scene's output).
        case export(Preset?)
        /// Closed without exporting.
        case cancel
    }

    /// Moves the row by `d` (wrapping).
    package mutating func move(by d: Int) -> Answer {
        let n = Self.choices.count
        row = ((row + d) % n + n) % n
        return .choosing
    }

    /// Exports row `i` (nil: the row chosen); a row that is not there keeps choosing.
    package mutating func choose(_ i: Int?) -> Answer {
        let i = i ?? row
        guard Self.choices.indices.contains(i) else { return .choosing }
        row = i
        return .export(Self.choices[i])
    }
}
