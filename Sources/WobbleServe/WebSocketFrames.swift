/// A client's WebSocket frames, read from the bytes of its connection under
/// RFC 6455's rules for a server: every frame masked, no RSV bit set (no
/// extension is agreed in the handshake), known opcodes only, control
/// frames whole and at most 125 bytes, lengths in their shortest-free
/// 63 bits, and no message larger than the server reads. A frame that
/// breaks a rule is a `Violation` with the close status to send (1002 for
/// the protocol's rules, 1009 for a message too large), read no further.
struct WebSocketFrames {
    /// One frame, unmasked.
    struct Frame: Equatable {
        var fin: Bool
        var opcode: UInt8
        var payload: [UInt8]
    }

    /// Why the connection is closed: the status its close frame carries and one line.
    struct Violation: Error, Equatable {
        var status: UInt16
        var why: String
    }

    static let continuation: UInt8 = 0, text: UInt8 = 1, binary: UInt8 = 2, close: UInt8 = 8, ping: UInt8 = 9, pong: UInt8 = 10

    /// The largest payload read (a larger frame is refused by its header, unread).
    let maxPayload: Int
    private var buffer: [UInt8] = []
    private var start = 0

    init(maxPayload: Int) {
        self.maxPayload = maxPayload
    }

    /// Bytes as they came from the connection.
    mutating func feed<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        if start > 0 && start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame; nil while its bytes have not all come.
    mutating func next() throws(Violation) -> Frame? {
        let b = buffer[start...]
        guard b.count >= 2 else { return nil }
        let b0 = b[start], b1 = b[start + 1]
        if b0 & 0x70 != 0 {
            throw Violation(status: 1002, why: "a frame with reserved bits set (RSV \(b0 >> 4 & 7); no extension was agreed)")
        }
        guard b1 & 0x80 != 0 else { throw Violation(status: 1002, why: "an unmasked frame (a client masks every frame)") }
        let opcode = b0 & 0x0F, fin = b0 & 0x80 != 0
        guard [Self.continuation, Self.text, Self.binary, Self.close, Self.ping, Self.pong].contains(opcode) else {
            throw Violation(status: 1002, why: "an unknown opcode \(opcode)")
        }
        let short = Int(b1 & 0x7F)
        if opcode >= 8 {
            guard fin else { throw Violation(status: 1002, why: "a fragmented control frame") }
            guard short <= 125 else { throw Violation(status: 1002, why: "a control frame of more than 125 bytes") }
        }
        var header = 2
        var length = short
        if short == 126 {
            guard b.count >= 4 else { return nil }
            length = Int(b[start + 2]) << 8 | Int(b[start + 3])
            header = 4
        } else if short == 127 {
            guard b.count >= 10 else { return nil }
            var n: UInt64 = 0
            for k in 2 ..< 10 { n = n << 8 | UInt64(b[start + k]) }
            guard n >> 63 == 0 else { throw Violation(status: 1002, why: "a frame length with its top bit set") }
            guard n <= UInt64(maxPayload) else { throw Violation(status: 1009, why: "a message of \(n) bytes (at most \(maxPayload))") }
            length = Int(n)
            header = 10
        }
        guard length <= maxPayload else { throw Violation(status: 1009, why: "a message of \(length) bytes (at most \(maxPayload))") }
        guard b.count >= header + 4 + length else { return nil }
        let mask = Array(b[(start + header) ..< (start + header + 4)])
        let body = start + header + 4
        var payload = [UInt8](repeating: 0, count: length)
        for k in 0 ..< length { payload[k] = buffer[body + k] ^ mask[k & 3] }
        start = body + length
        return Frame(fin: fin, opcode: opcode, payload: payload)
    }

    /// A close frame's payload: the status, big-endian.
    static func closePayload(_ status: UInt16) -> [UInt8] { [UInt8(status >> 8), UInt8(status & 0xFF)] }

    /// Whether a close frame may carry `status` (RFC 6455 7.4): 1000–1003,
    /// 1007–1014 and 3000–4999. 1004–1006 and 1015 are reserved (1005 and
    /// 1006 say "none" and "abnormal" locally), the rest is unassigned.
    static func isSendableStatus(_ status: UInt16) -> Bool {
        (1000...1003).contains(status) || (1007...1014).contains(status) || (3000...4999).contains(status)
    }
}
