import Foundation
import XCTest
import WobbleCore
import WobbleEngine
import WobbleStudioCore
import WobbleTestSupport
@testable import WobbleServe

/// The browser studio's wire protocol against its documentation
/// (docs/protocol.md): every page message the document shows decodes and
/// encodes back to the same JSON; every command has an example; every
/// server message the document shows has the members a real server sends
/// (read from a real socket); a page of another protocol version is told so.
final class WireProtocolTests: XCTestCase {
    /// The document's examples: (the section's direction, the message's heading, the JSON text).
    struct Example { var fromPage: Bool; var heading: String; var text: String }

    static func examples() throws -> [Example] {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let doc = try String(contentsOf: repo.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        var out: [Example] = []
        var fromPage: Bool?
        var heading = ""
        var block: [String]?
        for line in doc.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if var b = block {
                if line == "```" {
                    if let fromPage { out.append(Example(fromPage: fromPage, heading: heading, text: b.joined(separator: "\n"))) }
                    block = nil
                } else {
                    b.append(line)
                    block = b
                }
                continue
            }
            if line.hasPrefix("## ") {
                let l = line.lowercased()
                fromPage = l.contains("from the page") ? true : l.contains("from the server") ? false : nil
            } else if line.hasPrefix("### ") {
                heading = String(line.dropFirst(4))
            } else if line == "```json" {
                block = []
            }
        }
        return out
    }

    func testEveryPageExampleDecodesAndEncodesBack() throws {
        let page = try WireProtocolTests.examples().filter(\.fromPage)
        XCTAssertGreaterThan(page.count, 60)
        for e in page {
            switch StudioProtocol.decode(e.text) {
            case .failure(let r):
                XCTFail("\(e.heading): \(r.message)")
            case .success(let m):
                XCTAssertEqual(m.json, JSONValue.parse(e.text), "\(e.heading): \(e.text) encodes back as \(m.json.text)")
            }
        }
    }

    /// One of each command (the wire has a name for each: `WireCommands.encode`).
    static let everyCommand: [StudioCommand] = [
        .togglePlay, .step(1), .home, .pause, .seek(frame: 3), .toggleHandles, .quit(closing: false), .answerQuit(.back),
        .backToEditing, .save, .undo, .redo, .add(at: Point(1, 2)), .grab(at: Point(1, 2), radius: 1), .dragTo(Point(1, 2)),
        .dragEnd, .select(at: Point(1, 2), radius: 1), .selectNext(1), .focusRow(by: 1), .stepParameter(1),
        .setParameter(key: "strength", value: 1), .setMotion("spring"), .setPin(.bottom), .startRename, .type("a"),
        .renameBackspace, .renameCaret(by: 1), .commitRename, .cancelRename, .rename("a"),
        .inspectorPress(row: 1, choice: nil, fraction: 0), .inspectorSlide(0.5), .inspectorRelease, .pokeBegin(Point(1, 2)),
        .pokeEnd(Point(1, 2)), .shake(ax: 1, ay: 0), .accelerometer(x: 0, y: 1), .toggleRecording, .forgetPokes,
        .pressTick(nil), .hoverTimeline(at: 1, within: 0.1), .dragTick(to: 1), .endTickDrag(at: 1), .deleteSelected,
        .toggleLoop, .bake, .cutOut, .strokeBegin(at: Point(1, 2), radius: 3, object: true), .strokeTo(Point(1, 2)),
        .strokeEnd, .outline, .outlinePoint(Point(1, 2)), .export(preset: nil), .openExportChooser, .chooserMove(1),
        .chooserChoose(nil), .chooserCancel, .writeStill, .toggleMute,
    ]

    func testEveryCommandHasADocumentedExampleAndComesBackAsItself() throws {
        let documented = Set(try WireProtocolTests.examples().filter(\.fromPage).compactMap { JSONValue.parse($0.text)?.object?["type"] }
            .compactMap { if case .string(let s) = $0 { return s } else { return nil } })
        for c in WireProtocolTests.everyCommand {
            let o = try XCTUnwrap(WireCommands.encode(c), "\(c)")
            guard case .string(let type)? = o["type"] else { return XCTFail("\(c): no type") }
            XCTAssertTrue(documented.contains(type), "'\(type)' has no example in docs/protocol.md")
            XCTAssertEqual(try WireCommands.decode(o), c, "\(type)")
        }
        XCTAssertEqual(Set(WireProtocolTests.everyCommand.compactMap { WireCommands.encode($0)?["type"] }).count,
                       WireProtocolTests.everyCommand.count, "each command its own name")
        XCTAssertTrue(documented.isSuperset(of: ["hello", "batch", "key", "text"]))
    }

    /// Swift's synthesised shapes and misspelt members are refused, each
    /// with the line that names what is wrong.
    func testMalformedMessagesAreRefusedInOneLineThatNamesTheMember() {
        let cases: [(String, String)] = [
            (#"{"dragTo":{"_0":{"x":1,"y":2}}}"#, "not a studio message: a studio message has a 'type' (a string): "),
            (#"{"type":"drag","_0":{"x":1,"y":2}}"#, "not a studio message: 'drag': 'x' is a number (got nothing): "),
            (#"{"type":"drag","x":1,"y":2,"z":3}"#, "not a studio message: 'drag' has no member 'z': "),
            (#"{"type":"drag","x":"1","y":2}"#, "not a studio message: 'drag': 'x' is a number (got a string): "),
            (#"{"type":"seek","to":1.5}"#, "not a studio message: 'seek': 'to' is a whole number (got a number): "),
            (#"{"type":"explode"}"#, "not a studio message: no command 'explode': "),
            (#"{"type":"setPin","pin":"middle"}"#, "not a studio message: 'setPin': no pin 'middle' (bottom, top, left, right, or null): "),
            (#"{"type":"batch","commands":[{"type":"home"},3]}"#, "not a studio message: 'batch': command 1 is a number, not an object: "),
            (#"{"type":"key","name":"nope"}"#, "not a studio message: 'key': no key 'nope': "),
            (#"{"type":"hello","protocol":2}"#, "this page speaks protocol 2 and wobble-run serve speaks protocol 1: reload the page"),
            (#"{"type":"home","frame":-2}"#, "frame -2: a frame is 0 or more"),
        ]
        for (text, want) in cases {
            guard case .failure(let r) = StudioProtocol.decode(text) else { XCTFail("\(text) decoded"); continue }
            XCTAssertTrue(r.message.hasPrefix(want), "\(text): \(r.message)")
            XCTAssertFalse(r.message.contains("\n"))
        }
    }

    // MARK: the server's messages, from a real server

    var box: Sandbox!
    var studio: StudioServer!

    override func setUpWithError() throws {
        box = try Sandbox()
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try box.write("scene.lua", StudioServerTests.sceneText)
        studio = StudioServer(options: SessionOptions(scenePath: box.path("scene.lua")), log: { _ in })
        try studio.start()
    }

    override func tearDown() {
        studio.stop()
    }

    /// The text messages and binary headers a page gets, by type, until
    /// every type of `want` came (the last of each).
    func collect(_ c: SocketClient, until want: Set<String>, keeping keep: (String, JSONValue) -> Bool = { _, _ in true }) throws -> [String: JSONValue] {
        var got: [String: JSONValue] = [:]
        for _ in 0..<400 {
            guard !want.isSubset(of: Set(got.keys)), let f = c.nextFrame() else { break }
            if f.opcode == 2 {
                let n = Int(f.payload[0]) | Int(f.payload[1]) << 8 | Int(f.payload[2]) << 16 | Int(f.payload[3]) << 24
                let head = try XCTUnwrap(JSONValue.parse(String(decoding: f.payload[4..<(4 + n)], as: UTF8.self)))
                if case .string(let t)? = head.object?["type"] { got["binary " + t] = head }
            } else if let v = JSONValue.parse(String(decoding: f.payload, as: UTF8.self)), case .string(let t)? = v.object?["type"],
                      keep(t, v) {
                got[t] = v
            }
        }
        return got
    }

    /// Where `doc` and `real` differ in shape: the members of objects
    /// (both ways), the kinds of values (null matches anything), the first
    /// elements of arrays.
    static func shapeProblems(_ doc: JSONValue, _ real: JSONValue, at path: String = "") -> [String] {
        switch (doc, real) {
        case (.null, _), (_, .null): return []
        case (.object(let a), .object(let b)):
            var out: [String] = []
            for k in Set(a.keys).union(b.keys).sorted() {
                guard let x = a[k] else { out.append("\(path).\(k) is sent but not documented"); continue }
                guard let y = b[k] else { out.append("\(path).\(k) is documented but not sent"); continue }
                out += shapeProblems(x, y, at: path + "." + k)
            }
            return out
        case (.array(let a), .array(let b)):
            guard let x = a.first, let y = b.first else { return [] }
            return shapeProblems(x, y, at: path + "[0]")
        default:
            return doc.kindName == real.kindName ? [] : ["\(path) is \(doc.kindName) in the document, \(real.kindName) sent"]
        }
    }

    func testEveryServerExampleHasTheMembersARealServerSends() throws {
        let c = SocketClient(port: studio.server.port)
        let host = "127.0.0.1:\(studio.server.port)"
        XCTAssertTrue(c.upgrade(path: "/ws?token=\(studio.server.config.token)", host: host, origin: "http://\(host)").hasPrefix("HTTP/1.1 101"))
        var got = try collect(c, until: ["hello", "scene", "studio", "keys", "binary image", "binary field", "binary states"])
        // The first message is the hello, with this server's version.
        XCTAssertEqual(got["hello"]?.object?["protocol"], JSONValue(StudioProtocol.version))
        // A save, a poke, a selected region (the inspector), the chooser open, a bad message.
        c.frame(Array(#"{"type":"hello","protocol":1}"#.utf8))
        c.frame(Array(#"{"type":"key","seq":1,"name":"s","ctrl":true}"#.utf8))
        c.frame(Array(#"{"type":"batch","seq":2,"frame":5,"commands":[{"type":"pokeBegin","x":20,"y":15},{"type":"pokeEnd","x":20,"y":20}]}"#.utf8))
        // (The poke's run first: a new clip comes with nothing selected.)
        let poked = try collect(c, until: ["saved", "scene"]) { type, v in type != "scene" || v.object?["answers"] == JSONValue(2) }
        c.frame(Array(#"{"type":"batch","seq":3,"frame":5,"commands":[{"type":"select","x":20,"y":15,"radius":2},{"type":"openExportChooser"}]}"#.utf8))
        c.frame(Array(#"{"type":"explode"}"#.utf8))
        // (The studio message with the inspector and the chooser.)
        let more = try collect(c, until: ["error", "studio"]) { type, v in
            guard type == "studio", let s = v.object?["studio"]?.object else { return true }
            return s["inspector"] != .null && s["chooserChoices"] != .null && s["performed"] != .array([])
        }
        got.merge(poked) { _, b in b }
        got.merge(more) { _, b in b }
        // A magnetic outline being clicked and a stroke being painted (the snapshot's `outline` and `stroke`).
        c.frame(Array(#"{"type":"batch","seq":4,"frame":5,"commands":[{"type":"chooserCancel"},{"type":"outline"},{"type":"outlinePoint","x":30,"y":12},{"type":"strokeBegin","x":20,"y":15,"radius":6,"object":true},{"type":"strokeTo","x":24,"y":16}]}"#.utf8))
        let cutting = try collect(c, until: ["studio"]) { _, v in
            guard let s = v.object?["studio"]?.object else { return false }
            return s["outline"] != .null && s["stroke"] != .null
        }
        let snapshot = cutting["studio"]?.object?["studio"]?.object
        XCTAssertEqual(snapshot?["outline"], .array([.object(["x": JSONValue(30), "y": JSONValue(12)])]))
        XCTAssertEqual(snapshot?["stroke"], .object(["points": .array([.object(["x": JSONValue(20), "y": JSONValue(15)]), .object(["x": JSONValue(24), "y": JSONValue(16)])]),
                                                     "radius": JSONValue(6), "object": JSONValue(true)]))
        // (Checked against the document with the members of the snapshot that had the chooser open.)
        if var s = got["studio"]?.object?["studio"]?.object, let snapshot {
            s["outline"] = snapshot["outline"]
            s["stroke"] = snapshot["stroke"]
            got["studio"] = .object(["type": "studio", "studio": .object(s)])
        }
        // The poke as the core performed it, in image pixels.
        let performed = got["studio"]?.object?["studio"]?.object?["performed"]
        guard case .array(let pokes)? = performed, let poke = pokes.first?.object else {
            return XCTFail("no poke in \(performed?.text ?? "no studio message")")
        }
        XCTAssertEqual(poke["kind"], "touch")
        XCTAssertEqual(poke["from"], .object(["x": JSONValue(20), "y": JSONValue(15)]))
        XCTAssertEqual(poke["to"], .object(["x": JSONValue(20), "y": JSONValue(20)]))
        // (No cutout in this scene: the header as the server writes it, `StudioServer.cutoutMessage`.)
        let cut = StudioProtocol.binary(header: ["id": 1, "x0": 2, "y0": 3, "width": 4, "height": 5], type: "cutout", payload: [])
        got["binary cutout"] = JSONValue.parse(String(decoding: cut[4...], as: UTF8.self))
        // (No soundtrack in this scene: the header as the server writes it, `StudioProtocol.soundMessage`.)
        let sound = StudioProtocol.soundMessage(nil, id: 0)
        got["binary sound"] = JSONValue.parse(String(decoding: sound[4...], as: UTF8.self))
        got["exported"] = StudioProtocol.ExportedMessage(ok: true, message: "telegram: sticker.webm", url: "/files/sticker.webm").json
        if ProcessInfo.processInfo.environment["WOBBLE_WIRE_DUMP"] != nil {
            try got.map { "\($0.key): \($0.value.text)" }.sorted().joined(separator: "\n\n").write(toFile: "/tmp/wire-dump.txt", atomically: true, encoding: .utf8)
        }
        let server = try WireProtocolTests.examples().filter { !$0.fromPage }
        var documented = Set<String>()
        for e in server {
            let v = try XCTUnwrap(JSONValue.parse(e.text), "\(e.heading): not JSON")
            guard case .string(let type)? = v.object?["type"] else { XCTFail("\(e.heading): no type"); continue }
            let key = e.heading.hasPrefix("binary ") ? "binary " + type : type
            documented.insert(key)
            guard let real = got[key] else { XCTFail("\(key): no such message came"); continue }
            XCTAssertEqual(WireProtocolTests.shapeProblems(v, real), [], "\(e.heading)")
        }
        XCTAssertEqual(documented, ["hello", "scene", "studio", "saved", "error", "exported", "binary image", "binary field",
                                    "binary states", "binary cutout", "keys", "binary sound"])
    }
}
