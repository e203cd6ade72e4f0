import XCTest
import WobbleAudio
@testable import WobbleScript
import WobbleCore
import WobbleSystem

/// `sound()` and its handles in process, with a stub decoder (a synthetic
/// drum track): fields, methods, option tables, messages, `reset()`,
/// `soundtrack()` in the result.
final class SoundAPITests: XCTestCase {
    let fixture = SceneFixture()
    static let drums = DrumSynth.drums(bpm: 120, bars: 2)

    func run(_ source: String, maxFrames: Int = 100_000) throws -> ScriptResult {
        fixture.write("drums.wav", "stub")
        return try fixture.run(source) { o in
            o.maxFrames = maxFrames
            o.soundLoader = { path, _ in
                guard (path as NSString).lastPathComponent == "drums.wav" else { throw StubSoundError() }
                return try CheckedArray.copy(of: Self.drums.samples)
            }
        }
    }

    struct StubSoundError: Error, CustomStringConvertible { var description: String { "not a sound" } }

    func message(_ source: String, maxFrames: Int = 100_000) -> String? {
        do {
            _ = try run(source, maxFrames: maxFrames)
            XCTFail("no error: \(source)")
            return nil
        } catch let e as ScriptError {
            return e.message.replacingOccurrences(of: fixture.dir + "/", with: "")
        } catch {
            XCTFail("\(error)")
            return nil
        }
    }

    func testTheHandleAndTheSoundtrack() throws {
        let r = try run("""
            image("a.png")
            local s = sound("drums.wav")
            assert(s.duration == 5.1, s.duration)
            assert(tostring(s) == "sound 'drums.wav'", tostring(s))
            assert(#s:beats() == 8 and s:tempo() == 120, s:tempo())
            assert(#s:onsets() == 16 and #s:onsets{method = "energy", minGap = 0.2} == 16)
            assert(s:level(0, 0.05) == 0 and s:level(0.1, 0.2) > 0.1 and s:level(0.1, 0.2) <= 1)
            soundtrack(s, -0.5)
            wait(1)
            """)
        XCTAssertEqual(r.soundtrack?.offset, -0.5)
        XCTAssertEqual(r.soundtrack?.shown, "drums.wav")
        XCTAssertEqual(r.soundtrack?.duration ?? 0, 5.1, accuracy: 1e-9)
        XCTAssertTrue(r.inputs.contains { $0.role == .sound })
    }

    func testMessages() {
        XCTAssertEqual(message("local s = sound('other.wav')"), "scene.lua:1: sound: not a sound")
        XCTAssertEqual(message("sound(1)"), "scene.lua:1: bad argument #1 to 'sound' (string expected, got number)")
        XCTAssertEqual(message("local s = sound('drums.wav')\ns.duration = 2"),
                       "scene.lua:2: sound: sound handles are read-only (field 'duration')")
        XCTAssertEqual(message("local s = sound('drums.wav')\nlocal x = s.bpm"),
                       "scene.lua:2: sound: no field 'bpm' (fields: duration; methods: onsets, beats, tempo, level)")
        XCTAssertEqual(message("local s = sound('drums.wav')\ns:onsets(1)"),
                       "scene.lua:2: bad argument #1 to 'onsets' (table expected, got number)")
        XCTAssertEqual(message("local s = sound('drums.wav')\ns:onsets{threshold = -1}"),
                       "scene.lua:2: onsets: threshold must be at least 0 (got -1)")
        XCTAssertEqual(message("local s = sound('drums.wav')\ns:level(0)"),
                       "scene.lua:2: bad argument #2 to 'level' (number expected, got no value)")
        XCTAssertEqual(message("local s = sound('drums.wav')\nlocal b = s.beats\nb({})"),
                       "scene.lua:3: calling 'beats' on bad self (sound expected, got table)")
        XCTAssertEqual(message("local s = sound('drums.wav')\nreset()\ns:tempo()"),
                       "scene.lua:3: tempo: sound 'drums.wav' was loaded before reset(); load it again with sound()")
        XCTAssertEqual(message("local s = sound('drums.wav')\nsoundtrack(s, 0/0)"),
                       "scene.lua:2: bad argument #2 to 'soundtrack' (finite number expected, got nan)")
    }

    func testALongerSoundThanTheLongestClip() {
        XCTAssertEqual(message("fps(25)\nlocal s = sound('drums.wav')", maxFrames: 100),
                       "scene.lua:2: sound: 'drums.wav' is longer than the longest clip (4 s: --max-frames 100 at 25 fps)")
    }
}
