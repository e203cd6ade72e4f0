import Foundation
import WobbleCore
import WobbleStudioCore

/// The browser studio's messages over its WebSocket (JSON text, one object
/// per message, its kind in `type`, every one written out by hand and
/// listed in docs/protocol.md; the version in the `hello`s), and the two binary messages (the
/// image's pixels, a shape's displacement field for one grid peak): never
/// rendered frames. The page draws every frame itself, with the renderer's
/// shaders, from `SceneMessage`.
public enum StudioProtocol {
    /// A point as `[x, y]` (image pixels).
    public typealias XY = [Double]

    /// The four corners and the center of a sketch; `center` nil: the mean
    /// of the corners (not assigned).
    public struct Points: Sendable, Equatable {
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

        public var json: JSONValue {
            func xy(_ a: XY) -> JSONValue { .array(a.map { JSONValue($0) }) }
            return .object(["lt": xy(lt), "rt": xy(rt), "rb": xy(rb), "lb": xy(lb), "center": center.map(xy) ?? .null])
        }
    }

    /// One sketch of the scene with its handles: which call made it (`kind`
    /// "call" with the 0-based call `index`, or "added"), its local's name,
    /// its line, whether a drag may edit it (else `locked` says where it is
    /// computed), its points as the edits have them and its parameters.
    public struct Sketch: Sendable, Equatable {
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

        public var json: JSONValue {
            .object(["kind": JSONValue(kind), "index": JSONValue(index), "name": JSONValue(name), "line": JSONValue(line),
                     "editable": JSONValue(editable), "locked": JSONValue(locked), "points": points.json,
                     "motion": JSONValue(motion), "strength": JSONValue(strength), "duration": JSONValue(duration),
                     "pin": JSONValue(pin)])
        }
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
    public struct SceneMessage: Sendable {
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
        /// The ids of the clip's cutout layers (the frames' and those of
        /// regions that never move, which the page only outlines; the page
        /// forgets the others).
        public var cutouts: [Int]

        public var json: JSONValue {
            .object([
                "type": "scene", "generation": JSONValue(generation), "answers": JSONValue(answers), "scene": JSONValue(scene),
                "imageStamp": JSONValue(imageStamp), "imageURL": JSONValue(imageURL), "width": JSONValue(width),
                "height": JSONValue(height), "fps": JSONValue(fps), "frameCount": JSONValue(frameCount),
                "duration": JSONValue(duration), "overlap": JSONValue(overlap), "edges": JSONValue(edges),
                "sketches": .array(sketches.map(\.json)), "warnings": JSONValue(warnings), "error": JSONValue(error),
                "unsaved": JSONValue(unsaved), "performed": JSONValue(performed), "notes": JSONValue(notes),
                "cutouts": JSONValue(cutouts),
            ])
        }
    }

    /// The version of the wire protocol (docs/protocol.md): the server says
    /// it in its `hello`, the page says its own in its `hello`, and a page
    /// of another version is told so in one line (it is reloaded).
    public static let version = 1

    /// The server's first message on every socket: the protocol's version
    /// and the scene's name.
    public struct HelloMessage: Sendable, Equatable {
        public var scene: String
        public var json: JSONValue {
            .object(["type": "hello", "protocol": JSONValue(StudioProtocol.version), "scene": JSONValue(scene)])
        }
    }

    /// A message from the page (docs/protocol.md), one JSON object with
    /// its kind in `type`: `hello` (the page's protocol version), a
    /// command of the studio core (`WireCommands`: `{"type": "drag",
    /// "x": 4, "y": 3}`), `batch` (several commands, performed in order
    /// before one run), `key` (a key pressed: the window's key map makes
    /// it a command in the studio's state now) or `text` (characters
    /// typed: a name's, a chooser row's digit). Each may say `frame`, the
    /// frame the page shows (where a poke, a selection or an added region
    /// is; it comes first), and `seq`, which numbers it for
    /// `SceneMessage.answers`.
    package struct PageMessage: Sendable {
        package var seq: Int?
        package var frame: Int?
        package var commands: [StudioCommand] = []
        package var key: KeyPress?
        package var text: String?
        /// The page's protocol version (a `hello`).
        package var hello: Int?

        package struct KeyPress: Sendable, Equatable {
            package var name: StudioKey
            package var shift: Bool?
            package var ctrl: Bool?
            /// Where `A` adds a region (image pixels; nil: the middle of the image).
            package var at: Point?
        }

        /// The members every page message may have beside its own.
        static let envelope: Set<String> = ["seq", "frame"]

        /// The message of a wire object.
        package init(_ object: [String: JSONValue]) throws(WireCommands.Problem) {
            guard case .string(let type)? = object["type"] else {
                throw WireCommands.Problem("a studio message has a 'type' (a string)")
            }
            var m = WireCommands.Members(type: type, object)
            seq = try m.optionalInt("seq")
            frame = try m.optionalInt("frame")
            switch type {
            case "hello":
                hello = try m.int("protocol")
            case "batch":
                let list = try m.optionalArray("commands") ?? []
                if list.count > StudioProtocol.mostCommands {
                    throw WireCommands.Problem("\(list.count) commands in one message (at most \(StudioProtocol.mostCommands))")
                }
                commands = try list.enumerated().map { (i, v) throws(WireCommands.Problem) in
                    guard let o = v.object else { throw WireCommands.Problem("'batch': command \(i) is \(v.kindName), not an object") }
                    return try WireCommands.decode(o)
                }
            case "key":
                let name = try m.string("name")
                guard let key = StudioKey(rawValue: name) else {
                    throw WireCommands.Problem("'key': no key '\(name)'")
                }
                let x = try m.optionalNumber("x"), y = try m.optionalNumber("y")
                guard (x == nil) == (y == nil) else { throw WireCommands.Problem("'key': 'x' and 'y' come together") }
                self.key = KeyPress(name: key, shift: try m.optionalBool("shift"), ctrl: try m.optionalBool("ctrl"),
                                    at: x.flatMap { x in y.map { Point(x, $0) } })
                text = try m.optionalString("text")
            case "text":
                text = try m.string("text")
            default:
                commands = [try WireCommands.decode(object, allowing: PageMessage.envelope)]
                return
            }
            try m.finish()
        }

        /// The wire object of this message (what `init` reads back).
        package var json: JSONValue {
            var o: [String: JSONValue] = [:]
            if let hello {
                o = ["type": "hello", "protocol": JSONValue(hello)]
            } else if let key {
                o = ["type": "key", "name": JSONValue(key.name.rawValue)]
                if let s = key.shift { o["shift"] = JSONValue(s) }
                if let c = key.ctrl { o["ctrl"] = JSONValue(c) }
                if let p = key.at { o["x"] = JSONValue(p.x); o["y"] = JSONValue(p.y) }
                if let text { o["text"] = JSONValue(text) }
            } else if let text, commands.isEmpty {
                o = ["type": "text", "text": JSONValue(text)]
            } else if commands.count == 1, let c = WireCommands.encode(commands[0]) {
                o = c
            } else {
                o = ["type": "batch", "commands": .array(commands.compactMap(WireCommands.encode).map { .object($0) })]
            }
            if let seq { o["seq"] = JSONValue(seq) }
            if let frame { o["frame"] = JSONValue(frame) }
            return .object(o)
        }
    }

    /// The largest number a page message may carry (pixels, frames, seconds).
    package static let largestNumber = 1e7
    /// The most commands one page message may carry.
    package static let mostCommands = 1000

    /// A page message read, or why not (one line).
    package static func decode(_ text: String) -> Result<PageMessage, Refusal> {
        let shown = HTTPServer.printable(String(text.prefix(80)))
        guard let value = JSONValue.parse(text) else {
            return .failure(Refusal("not a studio message (JSON): \(shown)"))
        }
        guard let object = value.object else {
            return .failure(Refusal("not a studio message (an object with a 'type'): \(shown)"))
        }
        // Every number within bounds (a point at 1e308 is no pixel).
        guard value.numbers.allSatisfy({ $0.isFinite && abs($0) <= largestNumber }) else {
            return .failure(Refusal("a number beyond ±\(Int(largestNumber)): \(shown)"))
        }
        let m: PageMessage
        do {
            m = try PageMessage(object)
        } catch {
            return .failure(Refusal("not a studio message: \(error.message): \(shown)"))
        }
        if let v = m.hello, v != version {
            return .failure(Refusal("this page speaks protocol \(v) and wobble-run serve speaks protocol \(version): reload the page"))
        }
        if let f = m.frame, f < 0 { return .failure(Refusal("frame \(f): a frame is 0 or more")) }
        return .success(m)
    }

    /// Why a page message is refused (one line).
    package struct Refusal: Error {
        package var message: String
        init(_ message: String) { self.message = message }
    }

    /// The studio core's snapshot (sent after every change): what the page
    /// shows besides the frames (inspector, ticks, status, warnings, the
    /// chooser, recording, the magnetic outline being clicked and the
    /// cutout stroke being painted). The frame's state and the handles' shapes are
    /// not in it: the page has them as the binary `states` and the scene's
    /// `sketches`.
    package struct StudioMessage {
        package var studio: StudioSnapshot

        package var json: JSONValue {
            let s = studio
            let o: [String: JSONValue] = [
                "scene": JSONValue(s.scene), "title": JSONValue(s.title), "unsaved": JSONValue(s.unsaved),
                "generation": JSONValue(s.generation), "frame": JSONValue(s.frame), "frameCount": JSONValue(s.frameCount),
                "fps": JSONValue(s.fps), "playhead": JSONValue(s.playhead), "clipLength": JSONValue(s.clipLength),
                "timelineLength": JSONValue(s.timelineLength), "scriptedDuration": JSONValue(s.scriptedDuration),
                "playing": JSONValue(s.playing), "recording": JSONValue(s.recording), "handlesShown": JSONValue(s.handlesShown),
                "inspector": s.inspector.map(StudioMessage.json) ?? .null,
                "ticks": .array(s.ticks.map(StudioMessage.json)),
                "hovered": JSONValue(s.hovered), "performed": .array(s.performed.map(StudioMessage.json)),
                "message": JSONValue(s.message), "messageIsError": JSONValue(s.messageIsError),
                "sceneError": JSONValue(s.sceneError), "warnings": JSONValue(s.warnings),
                "askingToQuit": JSONValue(s.askingToQuit), "chooserRow": JSONValue(s.chooserRow),
                "chooserChoices": s.chooserChoices.map { JSONValue($0) } ?? .null,
                "exporting": JSONValue(s.exporting), "firstRunGoing": JSONValue(s.firstRunGoing),
                "muted": JSONValue(s.muted),
                "outline": s.outline.map { .array($0.map(StudioMessage.json)) } ?? .null,
                "stroke": s.stroke.map { st in
                    .object(["points": .array(st.points.map(StudioMessage.json)), "radius": JSONValue(st.radius),
                             "object": JSONValue(st.object)])
                } ?? .null,
            ]
            return .object(["type": "studio", "studio": .object(o)])
        }

        /// An image point, `{"x", "y"}`.
        static func json(_ p: Point) -> JSONValue { .object(["x": JSONValue(p.x), "y": JSONValue(p.y)]) }

        static func json(_ t: Tick) -> JSONValue {
            .object(["time": JSONValue(t.time), "label": JSONValue(t.label), "performed": JSONValue(t.performed),
                     "ref": WireCommands.json(t.ref), "selected": JSONValue(t.selected),
                     "sound": JSONValue(t.sound.map { $0 == .beat ? "beat" : "onset" })])
        }

        /// A poke or shake performed: when (`anchor` `end`: seconds after
        /// the script returned) and what, in image pixels or g.
        static func json(_ e: PerformedEvent) -> JSONValue {
            var o: [String: JSONValue] = ["time": JSONValue(e.time), "anchor": JSONValue(e.anchor == .start ? "start" : "end")]
            switch e.action {
            case .touch(let from, let to):
                o["kind"] = "touch"
                o["from"] = .object(["x": JSONValue(from.x), "y": JSONValue(from.y)])
                o["to"] = .object(["x": JSONValue(to.x), "y": JSONValue(to.y)])
            case .shake(let ax, let ay):
                o["kind"] = "shake"
                o["ax"] = JSONValue(ax)
                o["ay"] = JSONValue(ay)
            }
            return .object(o)
        }

        static func json(_ kind: SketchOrigin.Kind) -> JSONValue {
            switch kind {
            case .call(let i): return .object(["kind": "call", "index": JSONValue(i)])
            case .added(let i): return .object(["kind": "added", "index": JSONValue(i)])
            }
        }

        static func json(_ v: InspectorValues) -> JSONValue {
            .object([
                "selected": json(v.selected), "name": JSONValue(v.name), "origin": JSONValue(v.origin),
                "readOnly": JSONValue(v.readOnly), "focused": JSONValue(v.focused), "typing": JSONValue(v.typing),
                "typingSelected": JSONValue(v.typingSelected), "caret": JSONValue(v.caret),
                "rows": .array(v.rows.map { r in
                    .object(["key": JSONValue(r.key), "text": JSONValue(r.text), "value": JSONValue(r.value),
                             "choices": r.choices.map { JSONValue($0) } ?? .null])
                }),
            ])
        }
    }

    /// An export ended: its result line (against the platform's limits for
    /// a preset), whether it is good, and the file to download (`/files/NAME`).
    public struct ExportedMessage: Sendable {
        public var ok: Bool
        public var message: String
        public var url: String?
        public var json: JSONValue {
            .object(["type": "exported", "ok": JSONValue(ok), "message": JSONValue(message), "url": JSONValue(url)])
        }
    }

    /// The answer to `save`: what was written, or why not (`ok` false).
    public struct SavedMessage: Sendable {
        public var ok: Bool
        public var message: String
        public var json: JSONValue { .object(["type": "saved", "ok": JSONValue(ok), "message": JSONValue(message)]) }
    }

    /// A message the page shows as an error line (a bad message, a failed run).
    public struct ErrorMessage: Sendable {
        public var message: String
        public var json: JSONValue { .object(["type": "error", "message": JSONValue(message)]) }
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
    /// background), each of the box, rows top to bottom, then its mask
    /// (one grey byte a pixel of the box: what the studio outlines); or the states'
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

    /// The JSON text of a message (members sorted: the same state gives the same bytes).
    public static func json(_ value: JSONValue) -> String { value.text }
}
