import WobbleCore
import WobbleEngine
import WobbleSystem

/// `wobble-run edit ARGS...`: runs the studio executable with the same
/// arguments, as git and cargo run their subcommands. The headless tool
/// links no window system; the studio (SDL2, X11, Wayland) is its own
/// executable and its own package, and parses the arguments with the
/// engine's table (`StudioCommandLine`), the rows this row shows.
package enum EditCommand {
    /// The studio's executable name.
    static let executableName = "wobble-studio"
    /// The Debian package that installs it.
    static let packageName = "wobble-studio"

    /// The one line printed when the studio is not installed (exit 1).
    static let notInstalled = Failure(
        lines: ["wobble-run: edit needs the studio, which is not installed: install the package '\(packageName)' (or render headless with 'wobble-run SCENE.lua')"],
        exitCode: 1)

    /// `edit`'s row of the table.
    package static let subcommand = Subcommand(
        name: "edit",
        synopsis: ["edit SCENE.lua [options] [-- script args...]"],
        summary: "the studio window",
        about: """
        Opens a window that plays the scene's clip in real time and reloads it
        when the scene, a module, a trace or the image it reads changes on
        disk: drag the regions' handles, poke them, record takes, cut out
        objects, export; Ctrl+S saves the edits into the scene file. The keys
        are listed by wobble-run edit --help and by F1 in the window. It runs
        the studio executable (wobble-studio), installed on its own.

        """,
        options: StudioCommandLine.specs.map(OptionRow.init),
        operands: .scene,
        run: { EditCommand.run($0) })

    /// The studio beside this executable (an install puts both in one
    /// folder; a build puts both in its products folder), else the first
    /// on PATH.
    static func findStudio() -> String? {
        if let me = try? Posix.readlink("/proc/self/exe"), let slash = me.lastIndex(of: "/") {
            let beside = String(me[..<slash]) + "/" + executableName
            if Posix.isExecutableFile(beside) { return beside }
        }
        return ChildProcess.findExecutable(executableName)
    }

    /// The studio to run with `args`, or the failure that stops it.
    static func studio(for args: [String]) throws -> String {
        guard let studio = findStudio() else { throw notInstalled }
        if args.contains(where: { PathBytes.bytes($0).contains(0) }) {
            throw Failure("an argument contains a NUL byte", command: "edit", exitCode: 2)
        }
        return studio
    }

    /// Replaces this process with the studio; returns only on failure,
    /// with the exit status after printing one line.
    static func run(_ args: [String]) -> Int32 {
        do {
            let studio = try studio(for: args)
            // The studio installs its own signal handling; SIGPIPE's disposition
            // (ignored here) is inherited through exec, as the studio wants it.
            let failure = ThisProcess.replace(with: studio, arguments: [studio] + args)
            throw Failure("cannot run '\(studio)': \(Posix.reason(failure.code))", command: "edit", exitCode: 1)
        } catch {
            return Failure.report(error, command: "edit")
        }
    }
}
