#if canImport(Glibc)
import Glibc
#endif

/// A file's content fingerprint: its size and the 64-bit FNV-1a of its
/// bytes (to tell whether an input changed, not to resist an adversary).
public struct ContentHash: Equatable, Sendable {
    public var size: Int
    public var hash: UInt64

    public init(size: Int, hash: UInt64) {
        self.size = size
        self.hash = hash
    }

    /// The FNV-1a of `bytes`, continued from `seed`.
    public static func fnv(_ bytes: some Sequence<UInt8>, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var h = seed
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        return h
    }

    /// The fingerprint of the regular file at `path` (links followed), or
    /// nil when there is none or it cannot be read.
    public static func of(file path: String) -> ContentHash? {
        guard let fd = try? Posix.open(path, O_RDONLY | O_CLOEXEC, shown: path) else { return nil }
        defer { close(fd) }
        guard let st = try? Posix.fstat(fd, shown: path), FileKind(st) == .regular else { return nil }
        var h = fnv([])
        var size = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            size += n
            h = buffer.withUnsafeBufferPointer { fnv($0[0..<n], seed: h) }
        }
        return ContentHash(size: size, hash: h)
    }
}
