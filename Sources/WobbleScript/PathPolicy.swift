import WobbleCore
import WobbleSystem
import Foundation

/// A file a scene read (no output may replace an input): the
/// scene, its image, a motion trace, a module, a `dofile`/`loadfile` file.
/// Identified by device and inode (links followed) and by its canonical path.
public struct InputFile: Sendable, Equatable {
    /// What the file was to the scene.
    public enum Role: String, Sendable {
        case scene = "scene"
        case image = "image"
        case mask = "cutout mask"
        case trace = "motion trace"
        case sound = "sound"
        case module = "module"
        case code = "script file"
        /// An input of `--assemble`.
        case frame = "frame"
        case soundSlice = "sound slice"
    }

    public let role: Role
    /// The path as opened (resolved against the script's folder, not canonical).
    public let path: String
    /// The path after resolving `.`, `..` and symbolic links.
    public let canonical: String
    public let device: UInt64
    public let inode: UInt64

    /// The input at `path`, or nil when it cannot be found (then it cannot be replaced either).
    public init?(role: Role, path: String) {
        guard let id = PathPolicy.identity(path), let canonical = PathPolicy.realPath(path) else { return nil }
        self.role = role
        self.path = path
        self.canonical = canonical
        device = id.device
        inode = id.inode
    }
}

/// The one path policy for the paths a script names (no output replaces an
/// input). Every binding that takes a path calls it:
///
/// - data (`image`, `enableMotion`): read from anywhere (they only become
///   pixels and shakes), but only regular files in the sandbox (a FIFO or
///   a device would block the script or feed it endless bytes);
/// - code (`require`, `dofile`, `loadfile`): only regular files inside the
///   scene's folder, after resolving `..` and symbolic links;
/// - output (`output`): only inside the scene's folder, after resolving `..`
///   and every symbolic link on the way (the parent chain and a final
///   component that is a link); a link that does not resolve is refused.
///
/// `--allow-io` lifts it (only paths are resolved against the folder then).
/// `-o` on the command line is the user's own choice and never reaches it.
/// Paths are exact bytes (`PathBytes`): a name that is not UTF-8 is kept.
public struct PathPolicy: Sendable {
    /// The script's folder as given ("" for the current directory).
    public let folder: String
    /// `--allow-io`: no restriction.
    public let allowIO: Bool

    public init(folder: String, allowIO: Bool) {
        self.folder = folder
        self.allowIO = allowIO
    }

    /// Why a path is refused; `message` completes "path 'x' ...".
    public struct Refusal: Error, Equatable, Sendable {
        public let message: String
    }

    /// `path` (as given in the script) resolved against the script's folder.
    public func resolve(_ path: String) -> String {
        if path.hasPrefix("/") || folder.isEmpty { return path }
        return folder == "/" ? "/" + path : folder + "/" + path
    }

    /// The canonical scene folder, or the system's reason.
    func canonicalFolder() -> Result<String, Refusal> {
        let f = folder.isEmpty ? "." : folder
        guard let base = PathPolicy.realPath(f) else {
            return .failure(Refusal(message: "cannot be checked: the scene's folder '\(f)': \(PathPolicy.errorText())"))
        }
        return .success(base)
    }

    /// True when the canonical path `p` is the folder `base` or inside it.
    static func isInside(_ p: String, base: String) -> Bool {
        base == "/" || p == base || p.hasPrefix(base + "/")
    }

    // MARK: The three uses

    /// A data file to read (`image`, `enableMotion`): the resolved path.
    /// In the sandbox an existing one must be a regular file (links followed).
    public func data(_ path: String) -> Result<String, Refusal> {
        let full = resolve(path)
        if allowIO { return .success(full) }
        // A missing or unreadable file is the reader's to report.
        guard let st = PathPolicy.status(full, follow: true) else { return .success(full) }
        guard FileKind(st) == .regular else {
            return .failure(Refusal(message: "is not a regular file (it is \(PathPolicy.kind(FileKind(st)))); a scene reads files only (use --image for a pipe)"))
        }
        return .success(full)
    }

    /// A code file (`require`, `dofile`, `loadfile`): the resolved path, when
    /// it is a regular file inside the scene's folder (after links).
    public func code(_ path: String) -> Result<String, Refusal> {
        let full = resolve(path)
        if allowIO { return .success(full) }
        let base: String
        switch canonicalFolder() {
        case .success(let b): base = b
        case .failure(let e): return .failure(e)
        }
        guard let real = PathPolicy.realPath(full) else {
            return .failure(Refusal(message: "cannot be opened: \(PathPolicy.errorText())"))
        }
        guard PathPolicy.isInside(real, base: base) else {
            return .failure(Refusal(message: "is outside the scene's folder"))
        }
        guard let st = PathPolicy.status(real, follow: true) else {
            return .failure(Refusal(message: "cannot be opened: \(PathPolicy.errorText())"))
        }
        guard FileKind(st) == .regular else {
            return .failure(Refusal(message: "is not a regular file (it is \(PathPolicy.kind(FileKind(st))))"))
        }
        return .success(full)
    }

    /// An output path (`output`): the resolved path, when it and everything
    /// under it stays inside the scene's folder after resolving `..` and links.
    public func output(_ path: String) -> Result<String, Refusal> {
        let full = resolve(path)
        if allowIO { return .success(full) }
        let base: String
        switch canonicalFolder() {
        case .success(let b): base = b
        case .failure(let e): return .failure(e)
        }
        switch PathPolicy.canonical(full) {
        case .failure(let e):
            return .failure(e)
        case .success(let real):
            if PathPolicy.isInside(real, base: base) { return .success(full) }
            // Lexically inside, physically outside: a link leads out.
            if let lexical = PathPolicy.lexicalAbsolute(full), let lexicalBase = PathPolicy.lexicalAbsolute(folder.isEmpty ? "." : folder),
               PathPolicy.isInside(lexical, base: lexicalBase) || PathPolicy.isInside(lexical, base: base) {
                return .failure(Refusal(message: "leads outside the scene's folder through a symbolic link"))
            }
            return .failure(Refusal(message: "is outside the scene's folder"))
        }
    }

    // MARK: Resolving

    /// The canonical form of a path that may not exist yet: an existing path
    /// is resolved by `realpath` (every link, the final one too); a missing
    /// one is its parent's canonical form plus its name. A link that does not
    /// resolve, and `.`/`..` after a missing folder, are refusals.
    public static func canonical(_ path: String) -> Result<String, Refusal> {
        // Longer than the system takes (PATH_MAX): no call could use it.
        guard PathBytes.bytes(path).count < 4096 else { return .failure(Refusal(message: "cannot be checked: \(errorText(ENAMETOOLONG))")) }
        var p = path
        var missing: [String] = []   // names below the first existing folder, innermost first
        while true {
            while p.count > 1, p.hasSuffix("/") { p.removeLast() }
            if p.isEmpty { p = "." }
            if let real = realPath(p) {
                let tail = missing.reversed().joined(separator: "/")
                if tail.isEmpty { return .success(real) }
                return .success(real == "/" ? "/" + tail : real + "/" + tail)
            }
            let code = errno
            if let st = PathPolicy.status(p, follow: false) {
                if FileKind(st) == .link {
                    return .failure(Refusal(message: "is a symbolic link that does not resolve"))
                }
                return .failure(Refusal(message: "cannot be checked: \(errorText(code))"))
            }
            guard code == ENOENT else { return .failure(Refusal(message: "cannot be checked: \(errorText(code))")) }
            // Missing: its parent's canonical form plus its name.
            let name: String
            if let slash = p.lastIndex(of: "/") {
                name = String(p[p.index(after: slash)...])
                p = slash == p.startIndex ? "/" : String(p[..<slash])
            } else {
                name = p
                p = "."
            }
            guard name != ".", name != "..", !name.isEmpty else {
                return .failure(Refusal(message: "goes through a folder that does not exist"))
            }
            missing.append(name)
        }
    }

    /// `path` made absolute and `.`/`..` removed by text alone (no links).
    static func lexicalAbsolute(_ path: String) -> String? {
        var full = path
        if !path.hasPrefix("/") {
            guard let cwd = realPath(".") else { return nil }
            full = cwd + "/" + path
        }
        var parts: [Substring] = []
        for c in full.split(separator: "/") {
            if c == "." { continue }
            if c == ".." { if !parts.isEmpty { parts.removeLast() }; continue }
            parts.append(c)
        }
        return "/" + parts.joined(separator: "/")
    }

    /// `realpath(3)` on the exact bytes (`Posix.realpath`), or nil with `errno` set.
    public static func realPath(_ path: String) -> String? {
        withErrno { try Posix.realpath(path) }
    }

    /// `stat(2)` (or `lstat(2)` without `follow`) on the exact bytes
    /// (`Posix.status`), or nil with `errno` set.
    static func status(_ path: String, follow: Bool) -> stat? {
        withErrno { try Posix.status(path, follow: follow) }
    }

    /// `body`'s value, or nil with `errno` set to the failure's code.
    private static func withErrno<T>(_ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch let e as PosixError {
            errno = e.code
        } catch {
            errno = EINVAL
        }
        return nil
    }

    /// Device and inode of `path` (links followed), or nil.
    public static func identity(_ path: String) -> (device: UInt64, inode: UInt64)? {
        guard let st = status(path, follow: true) else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    static func errorText(_ code: Int32 = errno) -> String { Posix.reason(code) }

    static func kind(_ kind: FileKind) -> String {
        switch kind {
        case .directory: return "a folder"
        case .fifo: return "a FIFO"
        case .characterDevice: return "a character device"
        case .blockDevice: return "a block device"
        case .socket: return "a socket"
        default: return "not a plain file"
        }
    }
}
