import WobbleCore
import WobbleStudioCore

/// The studio core's commands on the wire, written out by hand: each one
/// an object with its `type` and named members (`{"type": "drag", "x": 4,
/// "y": 3}`); docs/protocol.md lists them all with an example each. The
/// wire names are this file's, not the Swift cases' (renaming a case does
/// not change the wire; a new case does not compile until it has a name
/// here).
package enum WireCommands {
    /// Why a message cannot be read (one line).
    package struct Problem: Error, Equatable {
        package var message: String
        package init(_ message: String) { self.message = message }
    }

    /// The members of one object being read: each read marks its member
    /// used, and `finish` refuses members left over (a misspelt one is an
    /// error, not ignored).
    package struct Members {
        package let type: String
        private let members: [String: JSONValue]
        private var used: Set<String>

        package init(type: String, _ members: [String: JSONValue], allowing: Set<String> = []) {
            self.type = type
            self.members = members
            used = allowing.union(["type"])
        }

        private mutating func value(_ key: String) -> JSONValue? {
            used.insert(key)
            if case .null = members[key] ?? .null { return nil }
            return members[key]
        }

        private func wrong(_ key: String, _ want: String) -> Problem {
            Problem("'\(type)': '\(key)' is \(want) (got \(members[key]?.kindName ?? "nothing"))")
        }

        package mutating func optionalNumber(_ key: String) throws(Problem) -> Double? {
            guard let v = value(key) else { return nil }
            guard case .number(let n) = v else { throw wrong(key, "a number") }
            return n
        }

        package mutating func number(_ key: String) throws(Problem) -> Double {
            guard let n = try optionalNumber(key) else { throw wrong(key, "a number") }
            return n
        }

        package mutating func optionalInt(_ key: String) throws(Problem) -> Int? {
            guard let n = try optionalNumber(key) else { return nil }
            guard n == n.rounded(), abs(n) <= 1e15 else { throw wrong(key, "a whole number") }
            return Int(n)
        }

        package mutating func int(_ key: String) throws(Problem) -> Int {
            guard let n = try optionalInt(key) else { throw wrong(key, "a whole number") }
            return n
        }

        package mutating func optionalString(_ key: String) throws(Problem) -> String? {
            guard let v = value(key) else { return nil }
            guard case .string(let s) = v else { throw wrong(key, "a string") }
            return s
        }

        package mutating func string(_ key: String) throws(Problem) -> String {
            guard let s = try optionalString(key) else { throw wrong(key, "a string") }
            return s
        }

        package mutating func optionalBool(_ key: String) throws(Problem) -> Bool? {
            guard let v = value(key) else { return nil }
            guard case .bool(let b) = v else { throw wrong(key, "true or false") }
            return b
        }

        package mutating func bool(_ key: String) throws(Problem) -> Bool {
            guard let b = try optionalBool(key) else { throw wrong(key, "true or false") }
            return b
        }

        /// An object member (nil: absent or null).
        package mutating func optionalObject(_ key: String) throws(Problem) -> [String: JSONValue]? {
            guard let v = value(key) else { return nil }
            guard case .object(let o) = v else { throw wrong(key, "an object") }
            return o
        }

        /// An array member (nil: absent or null).
        package mutating func optionalArray(_ key: String) throws(Problem) -> [JSONValue]? {
            guard let v = value(key) else { return nil }
            guard case .array(let a) = v else { throw wrong(key, "an array") }
            return a
        }

        /// The point `x`, `y` (image pixels).
        package mutating func point() throws(Problem) -> Point { Point(try number("x"), try number("y")) }

        /// Refuses the members not read.
        package func finish() throws(Problem) {
            if let extra = members.keys.filter({ !used.contains($0) }).sorted().first {
                throw Problem("'\(type)' has no member '\(extra)'")
            }
        }
    }

    /// The command of a wire object (`type` and its members; `allowing`:
    /// the message's own members beside them, `seq` and `frame`).
    package static func decode(_ object: [String: JSONValue], allowing: Set<String> = []) throws(Problem) -> StudioCommand {
        guard case .string(let type)? = object["type"] else {
            throw Problem("a command has a 'type' (a string)")
        }
        var m = Members(type: type, object, allowing: allowing)
        let c: StudioCommand
        switch type {
        case "togglePlay": c = .togglePlay
        case "step": c = .step(try m.int("by"))
        case "home": c = .home
        case "pause": c = .pause
        case "seek": c = .seek(frame: try m.int("to"))
        case "toggleHandles": c = .toggleHandles
        case "quit": c = .quit(closing: try m.bool("closing"))
        case "answerQuit":
            let a = try m.string("answer")
            guard let answer = QuitGuard.Answer(wireName: a) else {
                throw Problem("'answerQuit': no answer '\(a)' (quit, saveAndQuit, back)")
            }
            c = .answerQuit(answer)
        case "backToEditing": c = .backToEditing
        case "save": c = .save
        case "undo": c = .undo
        case "redo": c = .redo
        case "add": c = .add(at: try m.point())
        case "grab": c = .grab(at: try m.point(), radius: try m.number("radius"))
        case "drag": c = .dragTo(try m.point())
        case "dragEnd": c = .dragEnd
        case "select": c = .select(at: try m.point(), radius: try m.number("radius"))
        case "selectNext": c = .selectNext(try m.int("by"))
        case "focusRow": c = .focusRow(by: try m.int("by"))
        case "stepParameter": c = .stepParameter(try m.int("by"))
        case "setParameter": c = .setParameter(key: try m.string("key"), value: try m.number("value"))
        case "setMotion": c = .setMotion(try m.string("motion"))
        case "setPin":
            let p = try m.optionalString("pin")
            guard let side = p.map({ PinSide(rawValue: $0) }) else { c = .setPin(nil); break }
            guard let side else {
                throw Problem("'setPin': no pin '\(p ?? "")' (\(PinSide.allCases.map(\.rawValue).joined(separator: ", ")), or null)")
            }
            c = .setPin(side)
        case "startRename": c = .startRename
        case "typeText": c = .type(try m.string("text"))
        case "renameBackspace": c = .renameBackspace
        case "renameCaret": c = .renameCaret(by: try m.int("by"))
        case "commitRename": c = .commitRename
        case "cancelRename": c = .cancelRename
        case "rename": c = .rename(try m.string("name"))
        case "inspectorPress":
            c = .inspectorPress(row: try m.int("row"), choice: try m.optionalString("choice"), fraction: try m.optionalNumber("fraction") ?? 0)
        case "inspectorSlide": c = .inspectorSlide(try m.number("fraction"))
        case "inspectorRelease": c = .inspectorRelease
        case "pokeBegin": c = .pokeBegin(try m.point())
        case "pokeEnd": c = .pokeEnd(try m.point())
        case "shake": c = .shake(ax: try m.number("ax"), ay: try m.number("ay"))
        case "accelerometer": c = .accelerometer(x: try m.number("x"), y: try m.number("y"))
        case "toggleRecording": c = .toggleRecording
        case "forgetPokes": c = .forgetPokes
        case "pressTick": c = .pressTick(try tick(m.optionalObject("ref")))
        case "hoverTimeline": c = .hoverTimeline(at: try m.optionalNumber("at"), within: try m.number("within"))
        case "dragTick": c = .dragTick(to: try m.number("to"))
        case "endTickDrag": c = .endTickDrag(at: try m.number("at"))
        case "deleteSelected": c = .deleteSelected
        case "toggleLoop": c = .toggleLoop
        case "bake": c = .bake
        case "cutOut": c = .cutOut
        case "strokeBegin": c = .strokeBegin(at: try m.point(), radius: try m.number("radius"), object: try m.bool("object"))
        case "strokeTo": c = .strokeTo(try m.point())
        case "strokeEnd": c = .strokeEnd
        case "outline": c = .outline
        case "outlinePoint": c = .outlinePoint(try m.point())
        case "export": c = .export(preset: try m.optionalString("preset"))
        case "openExportChooser": c = .openExportChooser
        case "chooserMove": c = .chooserMove(try m.int("by"))
        case "chooserChoose": c = .chooserChoose(try m.optionalInt("row"))
        case "chooserCancel": c = .chooserCancel
        case "writeStill": c = .writeStill
        case "toggleMute": c = .toggleMute
        default:
            throw Problem("no command '\(type)'")
        }
        try m.finish()
        return c
    }

    /// A pressed tick by what selecting it selects (`{"kind": "script",
    /// "line": 5}` or `{"kind": "baked", "index": 0}`; nil: none). Only the
    /// reference travels: the core finds the tick among its own.
    private static func tick(_ ref: [String: JSONValue]?) throws(Problem) -> Tick? {
        guard let ref else { return nil }
        let r = try tickRef(ref)
        return Tick(time: 0, label: "", performed: false, ref: r)
    }

    package static func tickRef(_ o: [String: JSONValue]) throws(Problem) -> TickRef {
        var m = Members(type: "ref", o)
        let kind = try m.string("kind")
        let r: TickRef
        switch kind {
        case "script": r = .script(line: try m.int("line"))
        case "baked": r = .baked(index: try m.int("index"))
        default: throw Problem("'ref': no kind '\(kind)' (script, baked)")
        }
        try m.finish()
        return r
    }

    package static func json(_ ref: TickRef?) -> JSONValue {
        switch ref {
        case nil: return .null
        case .script(let line)?: return .object(["kind": .string("script"), "line": JSONValue(line)])
        case .baked(let index)?: return .object(["kind": .string("baked"), "index": JSONValue(index)])
        }
    }

    /// The wire object of a command (`unbound` has none: a key is sent as a key).
    package static func encode(_ c: StudioCommand) -> [String: JSONValue]? {
        func pt(_ p: Point) -> [String: JSONValue] { ["x": JSONValue(p.x), "y": JSONValue(p.y)] }
        let type: String
        var m: [String: JSONValue] = [:]
        switch c {
        case .togglePlay: type = "togglePlay"
        case .step(let d): type = "step"; m["by"] = JSONValue(d)
        case .home: type = "home"
        case .pause: type = "pause"
        case .seek(let k): type = "seek"; m["to"] = JSONValue(k)
        case .toggleHandles: type = "toggleHandles"
        case .quit(let closing): type = "quit"; m["closing"] = JSONValue(closing)
        case .answerQuit(let a): type = "answerQuit"; m["answer"] = JSONValue(a.wireName)
        case .backToEditing: type = "backToEditing"
        case .save: type = "save"
        case .undo: type = "undo"
        case .redo: type = "redo"
        case .add(let p): type = "add"; m = pt(p)
        case .grab(let p, let r): type = "grab"; m = pt(p); m["radius"] = JSONValue(r)
        case .dragTo(let p): type = "drag"; m = pt(p)
        case .dragEnd: type = "dragEnd"
        case .select(let p, let r): type = "select"; m = pt(p); m["radius"] = JSONValue(r)
        case .selectNext(let d): type = "selectNext"; m["by"] = JSONValue(d)
        case .focusRow(let d): type = "focusRow"; m["by"] = JSONValue(d)
        case .stepParameter(let n): type = "stepParameter"; m["by"] = JSONValue(n)
        case .setParameter(let k, let v): type = "setParameter"; m["key"] = JSONValue(k); m["value"] = JSONValue(v)
        case .setMotion(let name): type = "setMotion"; m["motion"] = JSONValue(name)
        case .setPin(let p): type = "setPin"; m["pin"] = JSONValue(p?.rawValue)
        case .startRename: type = "startRename"
        case .type(let t): type = "typeText"; m["text"] = JSONValue(t)
        case .renameBackspace: type = "renameBackspace"
        case .renameCaret(let d): type = "renameCaret"; m["by"] = JSONValue(d)
        case .commitRename: type = "commitRename"
        case .cancelRename: type = "cancelRename"
        case .rename(let name): type = "rename"; m["name"] = JSONValue(name)
        case .inspectorPress(let row, let choice, let fraction):
            type = "inspectorPress"; m["row"] = JSONValue(row); m["fraction"] = JSONValue(fraction)
            if let choice { m["choice"] = JSONValue(choice) }
        case .inspectorSlide(let f): type = "inspectorSlide"; m["fraction"] = JSONValue(f)
        case .inspectorRelease: type = "inspectorRelease"
        case .pokeBegin(let p): type = "pokeBegin"; m = pt(p)
        case .pokeEnd(let p): type = "pokeEnd"; m = pt(p)
        case .shake(let ax, let ay): type = "shake"; m["ax"] = JSONValue(ax); m["ay"] = JSONValue(ay)
        case .accelerometer(let x, let y): type = "accelerometer"; m["x"] = JSONValue(x); m["y"] = JSONValue(y)
        case .toggleRecording: type = "toggleRecording"
        case .forgetPokes: type = "forgetPokes"
        case .pressTick(let t): type = "pressTick"; m["ref"] = json(t?.ref)
        case .hoverTimeline(let at, let within): type = "hoverTimeline"; m["at"] = JSONValue(at); m["within"] = JSONValue(within)
        case .dragTick(let t): type = "dragTick"; m["to"] = JSONValue(t)
        case .endTickDrag(let t): type = "endTickDrag"; m["at"] = JSONValue(t)
        case .deleteSelected: type = "deleteSelected"
        case .toggleLoop: type = "toggleLoop"
        case .bake: type = "bake"
        case .cutOut: type = "cutOut"
        case .strokeBegin(let p, let r, let object):
            type = "strokeBegin"; m = pt(p); m["radius"] = JSONValue(r); m["object"] = JSONValue(object)
        case .strokeTo(let p): type = "strokeTo"; m = pt(p)
        case .strokeEnd: type = "strokeEnd"
        case .outline: type = "outline"
        case .outlinePoint(let p): type = "outlinePoint"; m = pt(p)
        case .export(let preset): type = "export"; m["preset"] = JSONValue(preset)
        case .openExportChooser: type = "openExportChooser"
        case .chooserMove(let d): type = "chooserMove"; m["by"] = JSONValue(d)
        case .chooserChoose(let row): type = "chooserChoose"; m["row"] = JSONValue(row)
        case .chooserCancel: type = "chooserCancel"
        case .writeStill: type = "writeStill"
        case .toggleMute: type = "toggleMute"
        case .unbound: return nil
        }
        m["type"] = .string(type)
        return m
    }
}

extension QuitGuard.Answer {
    /// The answer's name on the wire.
    package var wireName: String {
        switch self {
        case .quit: return "quit"
        case .saveAndQuit: return "saveAndQuit"
        case .back: return "back"
        }
    }

    package init?(wireName: String) {
        switch wireName {
        case "quit": self = .quit
        case "saveAndQuit": self = .saveAndQuit
        case "back": self = .back
        default: return nil
        }
    }
}
