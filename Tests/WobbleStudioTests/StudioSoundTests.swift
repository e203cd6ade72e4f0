import Foundation
import XCTest
import WobbleAudio
import WobbleCore
import WobbleEngine
import WobbleMedia
@testable import WobbleStudio
@testable import WobbleStudioCore
import WobbleSystem

private func key(_ k: StudioKey, shift: Bool = false, ctrl: Bool = false) -> StudioInput {
    .key(k, shift: shift, ctrl: ctrl)
}

/// An audio device for in-process tests: it takes blocks of samples as the
/// manual clock passes (at `speed` times the clock: a device whose clock
/// runs fast or slow), keeps what it took, and answers the sample heard
/// through the studio's own `AudioClock`.
final class FakeAudioSink: AudioSink {
    let clock: ManualClock
    let block: Int
    let latency: Int
    let speed: Double
    var muted = false
    let name = "fake audio"
    /// Every `play` (clip sample, clock time) and `stop` (clock time).
    private(set) var plays: [(position: Int, at: Double)] = []
    private(set) var stops: [Double] = []
    /// The samples taken since the last `play`, and whether each block was muted.
    private(set) var taken: [Float] = []
    private(set) var mutedBlocks: [Bool] = []
    /// Every answer of `heard`: clock time and clip sample.
    private(set) var answers: [(at: Double, sample: Double)] = []
    private var track: AudioTrack?
    private var position = 0
    private var start = 0
    private var nextTake = 0.0
    private var audioClock = AudioClock(rate: 44_100, latency: 0)

    init(clock: ManualClock, block: Int = 441, latency: Int = 441, speed: Double = 1) {
        self.clock = clock
        self.block = block
        self.latency = latency
        self.speed = speed
    }

    func play(_ track: AudioTrack, from position: Int) {
        plays.append((position, clock.t))
        self.track = track
        self.position = position
        start = position
        taken = []
        nextTake = clock.t
        audioClock = AudioClock(rate: Double(track.rate), latency: latency)
    }

    func stop() {
        stops.append(clock.t)
        track = nil
    }

    func heard(at now: Double) -> Double? {
        guard let track else { return nil }
        while nextTake <= now {
            var buf = [Float](repeating: 0, count: block)
            buf.withUnsafeMutableBufferPointer { position = track.fill($0, from: position, muted: muted) }
            taken += buf
            mutedBlocks.append(muted)
            audioClock.took(block, at: nextTake)
            nextTake += Double(block) / (Double(track.rate) * speed)
        }
        let h = (Double(start) + audioClock.heard(at: now)).truncatingRemainder(dividingBy: Double(track.length))
        answers.append((now, h))
        return h
    }
}

/// A mono 16-bit WAV of `samples` at 44.1 kHz.
func wav(_ samples: [Float]) -> Data {
    Data(WAVFile.encode(samples, sampleRate: 44_100))
}

/// A click (10 ms of a decaying 1 kHz tone) every `every` seconds from 0.1 s for `seconds`.
func clickTrack(every: Double, seconds: Double) -> [Float] {
    let n = Int(seconds * 44_100)
    var s = [Float](repeating: 0, count: n)
    var t = 0.1
    while t < seconds {
        let i0 = Int((t * 44_100).rounded())
        for j in 0..<441 where i0 + j < n {
            s[i0 + j] = Float(0.8 * exp(-Double(j) / 120) * sin(2 * Double.pi * 1000 * Double(j) / 44_100))
        }
        t += every
    }
    return s
}

/// The soundtrack in the studio, in-process: the preview's frame follows
/// the samples the audio device took (not the wall clock), the sound
/// stops and starts with the transport, loops with the clip, mutes with
/// `M`, keeps its place on reload; without a device the studio plays
/// silently and says so once; beats and onsets are ticks on the timeline.
final class StudioSoundTests: InProcessStudioCase {
    /// A 10 fps scene of 24 frames (2.4 s) moving all the time, with a
    /// click every 0.4 s from 0.1 s as its soundtrack (`offset` on the clip).
    func writeSoundScene(offset: Double = 0, width: Int = 28) throws {
        try box.writeImage("img.png", Sandbox.pattern(width: 40, height: 30))
        try wav(clickTrack(every: 0.4, seconds: 4.8)).write(to: URL(fileURLWithPath: box.path("clicks.wav")))
        try box.write("s.lua", """
        image("img.png")
        fps(10)
        soundtrack(sound("clicks.wav"), \(offset))
        addSketch{x = 6, y = 5, w = \(width), h = 20, duration = 5}
        prepare()
        impulse(1, 1, 0.3)
        wait(2.4)
        """)
    }

    func runStudio(_ scene: String, clock: ManualClock, sink: @escaping () throws -> any AudioSink,
                   script: [(at: Double, input: StudioInput)],
                   prepare: @escaping (FakeSurface, StudioApp) -> Void = { _, _ in }) throws -> (status: Int32, surface: FakeSurface, app: StudioApp) {
        audio = sink
        return try runStudio(scene, clock: clock, script: script, prepare: prepare)
    }

    /// The device's clock runs 25% fast: the preview runs with it, frame
    /// `k` shown exactly while the sample heard is in frame `k`, and it
    /// loops when the sound does (at 1.92 s of the clock, not 2.4 s).
    func testThePreviewFollowsTheSamplesTheDeviceTakes() throws {
        try writeSoundScene()
        let expected = try headlessFrames("s.lua", count: 24)
        let clock = ManualClock()
        let t0 = clock.t
        let sink = FakeAudioSink(clock: clock, speed: 1.25)
        let (status, surface, app) = try runStudio("s.lua", clock: clock, sink: { sink }, script: [
            (t0, key(.h)),
            (t0 + 2.3, .quit),
        ])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(sink.plays.map(\.position), [0], "played once, from the clip's start")
        // Each picture is the headless frame of the sound heard when it was
        // chosen (the same clock time).
        var shown: [(at: Double, k: Int)] = []
        for f in surface.frames where f.at > t0 + 0.005 {
            guard let img = f.image, let h = sink.answers.last(where: { $0.at <= f.at + 1e-9 }) else { continue }
            let k = Int((h.sample / 44_100 * 10 + 1e-9).rounded(.down))
            XCTAssertTrue(img == expected[k], "frame at \(f.at - t0) s, sound at \(h.sample / 44_100) s: frame \(k)")
            shown.append((f.at, k))
        }
        XCTAssertGreaterThan(shown.count, 25)
        // Frame 12 (1.2 s of sound) at 0.96 s of the clock plus the latency (10 ms).
        let twelve = try XCTUnwrap(shown.first { $0.k == 12 })
        XCTAssertEqual(twelve.at - t0, 1.2 / 1.25 + 0.01, accuracy: 0.012)
        // The loop: back to frame 0 when the sound wraps.
        let wrapped = try XCTUnwrap(shown.first { $0.at > t0 + 1 && $0.k == 0 })
        XCTAssertEqual(wrapped.at - t0, 2.4 / 1.25 + 0.01, accuracy: 0.012)
        // What the device took is the soundtrack from the clip's start, and
        // again from its start after the clip's 2.4 s.
        let samples = try XCTUnwrap(app.session.sound?.samples)
        XCTAssertGreaterThan(sink.taken.count, 105_840 + 4410)
        XCTAssertEqual(Array(sink.taken[0..<105_840]), Array(samples[0..<105_840]))
        XCTAssertEqual(Array(sink.taken[105_840..<(105_840 + 4410)]), Array(samples[0..<4410]), "looped with the clip")
        XCTAssertNotEqual(samples[4410..<8820].map { abs($0) }.max() ?? 0, 0, "the click is there")
        XCTAssertEqual(Array(sink.taken[105_840..<(105_840 + 8820)]), Array(samples[0..<8820]), "the click after the loop")
        // Picture minus sound, per frame presented: within one frame behind.
        XCTAssertTrue(app.soundSync.offsets.allSatisfy { $0 <= 0.001 && $0 > -100.001 }, "\(app.soundSync.offsets)")
        XCTAssertEqual(app.soundSync.clockDrift, 0.25 * app.soundSync.measuredSeconds * 1000, accuracy: 15, "the device ran 25% fast")
    }

    /// Paused, stepping and scrubbing the sound stops; `Space` plays it
    /// again from the playhead's frame; a click on the timeline while
    /// playing silences it (the playhead pauses there).
    func testTheTransportStartsAndStopsTheSound() throws {
        try writeSoundScene()
        let layout = Layout(imageWidth: 40, imageHeight: 30, screen: (1920, 1080))
        let y = layout.chromeY + 10
        let clock = ManualClock()
        let t0 = clock.t
        let sink = FakeAudioSink(clock: clock, latency: 0)
        let (status, _, app) = try runStudio("s.lua", clock: clock, sink: { sink }, script: [
            (t0, key(.h)),
            (t0 + 0.35, key(.space)),     // pause on frame 3
            (t0 + 0.5, key(.right)),      // 4
            (t0 + 0.6, key(.space)),      // plays from frame 4
            (t0 + 0.8, .mouseDown(x: layout.windowWidth / 2, y: y)),   // scrub: frame 12, paused
            (t0 + 0.85, .mouseUp(x: layout.windowWidth / 2, y: y)),
            (t0 + 1.0, key(.space)),      // plays from 12
            (t0 + 1.1, .quit),
        ])
        XCTAssertEqual(status, 0)
        XCTAssertEqual(sink.plays.map(\.position), [0, 4 * 4410, 12 * 4410])
        XCTAssertEqual(sink.plays.map { (($0.at - t0) * 100).rounded() / 100 }, [0, 0.6, 1.0])
        XCTAssertEqual(sink.stops.prefix(2).map { (($0 - t0) * 100).rounded() / 100 }, [0.35, 0.8])
        XCTAssertTrue(app.soundSync.offsets.allSatisfy { $0 <= 0.001 && $0 > -100.001 })
    }

    /// `M` mutes: the device takes silence and the clock goes on (the
    /// preview does not stop); `M` again brings the sound back.
    func testMuteSilencesTheSoundButNotTheClock() throws {
        try writeSoundScene()
        let clock = ManualClock()
        let t0 = clock.t
        let sink = FakeAudioSink(clock: clock)
        var said: [String] = []
        let (status, surface, _) = try runStudio("s.lua", clock: clock, sink: { sink }, script: [
            (t0 + 0.2, key(.m)),
            (t0 + 0.6, key(.m)),
            (t0 + 1.1, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.3, { said.append(app.message) }), (t0 + 0.7, { said.append(app.message) })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(said, ["sound muted (M)", "sound on"])
        XCTAssertEqual(sink.plays.count, 1, "muting does not stop the device")
        // Blocks of 10 ms: muted from 0.2 s to 0.6 s, sound before and after.
        let blocks = sink.mutedBlocks
        XCTAssertTrue(blocks.prefix(20).allSatisfy { !$0 } && blocks[22..<58].allSatisfy { $0 } && blocks[62...].allSatisfy { !$0 }, "\(blocks)")
        XCTAssertGreaterThan(sink.taken[(10 * 441)..<(15 * 441)].map { abs($0) }.max() ?? 0, 0.1, "the click at 0.1 s is heard")
        let muted = sink.taken[(25 * 441)..<(55 * 441)]
        XCTAssertTrue(muted.allSatisfy { $0 == 0 }, "silence while muted (the click at 0.5 s is not heard)")
        XCTAssertGreaterThan(sink.taken[(90 * 441)..<(95 * 441)].map { abs($0) }.max() ?? 0, 0.1, "the click at 0.9 s is heard")
        // Frames went on while muted.
        let whileMuted = surface.frames.filter { $0.at > t0 + 0.25 && $0.at < t0 + 0.55 }.compactMap(\.image)
        XCTAssertGreaterThan(whileMuted.count, 2)
        XCTAssertNotEqual(whileMuted.first, whileMuted.last)
    }

    /// A reload with the same sound goes on playing where it was; a reload
    /// that moves the soundtrack (`offset`) plays the new one from the
    /// playhead, not from 0.
    func testAReloadKeepsThePlaceOfTheSound() throws {
        try writeSoundScene()
        let clock = ManualClock()
        let t0 = clock.t
        let sink = FakeAudioSink(clock: clock, latency: 0)
        let scene = try read("s.lua")
        var generations: [Int] = []
        let (status, _, app) = try runStudio("s.lua", clock: clock, sink: { sink }, script: [
            (t0 + 1.5, .quit),
        ]) { surface, app in
            surface.actions = [
                (t0 + 0.3, {
                    try? self.box.write("s.lua", scene.replacingOccurrences(of: "w = 28", with: "w = 26"))
                    surface.holdWhile = { app.session.generation < 2 }
                }),
                (t0 + 0.8, {
                    generations.append(app.session.generation)
                    try? self.box.write("s.lua", scene.replacingOccurrences(of: "\"), 0.0)", with: "\"), 0.1)"))
                    surface.holdWhile = { app.session.sound?.track.offset != 0.1 }
                }),
            ]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(generations, [2])
        XCTAssertEqual(app.session.sound?.track.offset, 0.1)
        XCTAssertEqual(sink.plays.count, 2, "\(sink.plays)")
        let again = try XCTUnwrap(sink.plays.last)
        // The playhead went on with the sound (the clock passed 0.8 s and
        // more: the watcher's quiet period), looping over the 2.4 s.
        XCTAssertGreaterThan(again.position, 0)
        XCTAssertEqual(Double(again.position) / 44_100, (again.at - t0).truncatingRemainder(dividingBy: 2.4), accuracy: 0.02)
    }

    /// Without an audio device the clip plays on the wall clock, silently,
    /// with one status line saying so (the device is tried once).
    func testWithoutAnAudioDeviceTheStudioPlaysSilently() throws {
        try writeSoundScene()
        let expected = try headlessFrames("s.lua", count: 24)
        let clock = ManualClock()
        let t0 = clock.t
        var tries = 0
        var rows: [String] = []
        let (status, surface, _) = try runStudio("s.lua", clock: clock, sink: {
            tries += 1
            throw AudioUnavailable(description: "no audio device (SDL's 'dummy' audio driver)")
        }, script: [
            (t0, key(.h)),
            (t0 + 0.5, key(.right)),
            (t0 + 0.6, key(.space)),
            (t0 + 1.0, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.3, { rows = app.statusRows })]
        }
        XCTAssertEqual(status, 0)
        XCTAssertEqual(tries, 1)
        XCTAssertEqual(rows.suffix(2).joined(separator: " "),
                       "no audio device (SDL's 'dummy' audio driver): the soundtrack 'clicks.wav' is not heard; the preview keeps the wall clock")
        for f in surface.frames where f.at < t0 + 0.45 {
            guard let img = f.image, let k = expected.firstIndex(of: img) else { continue }
            XCTAssertEqual(f.at - t0, Double(k) / 10, accuracy: 0.011, "frame \(k) on the wall clock")
        }
    }

    /// The soundtrack's beats and onsets are ticks on the timeline (beats
    /// at the clicks), named when hovered.
    func testBeatsAndOnsetsAreTicksOnTheTimeline() throws {
        try writeSoundScene(offset: 0.2)
        let layout = Layout(imageWidth: 40, imageHeight: 30, screen: (1920, 1080))
        let clock = ManualClock()
        let t0 = clock.t
        let sink = FakeAudioSink(clock: clock)
        var hovered: String?
        var beats: [Double] = []
        let (status, surface, app) = try runStudio("s.lua", clock: clock, sink: { sink }, script: [
            (t0, key(.home)),
            (t0 + 0.2, .mouseMove(x: Chrome.x(0.7, width: layout.windowWidth, length: 2.4), y: layout.chromeY + 8)),
            (t0 + 0.4, .quit),
        ]) { surface, app in
            surface.actions = [(t0 + 0.3, {
                hovered = app.hovered
                beats = app.session.sound?.beats ?? []
            })]
        }
        XCTAssertEqual(status, 0)
        let sound = try XCTUnwrap(app.session.sound)
        // Clicks every 0.4 s from 0.3 s on the clip.
        let clicks = stride(from: 0.3, to: 2.4, by: 0.4).map { $0 }
        XCTAssertGreaterThanOrEqual(beats.filter { $0 < 2.4 }.count, 4, "\(beats)")
        for b in beats where b < 2.4 {
            XCTAssertTrue(clicks.contains { abs($0 - b) < 0.05 }, "beat \(b) on a click")
        }
        XCTAssertEqual(sound.onsets.filter { $0 < 2.4 }.count, clicks.count, "\(sound.onsets)")
        XCTAssertEqual(hovered, "beat \(1 + (beats.firstIndex { abs($0 - 0.7) < 0.05 } ?? -1)) at \(String(format: "%.3f", beats.first { abs($0 - 0.7) < 0.05 } ?? 0)) s of the soundtrack 'clicks.wav'")
        // Drawn: a beat's column is the beat colour at the bar's top, an
        // onset's (not a beat's) the onset colour.
        let chrome = try XCTUnwrap(surface.chromes.last?.image)
        func colour(_ t: Double, y: Int) -> [UInt8] {
            let i = (y * chrome.width + Chrome.x(t, width: chrome.width, length: 2.4)) * 4
            return Array(chrome.pixels[i..<(i + 3)])
        }
        let beat = [Chrome.beatColor.0, Chrome.beatColor.1, Chrome.beatColor.2]
        let onset = [Chrome.onsetColor.0, Chrome.onsetColor.1, Chrome.onsetColor.2]
        for b in beats where b < 2.4 { XCTAssertEqual(colour(b, y: 8), beat, "beat at \(b)") }
        for o in sound.onsets where o < 2.4 && !beats.contains(where: { abs(Chrome.x($0, width: chrome.width, length: 2.4) - Chrome.x(o, width: chrome.width, length: 2.4)) <= 1 }) {
            XCTAssertEqual(colour(o, y: 5), onset, "onset at \(o)")
        }
        XCTAssertNotEqual(colour(0.9, y: 5), beat, "no tick between clicks")
    }
}
