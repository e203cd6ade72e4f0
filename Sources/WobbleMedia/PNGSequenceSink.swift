import Dispatch
import Foundation
import WobbleCore
import WobbleSystem

/// Where PNG frames go, as told by an `-o` path.
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
    /// `follow: false`: a link to a folder is not a folder (a name
    /// wobble-run made up is read by its name alone).
    public static func parse(_ path: String, follow: Bool = true) -> PNGOutput? {
        guard !path.isEmpty, !path.lowercased().hasSuffix(".gif") else { return nil }
        if path.hasSuffix("/") { return .directory(path) }
        if Posix.kind(path, follow: follow) == .directory { return .directory(path) }
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
        func isDirectory(_ path: String) -> Bool? {
            Posix.kind(path).map { $0 == .directory }
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
        return MediaError("output '\(given)': the clip \(count); write PNG frames to a folder ('\(stem)/') or a pattern ('\(stem)_%04d.png'), or make one animated PNG (--format apng)")
    }
}

/// Writes frames as PNG files: a folder (`frame_00000.png`, …), a printf
/// pattern (`out_%04d.png`), or one `.png` file for a one-frame clip.
///
/// All or nothing: frames go into a hidden temporary folder
/// (inside the target folder when it exists, so renames stay on one file
/// system, else beside it), registered with `TemporaryPaths`; every write,
/// fsync and close is checked. `finish()` then commits:
///
/// - a folder that did not exist appears whole, by one rename (with
///   0755-under-umask permissions);
/// - in an existing folder (a folder output or a pattern), the commit is a
///   transaction: first every name is checked (a frame name that is a
///   folder fails before anything changes); then each new frame is
///   exchanged with its old version (`renameat2(RENAME_EXCHANGE)`, so the
///   old file moves into the temporary folder) or moved in when it is new,
///   and, for a full render, each stale frame (a name the same pattern
///   would write, not written by this render) is moved into the temporary
///   folder too. If any step fails, the steps done are undone in reverse
///   and the folder is as it was. Only when all succeeded is the
///   temporary folder (now holding the old frames) removed. The plan is
///   written to a `CommitJournal` first, so a commit cut short by SIGKILL
///   or a crash is undone by the next run (`TemporaryName.removeLeftovers`). Other files
///   stay, and the folder itself keeps its identity (a mount point, a
///   folder other `--frames` slices write into at the same time, a shell's
///   current folder).
///
/// `abort()` leaves the target exactly as it was.
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
    private let fps: Double?
    private let maxInFlight: Int
    /// The temporary folder: its name in `homeFD`, its descriptor.
    private var temporary: (name: String, fd: Int32, token: TemporaryPaths.Token)?
    /// The folder holding the temporary folder (the target folder when it
    /// exists, else its parent), and its identity when opened.
    private var homeFD: Int32 = -1
    private var homeID: (dev: UInt64, ino: UInt64) = (0, 0)
    private var singleFile: AtomicFile?
    private var pending: [EncodeJob] = []
    /// The encoding threads, frame `i` on `encoders[i % count]` (each
    /// starts with its first frame; one that cannot encodes on the caller).
    private let encoders: [SerialWorker]
    private var written: [Int] = []
    private var bytes = 0
    /// The inode of each frame file written (by name), for the journal.
    private var inodes: [String: UInt64] = [:]
    private var lastIndex = -1
    /// The sound slice that goes beside the frames (`AudioSlice`): written
    /// into the temporary folder with them and committed by the same
    /// journal under the same lock, so the folder always holds one run's
    /// frames and that run's sound.
    private let soundSlice: (name: String, wav: [UInt8])?
    /// Files other than frames written into the temporary folder (the
    /// sound slice), committed with the frames.
    private var companions: [String] = []
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
    ///   - fps: the clip's frame rate, recorded in every file
    ///     (`PNGFrameRate`, a `tEXt` chunk) for `--assemble`; nil: none.
    ///   - soundSlice: the slice's WAV (`AudioSlice.name`, `AudioSlice.wav`)
    ///     committed with the frames into a folder; a full render then moves
    ///     the folder's other slices out as stale. A folder, FIFO, socket or
    ///     device at its name is refused before anything is replaced.
    /// - Throws: `MediaError` or `PosixError` naming the output path.
    public init(output: PNGOutput, fullRender: Bool, frameCount: Int? = nil,
                compressionLevel: Int = ImageIO.defaultPNGCompressionLevel,
                framesInFlight: Int? = nil, fps: Double? = nil, soundSlice: (name: String, wav: [UInt8])? = nil) throws {
        // Frames are encoded on background threads (`TaskBudget`: where too
        // few may start, the thread pool would wait for one forever).
        try TaskBudget.require(2, for: "writing PNG frames")
        try TaskBudget.requireDescriptors(8, for: "writing PNG frames")
        self.fps = fps
        self.soundSlice = soundSlice
        self.output = output
        self.fullRender = fullRender
        self.compressionLevel = compressionLevel
        self.maxInFlight = max(1, framesInFlight ?? min(4, ThisProcess.cores - 1))
        encoders = (0..<maxInFlight).map { _ in SerialWorker() }
        layout = try Layout(output, frameCount: frameCount)
        switch layout.kind {
        case .single:
            break  // the AtomicFile is made with the frame
        case .folder(exists: true), .pattern:
            try makeTemporaryFolder(in: layout.folder.path)
        case .folder(exists: false):
            try makeTemporaryFolder(in: layout.folder.parentAndName.parent)
        }
    }

    deinit {
        if state == .open || state == .failed { abort() }
        if homeFD >= 0 { Posix.closeQuietly(homeFD) }
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
        let level = compressionLevel, fps = self.fps
        encoders[index % encoders.count].async {
            job.result = Result {
                let png = try ImageIO.encodePNG(frame, compressionLevel: level)
                return fps.map { PNGFrameRate.insert($0, into: png) } ?? png
            }
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
        do {
            while !pending.isEmpty { try writeOldest() }
            if let slice = soundSlice, temporary != nil {
                try writeFile(slice.wav, name: slice.name)
                companions.append(slice.name)
            }
            try withCommitLock {
                try CommitWindow.run {
                    try moveIntoPlace()
                    state = .finished
                }
            }
        } catch {
            state = .failed
            abort()
            throw error
        }
    }

    /// Runs `body` holding the lock of the folder the frames go into
    /// (`FolderLock`), so that two runs committing into one folder take
    /// turns and it always holds one whole run's frames. The lock is on the
    /// frames folder's parent (the same folder whether or not the frames
    /// folder exists yet), or on the frames folder when its parent cannot
    /// be read. A single `.png` file is one rename and needs no lock.
    private func withCommitLock<T>(_ body: () throws -> T) throws -> T {
        if case .single = layout.kind { return try body() }
        let folder = layout.folder.path
        let exists = Posix.kind(folder) == .directory
        let parent = exists ? (folder == "/" ? "/" : folder + "/..") : layout.folder.parentAndName.parent
        let candidates = exists ? [parent, folder] : [parent]
        // A folder that vanished during the render: the commit's own check
        // says so (`checkHome`), with the message the user should see.
        guard candidates.contains(where: { Posix.kind($0) == .directory }) else { return try body() }
        return try FolderLock.withLock(candidates: candidates, shown: output.path, body)
    }

    public var bytesWritten: Int? { state == .finished ? bytes : nil }

    /// Drops everything written so far; the target stays as it was.
    public func abort() {
        guard state != .aborted, state != .finished else { return }
        state = .aborted
        pending.removeAll()  // background encodes finish and are dropped
        singleFile?.abort()
        singleFile = nil
        removeTemporaryFolder()
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
            guard let result = job.result else { throw MediaError("output '\(output.path)': frame \(job.index) was not encoded") }
            let bytes = try result.get()
            switch layout.kind {
            case .single:
                let file = try AtomicFile(target: output.path)
                singleFile = file
                try file.write(bytes)
            default:
                try writeFile(bytes, name: layout.names.fileName(job.index))
            }
            written.append(job.index)
            self.bytes += bytes.count
        } catch {
            state = .failed
            throw error
        }
    }

    /// Creates a file in the temporary folder (0666 less the umask), on the
    /// disk before it can replace an old frame (a crash must not leave
    /// empty files where good ones were).
    private func writeFile(_ bytes: [UInt8], name: String) throws {
        guard let temporary else { throw MediaError("output '\(output.path)': the output was closed") }
        let shown = layout.folder.joined(name)
        let fd = try Posix.openat(temporary.fd, name, O_WRONLY | O_CREAT | O_EXCL, 0o666, shown: shown)
        do {
            try Posix.write(fd, bytes, shown: shown)
            try Posix.fsync(fd, shown: shown)
            inodes[name] = UInt64(try Posix.fstat(fd, shown: shown).st_ino)
        } catch {
            Posix.closeQuietly(fd)
            throw error
        }
        try Posix.close(fd, shown: shown)
    }

    /// Makes the hidden temporary folder in `parent` (after removing what
    /// killed runs left there), with 0777 less the umask: if it becomes the
    /// target it already has a folder's usual permissions.
    private func makeTemporaryFolder(in parent: String) throws {
        let home = try Posix.open(parent, O_RDONLY | O_DIRECTORY, shown: parent)
        homeFD = home
        let st = try Posix.fstat(home, shown: parent)
        homeID = (UInt64(st.st_dev), UInt64(st.st_ino))
        TemporaryName.removeLeftovers(in: home, shown: parent)
        let name = TemporaryName.make()
        try Posix.mkdir(home, name, 0o777, shown: output.path)
        let token = TemporaryPaths.add(dir: home, name: name)
        do {
            let fd = try Posix.openat(home, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, shown: output.path)
            temporary = (name, fd, token)
        } catch {
            Posix.removeTree(home, name)
            TemporaryPaths.remove(token)
            throw error
        }
    }

    private func removeTemporaryFolder() {
        guard let t = temporary else { return }
        temporary = nil
        Posix.closeQuietly(t.fd)
        Posix.removeTree(homeFD, t.name)
        TemporaryPaths.remove(t.token)
    }

    /// The folder that held the temporary folder must still be where it was.
    private func checkHome(_ path: String) throws {
        guard let now = try Posix.fileStatus(path), UInt64(now.st_dev) == homeID.dev, UInt64(now.st_ino) == homeID.ino else {
            throw MediaError("output '\(output.path)': the folder '\(path)' was moved or removed during the render")
        }
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
        guard let t = temporary else { return }
        try Posix.fsync(t.fd, shown: output.path)
        let target = layout.folder.path
        if case .folder(exists: false) = layout.kind {
            let (parent, name) = layout.folder.parentAndName
            try checkHome(parent)
            do {
                try Posix.rename(homeFD, t.name, homeFD, name, flags: Posix.renameNoReplace, shown: output.path)
                Posix.closeQuietly(t.fd)
                temporary = nil
                TemporaryPaths.remove(t.token)
                try? Posix.fsync(homeFD, shown: parent)
                return
            } catch let e as PosixError where e.code == EEXIST || e.code == ENOTEMPTY {
                // Someone made the folder meanwhile: merge into it below.
            }
            let fd = try Posix.open(target, O_RDONLY | O_DIRECTORY, shown: output.path)
            defer { Posix.closeQuietly(fd) }
            try merge(into: fd, named: name)
        } else {
            try checkHome(target)
            try merge(into: homeFD, named: "")
        }
        removeTemporaryFolder()
    }

    /// One undoable step of the commit.
    private enum Step {
        /// `name` was exchanged with the old file (now in the temporary folder).
        case exchanged(String)
        /// `name` was new: moved in from the temporary folder.
        case added(String)
        /// The old `name` moved into the temporary folder as `aside`
        /// (a stale frame, or the old frame where exchange is unsupported).
        case movedAside(String, aside: String)
    }

    /// The transaction into the existing folder `dir` (see the type's doc);
    /// `named`: its name in the temporary folder's folder ("" when it is
    /// that folder itself), for the journal.
    private func merge(into dir: Int32, named: String) throws {
        guard let t = temporary else { return }
        let names = written.map { layout.names.fileName($0) } + companions
        // 1. Check every name before changing anything.
        var existing = Set<String>()
        for name in companions {
            // A name wobble-run chose (`OutputName.madeUp`): a link there is
            // replaced; what is not a file is refused, never opened.
            let shown = layout.folder.joined(name)
            guard let st = try Posix.linkStatus(at: dir, name, shown: shown) else { continue }
            let kind = FileKind(st)
            switch kind {
            case .regular, .link: break
            default: throw MediaError("sound slice '\(shown)': \(OutputName.notAFile(kind))")
            }
        }
        for name in names {
            let shown = layout.folder.joined(name)
            guard let st = try Posix.linkStatus(at: dir, name, shown: shown) else { continue }
            if FileKind(st) == .directory {
                throw MediaError("output '\(output.path)': '\(shown)' is a folder, not a frame file; nothing was replaced")
            }
            existing.insert(name)
        }
        var stale: [String] = []
        if fullRender {
            let keep = Set(written)
            for name in try Posix.list(dir, shown: layout.folder.shown) {
                let frame = layout.names.index(ofFileName: name).map { !keep.contains($0) } ?? false
                // The sound slices of an older clip go with its frames.
                let slice = soundSlice != nil && AudioSlice.index(ofName: name) != nil && !companions.contains(name)
                guard frame || slice,
                      let st = try Posix.linkStatus(at: dir, name, shown: name), FileKind(st) != .directory else { continue }
                stale.append(name)
            }
        }
        // 2. The plan, on the disk before the first rename: a later run
        //    undoes a commit that a SIGKILL or a crash cut short.
        var asides: [String: String] = [:]
        var entries: [CommitJournal.Entry] = []
        for name in names {
            let inode = inodes[name] ?? 0
            if existing.contains(name) {
                let a = ".old-\(asides.count + 1)"
                asides[name] = a
                entries.append(.replace(name: name, inode: inode, aside: a))
            } else {
                entries.append(.add(name: name, inode: inode))
            }
        }
        for name in stale {
            let a = ".old-\(asides.count + 1)"
            asides[name] = a
            entries.append(.stale(name: name, aside: a))
        }
        try CommitJournal.write(entries, target: named, into: t.fd, shown: output.path)
        // 3. Apply, logging each step; undo them all on the first failure.
        var done: [Step] = []
        do {
            for name in names {
                let shown = layout.folder.joined(name)
                if existing.contains(name) {
                    do {
                        try Posix.rename(t.fd, name, dir, name, flags: Posix.renameExchange, shown: shown)
                        done.append(.exchanged(name))
                    } catch let e as PosixError where e.code == EINVAL || e.code == ENOSYS {
                        // No RENAME_EXCHANGE here: move the old one aside first.
                        let a = asides[name] ?? ".old"
                        try Posix.rename(dir, name, t.fd, a, flags: Posix.renameNoReplace, shown: shown)
                        done.append(.movedAside(name, aside: a))
                        try Posix.rename(t.fd, name, dir, name, flags: Posix.renameNoReplace, shown: shown)
                        done.append(.added(name))
                    }
                } else {
                    try Posix.rename(t.fd, name, dir, name, flags: Posix.renameNoReplace, shown: shown)
                    done.append(.added(name))
                }
            }
            for name in stale {
                let a = asides[name] ?? ".old"
                try Posix.rename(dir, name, t.fd, a, flags: Posix.renameNoReplace, shown: layout.folder.joined(name))
                done.append(.movedAside(name, aside: a))
            }
            do { try Posix.fsync(dir, shown: layout.folder.shown) } catch let e as PosixError where e.code == EINVAL {}
            // Done: the journal goes first, so that nothing undoes this
            // commit while the old frames are being removed.
            try? Posix.unlink(t.fd, CommitJournal.name, shown: output.path)
            try? Posix.fsync(t.fd, shown: output.path)
        } catch {
            defer { try? Posix.unlink(t.fd, CommitJournal.name, shown: output.path) }
            var lost = 0
            for step in done.reversed() {
                do {
                    switch step {
                    case .exchanged(let name):
                        try Posix.rename(t.fd, name, dir, name, flags: Posix.renameExchange, shown: name)
                    case .added(let name):
                        try Posix.rename(dir, name, t.fd, name, flags: Posix.renameNoReplace, shown: name)
                    case .movedAside(let name, let a):
                        try Posix.rename(t.fd, a, dir, name, flags: Posix.renameNoReplace, shown: name)
                    }
                } catch {
                    lost += 1
                }
            }
            if lost > 0 {
                throw MediaError("output '\(output.path)': \(error); \(lost) of the changes could not be undone")
            }
            throw error
        }
    }
}
