import Foundation
import WobbleCore
import WobbleStudioCore

/// The browser studio's messages over its WebSocket (JSON text, one object
/// per message, its kind in `type`), and the two binary messages (the
/// image's pixels, a shape's displacement field for one grid peak): never
/// rendered frames. The page draws every frame itself, with the renderer's
/// shaders, from `SceneMessage`.
public enum StudioProtocol {
    /// A point as `[x, y]` (image pixels).
    public typealias XY = [Double]

    /// The four corners and the center of a sketch; `center` nil: the mean
    /// of the corners (not assigned).
    public struct Points: Codable, Sendable, Equatable {
        public var lt: XY, rt: XY, rb: XY, lb: XY
        public var center: XY?

        public init(_ p: SketchPoints) {
            lt = [p.lt.x, p.lt.y]; rt = [p.rt.x, p.rt.y]; rb = [p.rb.x, p.rb.y]; lb = [p.lb.x, p.lb.y]
            center = p.center.map { [$0.x, $0.y] }
        }

        /// The sketch points, or nil when a point is not two finite numbers.
        public var sketchPoints: SketchPoints? {
            func pt(_ a: XY?) -> Point? {
                guard let a, a.count == 2, a[0].isFinite, a[1].isFinite, abs(a[0]) < 1e7, abs(a[1]) < 1e7 else { return nil }
                return Point(a[0], a[1])
            }
            guard let a = pt(lt), let b = pt(rt), let c = pt(rb), let d = pt(lb) else { return nil }
            if center != nil, pt(center) == nil { return nil }
            return SketchPoints(lt: a, rt: b, rb: c, lb: d, center: pt(center))
        }
    }

    /// One sketch of the scene with its handles: which call made it (`kind`
    /// "call" with the 0-based call `index`, or "added"), its local's name,
    /// its line, whether a drag may edit it (else `locked` says where it is
    /// computed), its points as the edits have them and its parameters.
    public struct Sketch: Codable, Sendable, Equatable {
        public var kind: String
        public var index: Int
        public var name: String?
        public var line: Int?
        public var editable: Bool
        public var locked: String?
        public var points: Points
        public var motion: String
        public var strength: Double
        public var duration: Double
        public var pin: String?
    }

    /// The scene as the page draws it (sent on connect and after every run):
    /// the clip's size and timing, the sketches, warnings and the last
    /// error (the timeline's ticks are the studio snapshot's). The regions' per-frame state comes just before it, as the
    /// binary `states` message (`float64Payload`):
    ///
    /// `frameCount`, then per frame the number of regions that move a
    /// pixel, then per region, in `prepare` order, the length of its entry
    /// and the entry `[shape id, k, t, direction x, direction y, swing,
    /// cutout id]` (cutout id 0: a plain region; else the binary `cutout`
    /// message with that id, sent before the states, has its layers),
    /// then for each borderline pixel whose settled `m` differs from the
    /// blend its index in the box and its `m`. The field `Shaders/wobble.frag`
    /// reads (`u_geometry`) is `a + t·(b − a)` (floats) of the shape's binary
    /// `field` messages `k` (a) and `k + 1` (b), with those pixels set
    /// (`ShapeProfile.blend`). The fields of the frame the page shows come
    /// before the states, the others after the scene.
    public struct SceneMessage: Codable, Sendable {
        public var type = "scene"
        /// Counts successful runs of the session.
        public var generation: Int
        /// The `seq` of the last page message this run includes (0: none).
        public var answers: Int
        /// The scene file's name.
        public var scene: String
        /// The image's pixels come as a binary `image` message with this
        /// stamp (sent before the first scene that uses it).
        public var imageStamp: Int
        /// The image file in the scene's folder, `/files/NAME` (nil: the
        /// image is not in the folder, e.g. `--image` elsewhere).
        public var imageURL: String?
        public var width: Int
        public var height: Int
        public var fps: Double
        public var frameCount: Int
        public var duration: Double
        /// `overlap()` and `edges()`.
        public var overlap: String
        public var edges: String
        public var sketches: [Sketch]
        public var warnings: [String]
        /// The last run's error (the clip is then the last good one).
        public var error: String?
        /// Whether there are edits not written to the scene file.
        public var unsaved: Bool
        /// Pokes and shakes performed so far.
        public var performed: Int
        /// What the page may not draw as the renderer does.
        public var notes: [String]
        /// The ids of the cutout layers the frames use (the page forgets
        /// the others).
        public var cutouts: [Int]
    }

    /// A message from the page: the frame it shows (`frame`: where a poke,
    /// a selection or an added region is), then what it asks, in this
    /// order: `command` or `commands` (the studio core's commands, as
    /// Swift's Codable writes them: `{"togglePlay": {}}`,
    /// `{"seek": {"frame": 5}}`, `{"pokeBegin": {"_0": {"x": 20, "y": 15}}}`),
    /// a `key` pressed (the window's key map makes it a command in the
    /// studio's state now) and `text` typed (a name's characters, a
    /// chooser row's digit). `seq` numbers it for `SceneMessage.answers`.
    package struct PageMessage: Decodable, Sendable {
        package var seq: Int?
        package var frame: Int?
        package var command: StudioCommand?
        package var commands: [StudioCommand]
        package var key: KeyPress?
        package var text: String?

        package struct KeyPress: Codable, Sendable {
            package var name: StudioKey
            package var shift: Bool?
            package var ctrl: Bool?
            /// Where `A` adds a region (image pixels; nil: the middle of the image).
            package var at: Point?
        }

        private enum CodingKeys: String, CodingKey { case seq, frame, command, commands, key, text }

        package init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            seq = try c.decodeIfPresent(Int.self, forKey: .seq)
            frame = try c.decodeIfPresent(Int.self, forKey: .frame)
            let one = try c.decodeIfPresent(StudioCommand.self, forKey: .command)
            commands = (one.map { [$0] } ?? []) + (try c.decodeIfPresent([StudioCommand].self, forKey: .commands) ?? [])
            key = try c.decodeIfPresent(KeyPress.self, forKey: .key)
            text = try c.decodeIfPresent(String.self, forKey: .text)
        }
    }

    /// The largest number a page message may carry (pixels, frames, seconds).
    package static let largestNumber = 1e7
    /// The most commands one page message may carry.
    package static let mostCommands = 1000

    /// A page message read, or why not (one line).
    package static func decode(_ text: String) -> Result<PageMessage, Refusal> {
        let shown = HTTPServer.printable(String(text.prefix(80)))
        guard let data = text.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) else {
            return .failure(Refusal("not a studio message (JSON): \(shown)"))
        }
        // Every number within bounds (a point at 1e308 is no pixel).
        func inBounds(_ v: Any) -> Bool {
            switch v {
            case let d as [String: Any]: return d.values.allSatisfy(inBounds)
            case let a as [Any]: return a.allSatisfy(inBounds)
            case let n as NSNumber:
                return n.doubleValue.isFinite && abs(n.doubleValue) <= largestNumber
            default: return true
            }
        }
        guard inBounds(object) else { return .failure(Refusal("a number beyond ±\(Int(largestNumber)): \(shown)")) }
        let m: PageMessage
        do {
            m = try JSONDecoder().decode(PageMessage.self, from: data)
        } catch DecodingError.dataCorrupted(let c), DecodingError.keyNotFound(_, let c), DecodingError.typeMismatch(_, let c),
                DecodingError.valueNotFound(_, let c) {
            let at = c.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return .failure(Refusal("not a studio message\(at.isEmpty ? "" : " at \(at)"): \(shown)"))
        } catch {
            return .failure(Refusal("not a studio message: \(shown)"))
        }
        if let f = m.frame, f < 0 { return .failure(Refusal("frame \(f): a frame is 0 or more")) }
        if m.commands.count > mostCommands { return .failure(Refusal("\(m.commands.count) commands in one message (at most \(mostCommands))")) }
        if m.commands.isEmpty, m.key == nil, m.text == nil {
            return .failure(Refusal("a studio message has a command, commands, a key or text: \(shown)"))
        }
        return .success(m)
    }

    /// Why a page message is refused (one line).
    package struct Refusal: Error {
        package var message: String
        init(_ message: String) { self.message = message }
    }

    /// The studio core's snapshot (sent after every change): what the page
    /// shows besides the frames (inspector, ticks, status, warnings, the
    /// chooser, recording).
    package struct StudioMessage: Encodable {
        package var type = "studio"
        package var studio: StudioSnapshot
    }

    /// An export ended: its result line (against the platform's limits for
    /// a preset), whether it is good, and the file to download (`/files/NAME`).
    public struct ExportedMessage: Codable, Sendable {
        public var type = "exported"
        public var ok: Bool
        public var message: String
        public var url: String?
    }

    /// The answer to `save`: what was written, or why not (`ok` false).
    public struct SavedMessage: Codable, Sendable {
        public var type = "saved"
        public var ok: Bool
        public var message: String
    }

    /// A message the page shows as an error line (a bad message, a failed run).
    public struct ErrorMessage: Codable, Sendable {
        public var type = "error"
        public var message: String
    }

    /// A binary message: a little-endian UInt32 header length, the JSON
    /// header (`{"type": "image", "stamp", "width", "height"}`,
    /// `{"type": "field", "id", "k", "x0", "y0", "width", "height"}` or
    /// `{"type": "cutout", "id", "x0", "y0", "width", "height"}` (a cutout
    /// region's layers over their box: a new id for each layer a run makes,
    /// so a recut or a reload sends it again),
    /// `{"type": "states", "generation"}`, with `from` when the states are
    /// of frames past the clip's end from that frame on, sent while a take
    /// records: `frameCount` is then their number), space
    /// padding to a multiple of 4 bytes, then the payload (RGBA8 pixels, or
    /// one little-endian float32 per pixel of the box, rows top to bottom,
    /// none for the all-zero field `k = 0`; the cutout's object layer
    /// (premultiplied RGBA8, `source − (1 − alpha)·plate`) then its plate
    /// (straight RGBA8: the source with the object filled from the
    /// background), each of the box, rows top to bottom; or the states'
    /// float64 numbers).
    public static func binary(header: [String: Int], type: String, payload: [UInt8]) -> [UInt8] {
        var fields = header.map { "\"\($0.key)\":\($0.value)" }.sorted()
        fields.insert("\"type\":\"\(type)\"", at: 0)
        var head = Array("{\(fields.joined(separator: ","))}".utf8)
        while (4 + head.count) % 4 != 0 { head.append(0x20) }
        let n = UInt32(head.count)
        return [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 24)] + head + payload
    }

    /// Numbers as a binary payload: little-endian float64 each.
    public static func float64Payload(_ values: [Double]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: values.count * 8)
        out.withUnsafeMutableBytes { b in
            for (i, v) in values.enumerated() { b.storeBytes(of: v.bitPattern.littleEndian, toByteOffset: i * 8, as: UInt64.self) }
        }
        return out
    }

    /// The JSON text of `value` (keys sorted: the same state gives the same bytes).
    public static func json<T: Encodable>(_ value: T) -> String {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return (try? e.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
