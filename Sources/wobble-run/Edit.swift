import WobbleCore
import WobbleSystem
#if canImport(Glibc)
import Glibc
#endif

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
            if isExecutableFile(beside) { return beside }
        }
        return ChildProcess.findExecutable(executableName)
    }

    static func isExecutableFile(_ path: String) -> Bool {
        Posix.kind(path) == .regular && PathBytes.withCString(path, { access($0, X_OK) == 0 }) == true
    }

    /// Replaces this process with the studio; returns only on failure,
    /// with the exit status (1) after printing one line.
    static func run(_ args: [String]) -> Int32 {
        guard let studio = findStudio() else {
            printError(notInstalledMessage)
            return 1
        }
        var argv: [UnsafeMutablePointer<CChar>?] = []
        defer { for p in argv { free(p) } }
        for s in [studio] + args {
            let b = PathBytes.bytes(s)
            guard !b.contains(0), let raw = malloc(b.count + 1) else {
                printError(Failure.prefixed("edit: an argument contains a NUL byte"))
                return 2
            }
            let p = raw.assumingMemoryBound(to: CChar.self)
            for (i, c) in b.enumerated() { p[i] = CChar(bitPattern: c) }
            p[b.count] = 0
            argv.append(p)
        }
        argv.append(nil)
        // The studio installs its own signal handling; SIGPIPE's disposition
        // (ignored here) is inherited through exec, as the studio wants it.
        execv(studio, argv)
        printError(Failure.prefixed("edit: cannot run '\(studio)': \(String(cString: strerror(errno)))"))
        return 1
    }
}
