import WobbleCore
import WobbleSystem
import Foundation

/// `wobble-run edit ARGS...`: runs the studio executable with the same
/// arguments, as git and cargo run their subcommands. The headless tool
/// links no window system; the studio (SDL2, X11, Wayland) is its own
/// executable and its own package.
enum Edit {
    /// The studio's executable name.
    static let executableName = "wobble-studio"
    /// The Debian package that installs it.
    static let packageName = "wobble-studio"

    /// The one line printed when the studio is not installed (exit 1).
    static let notInstalledMessage =
        "wobble-run: edit needs the studio, which is not installed: install the package '\(packageName)' (or render headless with 'wobble-run SCENE.lua')"

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

    /// Replaces this process with the studio; returns only on failure,
    /// with the exit status (1) after printing one line.
    static func run(_ args: [String]) -> Int32 {
        guard let studio = findStudio() else {
            printError(notInstalledMessage)
            return 1
        }
        if args.contains(where: { PathBytes.bytes($0).contains(0) }) {
            printError(Failure.prefixed("edit: an argument contains a NUL byte"))
            return 2
        }
        // The studio installs its own signal handling; SIGPIPE's disposition
        // (ignored here) is inherited through exec, as the studio wants it.
        let failure = ThisProcess.replace(with: studio, arguments: [studio] + args)
        printError(Failure.prefixed("edit: cannot run '\(studio)': \(Posix.reason(failure.code))"))
        return 1
    }
}
