#if canImport(Glibc)
import Glibc
#endif

/// Where an output's bytes go: the one contract every frame sink writes
/// through (in the way gifski's `Writer` takes any `Write`). Three kinds:
///
/// - `AtomicFile`: a file written beside its target and renamed over it by
///   `commit()`; nothing is left behind by `abort()` or a failure.
/// - `DescriptorStream`: a pipe, terminal or device (`-o -`,
///   `/dev/stdout`, a FIFO), written in place as the bytes come.
/// - `MemoryStream`: bytes kept in memory (a preset's tries).
///
/// The same writes give the same bytes in all three. `ByteStreams.open`
/// picks the kind an output path calls for.
public protocol ByteStream: AnyObject {
    /// The output as the user named it (messages name it).
    var shown: String { get }
    /// Appends bytes; a write that fails throws (a full disk, a reader gone).
    func write(_ bytes: UnsafeRawBufferPointer) throws
    /// Completes the output: a file moves into place, a descriptor is
    /// closed, memory is sealed. On failure the output is dropped as by
    /// `abort()`.
    func commit() throws
    /// Drops what was written where it can (a file's temporary file, the
    /// memory); a pipe keeps what its reader already took. Idempotent.
    func abort()
    /// The bytes the output holds after a successful `commit()`; nil before.
    var committedSize: Int? { get }
    /// A seekable descriptor whose whole content becomes the output (an
    /// atomic file's temporary file), for a writer that must seek, such as
    /// ffmpeg writing a container; nil where bytes must go through `write`.
    var seekableDescriptor: Int32? { get }
    /// True when the bytes are kept in memory: scratch space made for this
    /// output (`ScratchFile`) should then be memory too.
    var inMemory: Bool { get }
}

extension ByteStream {
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    public var seekableDescriptor: Int32? { nil }
    public var inMemory: Bool { false }
}

/// The stream an output path calls for (`OutputTarget`'s policy): an
/// `AtomicFile` for a file, a `DescriptorStream` for `-`, a pipe, a
/// terminal or a device.
public enum ByteStreams {
    /// Opens the output `path` (`-` is standard output). Throws
    /// `MediaError` for a refused target, `PosixError` when the system says no.
    /// `name`: who chose the path (`OutputName`; a made-up name is never
    /// followed through a link).
    public static func open(_ path: String, name chosen: OutputName = .given) throws -> ByteStream {
        switch try OutputTarget.resolve(path, what: "output '\(path)'", name: chosen) {
        case .stream(let fd):
            return DescriptorStream(fd: fd, shown: path)
        case .file(let folder, let name):
            return try AtomicFile(target: path, folder: folder, name: name, noReplace: chosen == .fresh)
        }
    }
}

/// A pipe, terminal or device written in place: each write goes straight
/// to the descriptor (checked: a closed reader or `/dev/full` is an
/// error), and `commit()` closes it.
public final class DescriptorStream: ByteStream {
    public let shown: String
    private var fd: Int32
    private let owned: Bool
    private var written = 0
    public private(set) var committedSize: Int?

    /// Writes to `fd`; with `owned` the stream closes it on `commit()` or
    /// `abort()` (else the caller does, after).
    public init(fd: Int32, shown: String, owned: Bool = true) {
        self.fd = fd
        self.shown = shown
        self.owned = owned
    }

    deinit { abort() }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard fd >= 0 else { throw MediaError("output '\(shown)': written after it was closed") }
        try Posix.write(fd, bytes, shown: shown)
        written += bytes.count
    }

    public func commit() throws {
        guard fd >= 0 else { return }
        let fd = self.fd
        self.fd = -1
        if owned { try Posix.close(fd, shown: shown) }
        committedSize = written
    }

    public func abort() {
        guard fd >= 0 else { return }
        if owned { Posix.closeQuietly(fd) }
        fd = -1
    }
}

/// An output kept in memory: `bytes` is what was written. With a cap,
/// an output that grows past it keeps only its size (a preset's try over
/// the byte limit is of no use beyond its size, and must not hold a whole
/// lossless file in memory).
public final class MemoryStream: ByteStream {
    public let shown: String
    /// Everything written so far (emptied by `abort()`, and once the
    /// output grew past the cap).
    public private(set) var bytes: [UInt8] = []
    /// The bytes written, kept or not.
    public private(set) var count = 0
    private let cap: Int
    private var closed = false
    public private(set) var committedSize: Int?

    /// `shown` names the output in messages; `cap`: the most bytes kept.
    public init(shown: String = "memory", cap: Int = Int.max) {
        self.shown = shown
        self.cap = cap
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !closed else { throw MediaError("output '\(shown)': written after it was closed") }
        count += bytes.count
        if count <= cap {
            self.bytes.append(contentsOf: bytes)
        } else if !self.bytes.isEmpty {
            self.bytes = []
        }
    }

    /// True when the output grew past the cap (its bytes were dropped).
    public var overflowed: Bool { count > cap }

    public func commit() throws {
        guard !closed else { return }
        closed = true
        committedSize = count
    }

    public func abort() {
        guard committedSize == nil else { return }
        closed = true
        bytes = []
    }

    /// Takes the bytes out (the stream keeps none).
    public func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }

    public var inMemory: Bool { true }
}

/// A private seekable file for a writer that must seek back (ffmpeg
/// finishing a container), for an output that cannot seek: an anonymous
/// file in memory (`memfd_create`) for a memory output, else an unnamed
/// file in `TMPDIR` (created and unlinked at once: nothing to leave
/// behind), or memory where `TMPDIR` cannot hold one (not there, not
/// writable, or under `roomNeeded` free). Once complete it is
/// copied into the output (`copy(into:)`).
public final class ScratchFile {
    /// The descriptor (read and write); a child may write it as its own.
    public private(set) var fd: Int32

    /// The free space a `TMPDIR` must have to hold a scratch file (64 MiB).
    public static let roomNeeded = 64 << 20

    public init(inMemory: Bool, shown: String) throws {
        if !inMemory, let fd = ScratchFile.unnamedTemporary() {
            self.fd = fd
        } else {
            fd = try Posix.memoryFile(shown: shown)
        }
    }

    deinit { close() }

    /// The file's size.
    public func size(shown: String) throws -> Int {
        Int(try Posix.fstat(fd, shown: shown).st_size)
    }

    /// Appends the whole file to `stream`, in pieces of 1 MiB.
    public func copy(into stream: ByteStream) throws {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = 0
        while true {
            let n = try buffer.withUnsafeMutableBytes { try Posix.pread(fd, into: $0, at: offset, shown: stream.shown) }
            if n == 0 { break }
            try buffer.withUnsafeBytes { try stream.write(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
            offset += n
        }
    }

    public func close() {
        if fd >= 0 { Posix.closeQuietly(fd) }
        fd = -1
    }

    private static func unnamedTemporary() -> Int32? {
        let folder = Environment.value("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        guard let dir = try? Posix.open(folder, O_RDONLY | O_DIRECTORY, shown: folder) else { return nil }
        defer { Posix.closeQuietly(dir) }
        // A full or tiny TMPDIR would fail the video halfway: memory instead.
        if let free = Posix.freeBytes(dir), free < roomNeeded { return nil }
        let name = TemporaryName.make()
        guard let fd = try? Posix.openat(dir, name, O_RDWR | O_CREAT | O_EXCL, 0o600, shown: folder) else { return nil }
        do {
            try Posix.unlink(dir, name, shown: folder)
        } catch {
            Posix.closeQuietly(fd)
            return nil
        }
        return fd
    }
}

/// A private folder for files a child process must find by name (ffmpeg's
/// two-pass statistics: it names the file itself): made in `TMPDIR` (else
/// /tmp) with a temporary name (`TemporaryName`) and mode 0700, and
/// registered with `TemporaryPaths`, so it goes with everything in it on
/// `remove()` (and on deinit), when a signal stops the run, or, left by a
/// killed run, at the next one's start (`TemporaryName.removeLeftovers`).
public final class ScratchFolder {
    /// The folder's path (the files in it are named by the caller).
    public let path: String
    private var home: Int32
    private let name: String
    private var token: TemporaryPaths.Token?

    /// Makes the folder; throws `MediaError` saying why where `TMPDIR` has
    /// no room for one (not there, not writable, under `room` bytes free).
    public init(room: Int = ScratchFile.roomNeeded) throws {
        let folder = Environment.value("TMPDIR").flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        let shown = "the temporary folder '\(PathBytes.display(folder))'"
        let home: Int32
        do {
            home = try Posix.open(folder, O_RDONLY | O_DIRECTORY, shown: folder)
        } catch {
            throw MediaError("\(shown) cannot be opened: \(error)")
        }
        if let free = Posix.freeBytes(home), free < room {
            Posix.closeQuietly(home)
            throw MediaError("\(shown) has only \(free >> 20) MiB free")
        }
        TemporaryName.removeLeftovers(in: home, shown: folder)
        let name = TemporaryName.make()
        do {
            try Posix.mkdir(home, name, 0o700, shown: folder)
        } catch {
            Posix.closeQuietly(home)
            throw MediaError("\(shown): no private folder could be made in it: \(error)")
        }
        self.home = home
        self.name = name
        token = TemporaryPaths.add(dir: home, name: name)
        // A relative TMPDIR starts "./": a child that parses its paths as
        // URLs (ffmpeg) must not read "a:b" as the protocol "a".
        path = (folder.hasPrefix("/") ? "" : "./") + (folder.hasSuffix("/") ? folder : folder + "/") + name
    }

    deinit { remove() }

    /// The size in bytes of the file `name` in the folder, or nil where it
    /// is not there (or the folder is removed).
    public func size(of name: String) -> Int? {
        guard token != nil, let fd = try? Posix.openat(home, self.name + "/" + name, O_RDONLY, shown: name) else { return nil }
        defer { Posix.closeQuietly(fd) }
        return (try? Posix.fstat(fd, shown: name)).map { Int($0.st_size) }
    }

    /// Removes the folder and everything in it (once; later calls do nothing).
    public func remove() {
        guard let token else { return }
        self.token = nil
        Posix.removeTree(home, name)
        TemporaryPaths.remove(token)
        Posix.closeQuietly(home)
        home = -1
    }
}
