import WobbleStudioCore

/// The studio core's audio device in `serve`: the page plays the
/// soundtrack itself (WebAudio, on its own playhead), so the core's player
/// only keeps the track (sent to the pages as the binary `sound` message)
/// and the mute (`M`, in the snapshot). Nothing is heard in the server and
/// its clock is the wall clock.
final class PageAudioSink: AudioSink {
    func play(_ track: AudioTrack, from position: Int) {}
    func stop() {}
    func heard(at now: Double) -> Double? { nil }
    var muted = false
    var name: String { "the page (WebAudio)" }
}

extension StudioProtocol {
    /// The binary `sound` message of the soundtrack (`track` nil: none, an
    /// empty payload): `id` (a new one per track), `rate` (samples per
    /// second), `start` (the clip sample of the sound's first sample,
    /// negative when its start is cut), `length` (the clip's length in
    /// samples: the sound loops there with the clip), then the mono samples
    /// as little-endian float32.
    static func soundMessage(_ track: AudioTrack?, id: Int) -> [UInt8] {
        guard let track else { return binary(header: ["id": 0, "rate": 0, "start": 0, "length": 0], type: "sound", payload: []) }
        var payload = [UInt8](repeating: 0, count: track.samples.count * 4)
        track.samples.withUnsafeBufferPointer { s in
            payload.withUnsafeMutableBytes { b in
                for (i, v) in s.enumerated() { b.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: i * 4, as: UInt32.self) }
            }
        }
        return binary(header: ["id": id, "rate": track.rate, "start": track.start, "length": track.length], type: "sound", payload: payload)
    }

    /// The keys' help (`StudioKeyMap.help`, the window's `F1` sheet), sent
    /// to a page when it connects: `{"type": "keys", "keys": [{"keys", "what"}]}`.
    struct KeysMessage {
        var keys: [KeyHelp]
        var json: JSONValue {
            .object(["type": "keys", "keys": .array(keys.map { .object(["keys": JSONValue($0.keys), "what": JSONValue($0.what)]) })])
        }
    }
}
