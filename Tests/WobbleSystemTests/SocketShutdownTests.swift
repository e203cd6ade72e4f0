import Foundation
import WobbleSystem
import XCTest

/// `Posix.endReads`, what the page's server does to a connection whose
/// request head is too slow to come: a thread waiting to read from it
/// wakes at once to the end of its stream, and what is written to it
/// still reaches the peer (a request whose head was just read is still
/// answered).
final class SocketShutdownTests: XCTestCase {
    /// A connected pair of TCP sockets on the loopback: (client, server).
    private func pair() throws -> (Int32, Int32) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(listener, 0)
        defer { close(listener) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, len) } }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(listener, 4), 0)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &len) } }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let c = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        XCTAssertEqual(c, 0)
        let server = accept(listener, nil, nil)
        XCTAssertGreaterThanOrEqual(server, 0)
        return (client, server)
    }

    func testEndReadsWakesAWaitingReaderAndStillSends() throws {
        let (client, server) = try pair()
        defer { close(client); close(server) }
        // A reader waiting on the server's socket (nothing comes: a slow head).
        let woke = expectation(description: "the reader wakes")
        let got = ManagedAtomicInt()
        Thread.detachNewThread {
            var buf = [UInt8](repeating: 0, count: 16)
            let n = buf.withUnsafeMutableBytes { recv(server, $0.baseAddress, $0.count, 0) }
            got.set(n)
            woke.fulfill()
        }
        usleep(200_000)   // the reader is blocked in recv by now
        Posix.endReads(server)
        wait(for: [woke], timeout: 5)
        XCTAssertEqual(got.get(), 0, "the end of the stream")
        // The writing half still works: the peer gets the answer.
        let answer = Array("HTTP/1.1 200 OK\r\n\r\n".utf8)
        XCTAssertEqual(answer.withUnsafeBytes { send(server, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, answer.count)
        var tv = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var buf = [UInt8](repeating: 0, count: 64)
        let n = buf.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
        XCTAssertEqual(Array(buf.prefix(max(0, n))), answer)
        // Hung up both ways (what the server did before), the answer fails.
        let (c2, s2) = try pair()
        defer { close(c2); close(s2) }
        Posix.hangUp(s2)
        XCTAssertEqual(answer.withUnsafeBytes { send(s2, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }, -1)
    }
}

/// An Int set on one thread and read on another.
private final class ManagedAtomicInt: @unchecked Sendable {
    private let lock = NSLock()
    private var value = -2
    func set(_ v: Int) { lock.lock(); value = v; lock.unlock() }
    func get() -> Int { lock.lock(); defer { lock.unlock() }; return value }
}
