import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleMedia
@testable import WobbleRender
import WobbleStudioCore
import WobbleTestSupport
@testable import WobbleServe
@testable import WobbleStudioCore

extension StudioServer {
    /// The live session behind the server's core: the tests look inside
    /// (the server itself reads only the core's snapshot and run).
    var session: LiveSession { core.session }
}

/// The browser studio's protocol, in-process over a real socket: the scene
/// on connect (image and displacement fields as binary messages, then the scene), a
/// poke runs the scene again with the event, a drag edits and Ctrl+S saves
/// into the file, a change on disk pushes the new scene, bad messages get
/// one error line.
final class StudioServerTests: XCTestCase {
    var box: Sandbox!
    var studio: StudioServer!
    let logLines = HTTPServerTests.LogLines()

    static let sceneText = """
    image("img.png")
    local body = addSketch{x = 8, y = 6, w = 24, h = 18}
    prepare()
    touch(20, 15, 26, 15)
    wait(1)

    """

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("scene.lua", StudioServerTests.sceneText)
        let lines = logLines
        studio = StudioServer(options: SessionOptions(scenePath: box.path("scene.lua")), log: { lines.add($0) })
        try studio.start()
    }

    override func tearDown() {
        studio.stop()
    }

    /// A page's socket: connected with the token and the page's origin.
    func connect() throws -> SocketClient {
        let c = SocketClient(port: studio.server.port)
        let host = "127.0.0.1:\(studio.server.port)"
        let head = c.upgrade(path: "/ws?token=\(studio.server.config.token)", host: host, origin: "http://\(host)")
        XCTAssertTrue(head.hasPrefix("HTTP/1.1 101"), head)
        return c
    }

    /// Reads frames until a text message of `type`; the binary headers met
    /// on the way (with their payloads). `upTo`: read for that many seconds
    /// at most and return an empty object when none came.
    func next(_ c: SocketClient, _ type: String, binaries: inout [[String: Any]], upTo seconds: Double? = nil) throws -> [String: Any] {
        let end = Date().addingTimeInterval(seconds ?? 60)
        for _ in 0..<200 {
            guard Date() < end, let f = c.nextFrame() else { break }
            if f.opcode == 2 {
                let n = Int(f.payload[0]) | Int(f.payload[1]) << 8 | Int(f.payload[2]) << 16 | Int(f.payload[3]) << 24
                var head = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(f.payload[4..<(4 + n)])) as? [String: Any])
                head["payloadBytes"] = f.payload.count - 4 - n
                head["payload"] = Array(f.payload[(4 + n)...])
                binaries.append(head)
                continue
            }
            let obj = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(f.payload)) as? [String: Any])
            if obj["type"] as? String == type { return obj }
        }
        if seconds != nil { return [:] }
        throw XCTSkip("no \(type) message came") // unreachable in a passing run; fails below
    }

    func next(_ c: SocketClient, _ type: String) throws -> [String: Any] {
        var ignored: [[String: Any]] = []
        return try next(c, type, binaries: &ignored)
    }

    /// The frames of the last `states` message among `binaries` (per frame,
    /// per region, its entry).
    static func frames(_ binaries: [[String: Any]]) throws -> [[[Double]]] {
        let head = try XCTUnwrap(binaries.last { $0["type"] as? String == "states" }, "no states message")
        let bytes = head["payload"] as? [UInt8] ?? []
        let v = stride(from: 0, to: bytes.count, by: 8).map { i in
            Double(bitPattern: (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[i + $1]) << (8 * UInt64($1)) })
        }
        var frames: [[[Double]]] = [], i = 1
        for _ in 0..<Int(v[0]) {
            var regions: [[Double]] = []
            let n = Int(v[i]); i += 1
            for _ in 0..<n {
                let len = Int(v[i]); i += 1
                regions.append(Array(v[i..<(i + len)])); i += len
            }
            frames.append(regions)
        }
        XCTAssertEqual(i, v.count)
        return frames
    }

    /// The floats of a binary payload (little-endian float32).
    static func floats(_ bytes: [UInt8]) -> [Float] {
        stride(from: 0, to: bytes.count, by: 4).map {
            Float(bitPattern: UInt32(bytes[$0]) | UInt32(bytes[$0 + 1]) << 8 | UInt32(bytes[$0 + 2]) << 16 | UInt32(bytes[$0 + 3]) << 24)
        }
    }

    /// The `states` messages of frames past the clip's end among `binaries`: (from, frames).
    static func tails(_ binaries: [[String: Any]]) throws -> [(from: Int, frames: [[[Double]]])] {
        try binaries.filter { $0["type"] as? String == "states" && $0["from"] != nil }.map {
            (try XCTUnwrap($0["from"] as? Int), try frames([$0]))
        }
    }

    /// A page that connects gets the keys' help (the window's list) and the
    /// soundtrack: its samples at the studio's rate (float32), where the
    /// sound starts on the clip and the clip's length in samples; `M` mutes
    /// it in the snapshot; a run without a soundtrack says so (id 0).
    func testThePageGetsTheKeysTheSoundtrackAndTheMute() throws {
        studio.stop()
        let rate = 44_100
        let samples = (0..<rate).map { Float(($0 % 1000) - 500) / 625 }
        try BrowserStudioTests.wav(samples, rate: rate).write(to: URL(fileURLWithPath: box.path("tone.wav")))
        let withSound = StudioServerTests.sceneText.replacingOccurrences(
            of: "image(\"img.png\")", with: "image(\"img.png\")\nsoundtrack(sound(\"tone.wav\"), -0.5)")
        try box.write("scene.lua", withSound)
        studio = StudioServer(options: SessionOptions(scenePath: box.path("scene.lua")), log: { _ in })
        try studio.start()
        let c = try connect()
        var binaries: [[String: Any]] = []
        let keys = try next(c, "keys", binaries: &binaries)
        let listed = try XCTUnwrap(keys["keys"] as? [[String: String]])
        XCTAssertEqual(listed.map { $0["keys"] ?? "" }, StudioKeyMap.help.map(\.keys))
        XCTAssertEqual(listed.map { $0["what"] ?? "" }, StudioKeyMap.help.map(\.what))
        c.frame(Array(#"{"type":"key","seq":1,"name":"m"}"#.utf8))
        // The state a page is sent when it connects may come after the
        // keys, before M is taken in (it says unmuted): the studio
        // messages are read until one says muted, or none more comes.
        var muted: [String: Any] = [:]
        let end = Date().addingTimeInterval(10 * Tool.slowdown)
        repeat {
            muted = try next(c, "studio", binaries: &binaries, upTo: end.timeIntervalSinceNow)
        } while !muted.isEmpty && (muted["studio"] as? [String: Any])?["muted"] as? Bool != true && Date() < end
        XCTAssertEqual((muted["studio"] as? [String: Any])?["muted"] as? Bool, true)
        let sound = try XCTUnwrap(binaries.first { $0["type"] as? String == "sound" }, "\(binaries.map { $0["type"] ?? "" })")
        XCTAssertEqual(sound["rate"] as? Int, rate)
        XCTAssertEqual(sound["start"] as? Int, -rate / 2, "the sound's first half second cut")
        XCTAssertEqual(sound["length"] as? Int, rate, "the clip's 1 s")
        let got = StudioServerTests.floats(try XCTUnwrap(sound["payload"] as? [UInt8]))
        XCTAssertEqual(got.count, samples.count)
        XCTAssertEqual(zip(got, samples).map { abs($0 - $1) }.max() ?? 1, 0, accuracy: 1e-4, "the samples (16-bit)")
        // The soundtrack gone from the scene: the pages hear none.
        binaries = []
        try box.write("scene.lua", StudioServerTests.sceneText + "-- no sound\n")
        _ = try next(c, "scene", binaries: &binaries)
        _ = try next(c, "nothing", binaries: &binaries, upTo: 0.5)
        let none = try XCTUnwrap(binaries.last { $0["type"] as? String == "sound" }, "\(binaries.map { $0["type"] ?? "" })")
        XCTAssertEqual(none["id"] as? Int, 0)
        XCTAssertEqual(none["payloadBytes"] as? Int, 0)
    }

    func testWhileATakeRecordsTheFramesPastTheEndComeAheadOfTheLiveClock() throws {
        let c = try connect()
        var binaries: [[String: Any]] = []
        let scene = try next(c, "scene", binaries: &binaries)
        XCTAssertEqual(scene["frameCount"] as? Int, 30)
        let early = try StudioServerTests.tails(binaries).map(\.from)
        XCTAssertEqual(early, [], "no frames past the end before a take")
        c.frame(Array(#"{"type":"key","seq":1,"name":"r"}"#.utf8))
        _ = try next(c, "nothing", binaries: &binaries, upTo: 1.0)
        let tails = try StudioServerTests.tails(binaries)
        // From the clip's end, contiguous, at least 1.5 s (45 frames) ahead.
        let first = try XCTUnwrap(tails.first)
        XCTAssertEqual(first.from, 30)
        var next = 30
        for t in tails {
            XCTAssertEqual(t.from, next, "\(tails.map(\.from))")
            next = t.from + t.frames.count
        }
        XCTAssertGreaterThanOrEqual(next, 30 + 45)
        // Each frame as the session has it past the end (closed form), with
        // every field its entries read sent before it.
        let sent = Set(binaries.filter { $0["type"] as? String == "field" }.map { [$0["id"] as? Int ?? -1, $0["k"] as? Int ?? -1] })
        for t in tails {
            for (i, regions) in t.frames.enumerated() {
                let state = try XCTUnwrap(studio.queue.sync { studio.session.frameState(t.from + i) })
                XCTAssertEqual(regions.count, state.regions.filter(\.movesPixels).count, "frame \(t.from + i)")
                for (entry, r) in zip(regions, state.regions.filter(\.movesPixels)) {
                    XCTAssertEqual(entry[3], r.direction.x)
                    XCTAssertEqual(entry[5], r.swing)
                    XCTAssertTrue(sent.contains([Int(entry[0]), Int(entry[1])]) && sent.contains([Int(entry[0]), Int(entry[1]) + 1]),
                                  "frame \(t.from + i): field of \(entry.prefix(2)) not sent")
                }
            }
        }
        // R again: the take is written, and no more frames past the end come.
        c.frame(Array(#"{"type":"key","seq":2,"name":"r"}"#.utf8))
        var after: [[String: Any]] = []
        _ = try self.next(c, "nothing", binaries: &after, upTo: 0.5)
        after = []
        _ = try self.next(c, "nothing", binaries: &after, upTo: 0.5)
        let late = try StudioServerTests.tails(after).map(\.from)
        XCTAssertEqual(late, [], "frames past the end after the take stopped")
    }

    func testConnectSendsImageFieldsThenTheScene() throws {
        let c = try connect()
        var binaries: [[String: Any]] = []
        let scene = try next(c, "scene", binaries: &binaries)
        XCTAssertEqual(binaries.first?["type"] as? String, "image")
        XCTAssertEqual(binaries.first?["payloadBytes"] as? Int, 40 * 30 * 4)
        // The shown frame's fields and the states come before the scene; the
        // clip's other fields after it.
        XCTAssertEqual(binaries.last?["type"] as? String, "states")
        _ = try next(c, "nothing", binaries: &binaries, upTo: 1.0)
        let fields = binaries.filter { $0["type"] as? String == "field" }
        XCTAssertFalse(fields.isEmpty)
        XCTAssertEqual(scene["frameCount"] as? Int, 30)
        XCTAssertEqual(scene["fps"] as? Double, 30)
        XCTAssertEqual(scene["imageURL"] as? String, "/files/img.png")
        let sketches = try XCTUnwrap(scene["sketches"] as? [[String: Any]])
        XCTAssertEqual(sketches.count, 1)
        XCTAssertEqual(sketches[0]["name"] as? String, "body")
        XCTAssertEqual(sketches[0]["editable"] as? Bool, true)
        let frames = try StudioServerTests.frames(binaries)
        XCTAssertEqual(frames.count, 30)
        XCTAssertEqual(frames[0], [], "frame 0: the touch has not moved anything yet")
        XCTAssertEqual(frames[5].count, 1)
        // Every field a frame reads came once, before the scene.
        var keys = Set<[Int]>()
        for f in fields {
            let key = [f["id"] as? Int ?? -1, f["k"] as? Int ?? -1]
            XCTAssertTrue(keys.insert(key).inserted, "field \(key) sent twice")
        }
        for regions in frames { for r in regions { XCTAssertTrue(keys.isSuperset(of: [[Int(r[0]), Int(r[1])], [Int(r[0]), Int(r[1]) + 1]])) } }
        // Frame 5's state as the engine computes it, and the field the page
        // blends from it equals the one GLESRenderer uploads for that frame.
        let session = LiveSession(options: SessionOptions(scenePath: box.path("scene.lua")))
        XCTAssertTrue(session.run())
        let r = try XCTUnwrap(session.frameState(5)?.regions.first)
        let entry = frames[5][0]
        for (sent, engine) in zip(entry[3...5], [r.direction.x, r.direction.y, r.swing]) {
            XCTAssertEqual(sent, engine, accuracy: 1e-12)   // (JSON's shortest digits, read back)
        }
        let (id, k, t) = (Int(entry[0]), Int(entry[1]), Float(entry[2]))
        func field(_ k: Int) throws -> (head: [String: Any], values: [Float]) {
            let f = try XCTUnwrap(fields.first { $0["id"] as? Int == id && $0["k"] as? Int == k })
            return (f, StudioServerTests.floats(f["payload"] as? [UInt8] ?? []))
        }
        let (head, a) = try field(k), b = try field(k + 1).values
        let (w, h) = (try XCTUnwrap(head["width"] as? Int), try XCTUnwrap(head["height"] as? Int))
        XCTAssertEqual(b.count, w * h)
        var blended = (0 ..< w * h).map { a.isEmpty ? t * b[$0] : a[$0] + t * (b[$0] - a[$0]) }
        XCTAssertEqual(entry[6], 0, "a plain region: no cutout")
        for i in stride(from: 7, to: entry.count, by: 2) { blended[Int(entry[i])] = Float(entry[i + 1]) }
        let m = OutputMapping(sourceWidth: 40, sourceHeight: 30, outputWidth: 40, outputHeight: 30)
        let profile = DisplacementProfile(shape: r.shape, mapping: m, pin: r.pin)
        XCTAssertEqual([head["x0"] as? Int, head["y0"] as? Int, w, h], [profile.x0, profile.y0, profile.width, profile.height])
        let expected = profile.magnitudes(peak: r.peak)
        XCTAssertEqual(blended, Array(expected.values), "frame 5's field, blended as the page does")
        XCTAssertGreaterThan(expected.maxValue, 0)
    }

    func testAPokeRunsTheSceneWithTheEventAndPushesNewStates() throws {
        let c = try connect()
        var b0: [[String: Any]] = [], b1: [[String: Any]] = []
        _ = try next(c, "scene", binaries: &b0)
        c.frame(Array(#"{"type":"batch","seq":7,"frame":20,"commands":[{"type":"pokeBegin","x":20,"y":15},{"type":"pokeEnd","x":20,"y":25}]}"#.utf8))
        let after = try next(c, "scene", binaries: &b1)
        XCTAssertEqual(after["answers"] as? Int, 7)
        XCTAssertEqual(after["performed"] as? Int, 1)
        let f0 = try StudioServerTests.frames(b0), f1 = try StudioServerTests.frames(b1)
        XCTAssertEqual(Array(f0[..<20]), Array(f1[..<20]), "nothing changes before the poke")
        XCTAssertNotEqual(f0[21], f1[21], "the region moves the new way from the next frame")
        XCTAssertGreaterThan(f1.count, f0.count, "the clip goes on while the poked region moves")
        // The timeline's ticks are the studio snapshot's, sent after the scene.
        let studio = try XCTUnwrap(try next(c, "studio")["studio"] as? [String: Any])
        let ticks = try XCTUnwrap(studio["ticks"] as? [[String: Any]])
        // (At the frame's time in whole milliseconds: the studio core stamps
        // pokes as a take writes them.)
        XCTAssertTrue(ticks.contains { $0["performed"] as? Bool == true && ($0["label"] as? String ?? "").hasPrefix("touch performed")
                                       && abs(($0["time"] as? Double ?? 0) - 20.0 / 30) < 5e-4 }, "\(ticks)")
    }

    func testADragEditsAndSaveWritesTheLiterals() throws {
        let c = try connect()
        _ = try next(c, "scene")
        c.frame(Array(#"{"type":"batch","seq":1,"frame":0,"commands":[{"type":"grab","x":8,"y":6,"radius":2},{"type":"drag","x":4,"y":3},{"type":"dragEnd"}]}"#.utf8))
        let edited = try next(c, "scene")
        XCTAssertEqual(edited["unsaved"] as? Bool, true)
        c.frame(Array(#"{"type":"key","seq":2,"name":"s","ctrl":true}"#.utf8))
        let saved = try next(c, "saved")
        XCTAssertEqual(saved["ok"] as? Bool, true, "\(saved)")
        let text = try String(contentsOfFile: box.path("scene.lua"), encoding: .utf8)
        XCTAssertEqual(text, StudioServerTests.sceneText.replacingOccurrences(
            of: "addSketch{x = 8, y = 6, w = 24, h = 18}", with: "addSketch{lt = {4, 3}, rt = {32, 6}, rb = {32, 24}, lb = {8, 24}}"))
        let after = try next(c, "scene")
        XCTAssertEqual(after["unsaved"] as? Bool, false)
    }

    func testAChangeOnDiskPushesTheNewScene() throws {
        let c = try connect()
        _ = try next(c, "scene")
        try box.write("scene.lua", StudioServerTests.sceneText.replacingOccurrences(of: "wait(1)", with: "wait(2)"))
        let pushed = try next(c, "scene")
        XCTAssertEqual(pushed["frameCount"] as? Int, 60)
    }

    /// A cutout region: its layers come once, as a binary `cutout` message
    /// before the states (the engine's object, plate and mask of its box), each
    /// region entry names it, the scene lists it; a poke (the same layer)
    /// sends nothing again; a new mask on disk (a recut) sends the new
    /// layer with a new id and the scene lists only that one.
    func testACutoutsLayersComeOnceAndAgainWhenItsMaskChanges() throws {
        studio.stop()
        func writeMask(radius r: Double) throws {
            var m = RGBAImage(width: 40, height: 30, pixels: [UInt8](repeating: 255, count: 40 * 30 * 4))
            for y in 0..<30 {
                for x in 0..<40 {
                    let d = ((Double(x) + 0.5 - 20) * (Double(x) + 0.5 - 20) + (Double(y) + 0.5 - 15) * (Double(y) + 0.5 - 15)).squareRoot()
                    let v = UInt8((min(1, max(0, (r - d) / 2)) * 255).rounded())
                    for c in 0..<3 { m.pixels[(y * 40 + x) * 4 + c] = v }
                }
            }
            try box.writeImage("mask.png", m)
        }
        try writeMask(radius: 6)
        try box.write("scene.lua", StudioServerTests.sceneText.replacingOccurrences(of: "h = 18}", with: "h = 18, cutout = \"mask.png\"}"))
        studio = StudioServer(options: SessionOptions(scenePath: box.path("scene.lua")), log: { _ in })
        try studio.start()
        let c = try connect()
        var b0: [[String: Any]] = []
        let scene = try next(c, "scene", binaries: &b0)
        let cutouts = b0.filter { $0["type"] as? String == "cutout" }
        XCTAssertEqual(cutouts.count, 1)
        let cut = try XCTUnwrap(cutouts.first)
        let id = try XCTUnwrap(cut["id"] as? Int)
        XCTAssertEqual(scene["cutouts"] as? [Int], [id])
        XCTAssertLessThan(try XCTUnwrap(b0.firstIndex { $0["type"] as? String == "cutout" }),
                          try XCTUnwrap(b0.lastIndex { $0["type"] as? String == "states" }), "the layers before the states")
        // The engine's layer, byte for byte.
        let session = LiveSession(options: SessionOptions(scenePath: box.path("scene.lua")))
        XCTAssertTrue(session.run())
        let layer = try XCTUnwrap(session.clip?.cutouts.values.first)
        XCTAssertEqual([cut["x0"] as? Int, cut["y0"] as? Int, cut["width"] as? Int, cut["height"] as? Int],
                       [layer.box.x0, layer.box.y0, layer.box.width, layer.box.height])
        // The object, the plate, then the mask over the box (what the page outlines).
        let b = layer.box
        let mask = (b.y0 ..< b.y1).flatMap { y in layer.mask.pixels[(y * layer.mask.width + b.x0) ..< (y * layer.mask.width + b.x1)] }
        XCTAssertEqual(cut["payload"] as? [UInt8], layer.object + layer.plate + mask)
        XCTAssertTrue(mask.contains(255) && mask.contains(0), "the mask's object and its margin")
        XCTAssertTrue(layer.object.contains { $0 != 0 } && layer.object.contains { $0 != 255 })
        let frames = try StudioServerTests.frames(b0)
        XCTAssertEqual(frames[5].count, 1)
        for f in frames { for r in f { XCTAssertEqual(r[6], Double(id)) } }
        // A poke: the same layer, not sent again.
        var b1: [[String: Any]] = []
        c.frame(Array(#"{"type":"batch","seq":3,"frame":20,"commands":[{"type":"pokeBegin","x":20,"y":15},{"type":"pokeEnd","x":20,"y":25}]}"#.utf8))
        let poked = try next(c, "scene", binaries: &b1)
        XCTAssertEqual(poked["cutouts"] as? [Int], [id])
        XCTAssertEqual(b1.filter { $0["type"] as? String == "cutout" }.count, 0, "the same layer is not sent again")
        // The mask on disk changes (and the scene, so that the run does not
        // hang on whether mask files are watched): a new layer, a new id.
        try writeMask(radius: 8)
        try box.write("scene.lua", StudioServerTests.sceneText.replacingOccurrences(of: "h = 18}", with: "h = 18, cutout = \"mask.png\"}") + "-- v2\n")
        var b2: [[String: Any]] = []
        let reloaded = try next(c, "scene", binaries: &b2)
        let again = b2.filter { $0["type"] as? String == "cutout" }
        XCTAssertEqual(again.count, 1)
        let id2 = try XCTUnwrap(again.first?["id"] as? Int)
        XCTAssertNotEqual(id2, id)
        XCTAssertEqual(reloaded["cutouts"] as? [Int], [id2])
        XCTAssertGreaterThan(again.first?["width"] as? Int ?? 0, cut["width"] as? Int ?? 0, "the larger mask's box")
    }

    func testBadMessagesGetOneErrorLineAndTheSocketStays() throws {
        let c = try connect()
        _ = try next(c, "scene")
        for bad in ["not json", #"{"type":"togglePlay","frame":-1}"#, #"{"type":"setParameter","key":"nope","value":1}"#,
                    #"{"type":"explode"}"#, #"{"type":"batch","frame":1,"commands":[{"type":"pokeBegin","x":1e308,"y":0}]}"#,
                    #"{"dragTo":{"_0":{"x":1,"y":1}}}"#, #"{"type":"drag","_0":{"x":1,"y":1}}"#, #"[1, 2]"#,
                    #"{"type":"batch","commands":[{"type":"drag","x":1}]}"#] {
            c.frame(Array(bad.utf8))
            let e = try next(c, "error")
            XCTAssertFalse((e["message"] as? String ?? "").isEmpty)
            XCTAssertFalse((e["message"] as? String ?? "").contains("\n"))
        }
        c.frame(Array(#"{"type":"batch","seq":3,"frame":2,"commands":[{"type":"pokeBegin","x":20,"y":15},{"type":"pokeEnd","x":25,"y":15}]}"#.utf8))
        XCTAssertEqual(try next(c, "scene")["answers"] as? Int, 3)
    }

    /// Commands that decode but ask for what is not there (rows, ticks,
    /// presets, frames far away, quitting) change nothing harmful: a
    /// refusal is one error line, the page's Esc does not stop the server,
    /// and the next poke is answered.
    func testOddCommandsAreRefusedOrIgnoredAndTheServerGoesOn() throws {
        let c = try connect()
        _ = try next(c, "scene")
        c.frame(Array(#"{"type":"export","preset":"nope"}"#.utf8))
        XCTAssertTrue((try next(c, "error")["message"] as? String ?? "").hasPrefix("no preset 'nope'"))
        let odd = [#"{"type":"quit","closing":true}"#, #"{"type":"answerQuit","answer":"quit"}"#, #"{"type":"step","by":9999999}"#,
                   #"{"type":"seek","to":9999999}"#, #"{"type":"focusRow","by":-9999999}"#, #"{"type":"stepParameter","by":9999999}"#,
                   #"{"type":"inspectorPress","row":999,"fraction":5}"#, #"{"type":"inspectorSlide","fraction":-3}"#,
                   #"{"type":"pressTick","ref":{"kind":"baked","index":99}}"#,
                   #"{"type":"dragTick","to":9999999}"#, #"{"type":"endTickDrag","at":-5}"#, #"{"type":"chooserChoose","row":999}"#,
                   #"{"type":"typeText","text":"x"}"#, #"{"type":"drag","x":1,"y":1}"#, #"{"type":"dragEnd"}"#, #"{"type":"strokeEnd"}"#]
        c.frame(Array(#"{"type":"batch","seq":1,"commands":["#.utf8) + Array(odd.joined(separator: ",").utf8) + Array("]}".utf8))
        c.frame(Array(#"{"type":"batch","seq":2,"frame":2,"commands":[{"type":"pokeBegin","x":20,"y":15},{"type":"pokeEnd","x":25,"y":15}]}"#.utf8))
        // The text messages up to the poke's scene: no refusal of the odd ones as a message.
        var after: [String: Any] = [:]
        for _ in 0..<400 {
            guard let f = c.nextFrame() else { break }
            guard f.opcode == 1, let obj = try JSONSerialization.jsonObject(with: Data(f.payload)) as? [String: Any] else { continue }
            if obj["type"] as? String == "error" {
                XCTAssertFalse((obj["message"] as? String ?? "").hasPrefix("not a studio message"), "every odd command is one: \(obj)")
            }
            if obj["type"] as? String == "scene", obj["answers"] as? Int == 2 { after = obj; break }
        }
        XCTAssertEqual(after["answers"] as? Int, 2)
        XCTAssertEqual(after["performed"] as? Int, 1)
        XCTAssertEqual(try String(contentsOfFile: box.path("scene.lua"), encoding: .utf8), StudioServerTests.sceneText)
    }
}

/// The page files are `Web/`'s, embedded at build time (SwiftPM resources
/// listed in Package.swift): every file there is served, with its text.
final class PageAssetsTests: XCTestCase {
    func testPageAssetsMatchTheFiles() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = repo.appendingPathComponent("Web")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasSuffix(".swift") }.sorted()
        XCTAssertEqual(files, PageAssets.all.keys.sorted(), "list every file of Web/ as a resource in Package.swift and in Web/WebAssets.swift")
        for name in files {
            let text = try String(contentsOf: dir.appendingPathComponent(name), encoding: .utf8)
            XCTAssertEqual(PageAssets.all[name], text, "Web/\(name) differs from its embedded copy")
        }
        XCTAssertNotNil(StudioServer.assets["/shaders/wobble.frag"])
        XCTAssertNotNil(StudioServer.assets["/"])
        XCTAssertNil(StudioServer.assets["/WebAssets.swift"])
    }
}
