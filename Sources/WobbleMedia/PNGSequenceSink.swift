import Dispatch
import Foundation
import WobbleCore
#if canImport(Glibc)
import Glibc
#endif

/// Where PNG frames go, as told by an `-o` path (SPEC §2).
public enum PNGOutput: Equatable, Sendable {
    /// A folder (existing, or a path ending in `/`): `frame_00000.png`, …
    case directory(String)
    /// A printf pattern with one frame-number conversion: `out_%04d.png`.
    case pattern(String)
    /// A single `.png` file: allowed only for a clip of exactly one frame.
    case file(String)

    /// The path as the user gave it.
    public var path: String {
        switch self {
        case .directory(let p), .pattern(let p), .file(let p): return p
        }
    }

    /// Tells whether an `-o` path names PNG output, and in which form.
    ///
    /// In this order: a path ending in `.gif` (any case) is not PNG
    /// (`nil`); a path ending in `/`, or an existing folder, is
    /// `.directory`; a file name containing `%` is `.pattern` (checked by
    /// `validate`); a name ending in `.png` (any case) is `.file`; anything
    /// else is `nil` (the CLI decides, e.g. with `--format png`, where
    /// `.directory(path)` is the natural reading).
    public static func parse(_ path: String) -> PNGOutput? {
        guard !path.isEmpty, !path.lowercased().hasSuffix(".gif") else { return nil }
        if path.hasSuffix("/") { return .directory(path) }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            return .directory(path)
        }
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        if name.contains("%") { return .pattern(path) }
        if name.lowercased().hasSuffix(".png") { return .file(path) }
        return nil
    }

    /// Checks the output before any frame is rendered: the pattern's syntax,
    /// that the folder the frames go into (or its parent, for a folder still
    /// to be created) exists, and that a single `.png` file gets one frame.
    ///
    /// - Parameter frameCount: the number of frames that will be written,
    ///   when known.
    /// - Throws: `MediaError` with a message naming the output path.
    public func validate(frameCount: Int? = nil) throws {
        _ = try Layout(self, frameCount: frameCount)
    }

    /// The file a frame with timeline index `index` is written to.
    ///
    /// - Throws: `MediaError` for a malformed pattern.
    public func path(forFrame index: Int) throws -> String {
        try Layout(self, frameCount: nil).path(forFrame: index, output: self)
    }
}

/// A frame file-name pattern: literal text with `%%` for `%` and exactly one
/// frame-number conversion, `%d` or `%0Nd` (zero-padded to N digits, N from
/// 1 to 10), as ffmpeg's image muxer understands them.
public struct FrameNamePattern: Equatable, Sendable {
    /// Text before the number (with `%%` already turned into `%`).
    public let prefix: String
    /// Text after the number.
    public let suffix: String
    /// The zero-padded width (1 for `%d`).
    public let width: Int

    /// The folder output's names: `frame_%05d.png`.
    public static let directoryDefault = FrameNamePattern(prefix: "frame_", suffix: ".png", width: 5)

    init(prefix: String, suffix: String, width: Int) {
        self.prefix = prefix
        self.suffix = suffix
        self.width = width
    }

    /// Parses a file-name pattern (no `/` in it).
    ///
    /// - Parameter output: the whole `-o` path, for error messages.
    /// - Throws: `MediaError` for a missing, repeated or unsupported conversion.
    public init(fileName pattern: String, output: String) throws {
        let help = "use %d or %0Nd (such as %04d) for the frame number, and %% for a literal %"
        var prefix = "", suffix = "", width: Int?
        var chars = Array(pattern)[...]
        while let c = chars.popFirst() {
            guard c == "%" else {
                if width == nil { prefix.append(c) } else { suffix.append(c) }
                continue
            }
            if chars.first == "%" {
                chars.removeFirst()
                if width == nil { prefix.append("%") } else { suffix.append("%") }
                continue
            }
            var spec = "%"
            while let d = chars.first, d.isASCII, d.isNumber { spec.append(chars.removeFirst()) }
            if !chars.isEmpty { spec.append(chars.removeFirst()) }
            let digits = spec.dropFirst().dropLast()
            // `%0Nd` with N in 1...Limits.maxPatternWidth; a width too large
            // for Int is just as unsupported (never a trap).
            let padded = digits.hasPrefix("0") && digits.count >= 2 ? Int(digits: digits) : nil
            guard spec.hasSuffix("d"), digits.isEmpty || padded.map({ (1...Limits.maxPatternWidth).contains($0) }) == true else {
                let shown = spec.count > 24 ? spec.prefix(23) + "…" : spec[...]
                throw MediaError("output '\(output)': unsupported conversion '\(shown)' in the file name pattern; \(help)")
            }
            guard width == nil else {
                throw MediaError("output '\(output)': the file name pattern has more than one frame-number conversion; \(help)")
            }
            width = padded ?? 1
        }
        guard let width else {
            throw MediaError("output '\(output)': the file name pattern has no frame-number conversion; \(help)")
        }
        self.init(prefix: prefix, suffix: suffix, width: width)
    }

    /// The file name for a timeline index (`out_0010.png` for 10 and `%04d`).
    public func fileName(_ index: Int) -> String {
        let digits = String(index)
        return prefix + String(repeating: "0", count: max(0, width - digits.count)) + digits + suffix
    }

    /// The index a file name stands for, when this pattern writes exactly
    /// that name for it (`out_010.png` is not a `%04d` name); else `nil`.
    public func index(ofFileName name: String) -> Int? {
        guard name.count > prefix.count + suffix.count, name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let middle = name.dropFirst(prefix.count).dropLast(suffix.count)
        guard middle.count <= 18, middle.allSatisfy({ $0.isASCII && $0.isNumber }), let index = Int(middle) else { return nil }
        return fileName(index) == name ? index : nil
    }
}

/// A folder path as given (for messages) and as used (no trailing `/`).
struct Folder: Equatable {
    let shown: String
    let path: String
    init(_ given: String) {
        shown = given
        var p = given
        while p.count > 1, p.hasSuffix("/") { p.removeLast() }
        path = p.isEmpty ? "." : p
    }
    /// A file in this folder; a bare name when the folder was not named
    /// (a pattern without `/`).
    func joined(_ name: String) -> String {
        shown.isEmpty ? name : path == "/" ? "/" + name : path + "/" + name
    }
    /// The folder this one is in, and its own name.
    var parentAndName: (parent: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let parent = String(path[..<slash])
        return (parent.isEmpty ? "/" : parent, String(path[path.index(after: slash)...]))
    }
}

/// What a `PNGOutput` means on disk, after validation.
struct Layout {
    enum Kind { case folder(exists: Bool), pattern, single }
    let kind: Kind
    let folder: Folder
    let names: FrameNamePattern

    init(_ output: PNGOutput, frameCount: Int?) throws {
        let fm = FileManager.default
        func isDirectory(_ path: String) -> Bool? {
            var isDir: ObjCBool = false
            return fm.fileExists(atPath: path, isDirectory: &isDir) ? isDir.boolValue : nil
        }
        func splitPath(_ path: String) -> (folder: String, name: String) {
            guard let slash = path.lastIndex(of: "/") else { return ("", path) }
            let folder = String(path[..<slash])
            return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
        }
        switch output {
        case .directory(let given):
            folder = Folder(given)
            names = .directoryDefault
            switch isDirectory(folder.path) {
            case true?:
                kind = .folder(exists: true)
            case false?:
                throw MediaError("output '\(given)': '\(folder.path)' exists and is not a folder")
            case nil:
                let parent = folder.parentAndName.parent
                guard isDirectory(parent) == true else {
                    throw MediaError("output '\(given)': folder '\(parent)' does not exist")
                }
                kind = .folder(exists: false)
            }
        case .pattern(let given):
            let (dir, name) = splitPath(given)
            if dir.contains("%") && dir.replacingOccurrences(of: "%%", with: "").contains("%") {
                throw MediaError("output '\(given)': the frame number must be in the file name, not in the folder")
            }
            names = try FrameNamePattern(fileName: name, output: given)
            folder = Folder(dir.replacingOccurrences(of: "%%", with: "%"))
            guard isDirectory(folder.path) == true else {
                throw MediaError("output '\(given)': folder '\(folder.path)' does not exist")
            }
            kind = .pattern
        case .file(let given):
            let (dir, name) = splitPath(given)
            guard isDirectory(Folder(dir).path) == true else {
                throw MediaError("output '\(given)': folder '\(dir)' does not exist")
            }
            if let frameCount, frameCount != 1 {
                throw Layout.singleFileError(given, frames: frameCount)
            }
            folder = Folder(dir)
            names = FrameNamePattern(prefix: name, suffix: "", width: 0)
            kind = .single
        }
    }

    func path(forFrame index: Int, output: PNGOutput) -> String {
        if case .single = kind { return output.path }
        return folder.joined(names.fileName(index))
    }

    static func singleFileError(_ given: String, frames: Int?) -> MediaError {
        let stem = given.lowercased().hasSuffix(".png") ? String(given.dropLast(4)) : given
        let count = frames.map { "has \($0) frames" } ?? "has more than one frame"
        return MediaError("output '\(given)': the clip \(count); write PNG frames to a folder ('\(stem)/') or a pattern ('\(stem)_%04d.png')")
    }
}

/// Writes frames as PNG files: a folder (`frame_00000.png`, …), a printf
/// pattern (`out_%04d.png`), or one `.png` file for a one-frame clip.
///
/// Atomic (SPEC §6, §7): frames go into a hidden temporary folder (inside
/// the target folder when it exists, so renames stay on one file system,
/// else beside it), registered with `TemporaryPaths`. `finish()` moves them
/// in: a folder that did not exist appears whole, with 0755-under-umask
/// permissions; in an existing folder each frame file is renamed over its
/// old version, and then, for a full render, the frame files the render did
/// not write (names the same pattern would write) are removed; other files
/// stay. `abort()` leaves the target exactly as it was.
///
/// PNG encoding runs on background threads, a few frames ahead at most
/// (memory stays flat); files are written on the caller's thread, and an
/// encoding or writing error surfaces from `write` or `finish`.
public final class PNGSequenceSink: FrameSink {
    /// The output this sink writes.
    public let output: PNGOutput
    /// Whether this render writes the whole timeline (no `--frames`), so
    /// stale frame files in the target may be removed.
    public let fullRender: Bool

    private let layout: Layout
    private let compressionLevel: Int
    private let maxInFlight: Int
    private var temporaryFolder: String?
    private var singleFile: AtomicFile?
    private var pending: [EncodeJob] = []
    private var written: [Int] = []
    private var lastIndex = -1
    private enum State { case open, finished, aborted, failed }
    private var state = State.open

    /// Validates the output and prepares the temporary folder.
    ///
    /// - Parameters:
    ///   - output: where the frames go (`PNGOutput.parse`).
    ///   - fullRender: `true` when every frame of the timeline is written
    ///     (stale frame files are then removed); `false` for `--frames A-B`.
    ///   - frameCount: how many frames will be written, when known; a
    ///     single `.png` file refuses more than one.
    ///   - compressionLevel: zlib level for `ImageIO.encodePNG`.
    ///   - framesInFlight: how many frames may be encoding at once
    ///     (default: one less than the processor count, 1 to 4).
    /// - Throws: `MediaError` naming the output path.
    public init(output: PNGOutput, fullRender: Bool, frameCount: Int? = nil,
                compressionLevel: Int = ImageIO.defaultPNGCompressionLevel,
                framesInFlight: Int? = nil) throws {
        self.output = output
        self.fullRender = fullRender
        self.compressionLevel = compressionLevel
        self.maxInFlight = max(1, framesInFlight ?? min(4, ProcessInfo.processInfo.activeProcessorCount - 1))
        layout = try Layout(output, frameCount: frameCount)
        switch layout.kind {
        case .single:
            break  // the AtomicFile is made with the frame
        case .folder(exists: true), .pattern:
            temporaryFolder = try Self.makeTemporaryFolder(in: layout.folder.path, name: "", output: output.path)
        case .folder(exists: false):
            let (parent, name) = layout.folder.parentAndName
            temporaryFolder = try Self.makeTemporaryFolder(in: parent, name: name, output: output.path)
        }
    }

    deinit {
        if state == .open || state == .failed { abort() }
    }

    /// The file the frame with timeline index `index` ends up in.
    public func path(forFrame index: Int) -> String {
        layout.path(forFrame: index, output: output)
    }

    /// Queues one frame for encoding; writes earlier ones whose encoding
    /// is done. Indices must increase.
    public func write(_ frame: RGBAImage, index: Int) throws {
        guard state == .open else {
            throw MediaError("output '\(output.path)': write after the output was \(state == .failed ? "abandoned after an error" : "closed")")
        }
        guard index > lastIndex else {
            throw MediaError("output '\(output.path)': frame \(index) arrived after frame \(lastIndex)")
        }
        if case .single = layout.kind, lastIndex >= 0 {
            state = .failed
            throw Layout.singleFileError(output.path, frames: nil)
        }
        lastIndex = index
        let job = EncodeJob(index: index)
        let level = compressionLevel
        DispatchQueue.global(qos: .userInitiated).async {
            job.result = Result { try ImageIO.encodePNG(frame, compressionLevel: level) }
            job.done.signal()
        }
        pending.append(job)
        while pending.count > maxInFlight { try writeOldest() }
    }

    /// Writes the remaining frames and moves everything into place.
    public func finish() throws {
        guard state == .open else {
            if state == .finished { return }
            throw MediaError("output '\(output.path)': finish after the output was \(state == .failed ? "abandoned after an error" : "aborted")")
        }
        while !pending.isEmpty { try writeOldest() }
        do {
            try moveIntoPlace()
            state = .finished
        } catch {
            state = .failed
            abort()
            throw error
        }
    }

    /// Drops everything written so far; the target stays as it was.
    public func abort() {
        guard state != .aborted, state != .finished else { return }
        state = .aborted
        pending.removeAll()  // background encodes finish and are dropped
        singleFile?.abort()
        singleFile = nil
        if let temporaryFolder {
            try? FileManager.default.removeItem(atPath: temporaryFolder)
            TemporaryPaths.remove(temporaryFolder)
            self.temporaryFolder = nil
        }
    }

    // MARK: - Internals

    /// One frame being encoded on a background thread.
    private final class EncodeJob: @unchecked Sendable {
        let index: Int
        let done = DispatchSemaphore(value: 0)
        var result: Result<[UInt8], Error>?  // written before `done` is signalled
        init(index: Int) { self.index = index }
    }

    /// Waits for the oldest encode and writes its file.
    private func writeOldest() throws {
        let job = pending.removeFirst()
        job.done.wait()
        do {
            let bytes = try job.result!.get()
            switch layout.kind {
            case .single:
                let file = try AtomicFile(target: output.path)
                singleFile = file
                try file.write(bytes)
            default:
                try writeFile(bytes, name: layout.names.fileName(job.index))
            }
            written.append(job.index)
        } catch {
            state = .failed
            throw error
        }
    }

    private func fail(_ what: String, _ code: Int32 = errno) -> MediaError {
        MediaError("output '\(output.path)': \(what): \(String(cString: strerror(code)))")
    }

    /// Creates a file in the temporary folder (0666 less the umask).
    private func writeFile(_ bytes: [UInt8], name: String) throws {
        let path = temporaryFolder! + "/" + name
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw fail("cannot create '\(name)'") }
        defer { close(fd) }
        if let e = bytes.withUnsafeBytes({ writeAll(fd, $0) }) { throw fail("cannot write '\(name)'", e) }
        // On disk before it can replace an old frame (a crash must not
        // leave empty files where good ones were).
        guard fdatasync(fd) == 0 || errno == EINVAL else { throw fail("cannot write '\(name)'") }
    }

    private static func makeTemporaryFolder(in parent: String, name: String, output: String) throws -> String {
        let path = (parent == "/" ? "" : parent) + "/.\(name)\(name.isEmpty ? "" : ".")wobble-tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // 0777 less the umask: if this folder becomes the target it already
        // has a folder's usual permissions.
        guard mkdir(path, 0o777) == 0 else {
            throw MediaError("output '\(output)': cannot create a temporary folder in '\(parent)': \(String(cString: strerror(errno)))")
        }
        TemporaryPaths.add(path)
        return path
    }

    private func moveIntoPlace() throws {
        if case .single = layout.kind {
            guard let file = singleFile else {
                throw MediaError("output '\(output.path)': no frame was written")
            }
            try file.commit()
            singleFile = nil
            return
        }
        guard let temporary = temporaryFolder else { return }
        let target = layout.folder.path
        if case .folder(exists: false) = layout.kind {
            if rename(temporary, target) == 0 {
                TemporaryPaths.remove(temporary)
                temporaryFolder = nil
                return
            }
            guard errno == EEXIST || errno == ENOTEMPTY || errno == EISDIR else {
                throw fail("cannot create the folder")
            }
            // Someone made the folder meanwhile: merge into it below.
        }
        for index in written {
            let name = layout.names.fileName(index)
            guard rename(temporary + "/" + name, layout.folder.joined(name)) == 0 else {
                throw fail("cannot move '\(name)' into place")
            }
        }
        if fullRender {
            let keep = Set(written)
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: target)) ?? []
            for name in entries {
                guard let index = layout.names.index(ofFileName: name), !keep.contains(index) else { continue }
                let path = layout.folder.joined(name)
                var info = stat()
                guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) != S_IFDIR else { continue }
                guard unlink(path) == 0 || errno == ENOENT else {
                    throw fail("cannot remove the stale frame '\(name)'")
                }
            }
        }
        rmdir(temporary)
        TemporaryPaths.remove(temporary)
        temporaryFolder = nil
    }
}
