import XCTest
@testable import WobbleAudio
import WobbleSystem

/// Precision, recall and F-measure of `found` against `truth`, each truth
/// time matched to at most one found time within `tolerance` (greedy, in order).
func fMeasure(_ found: [Double], _ truth: [Double], tolerance: Double) -> (f: Double, p: Double, r: Double) {
    var used = [Bool](repeating: false, count: found.count)
    var hits = 0
    for t in truth {
        var best = -1, bestD = Double.infinity
        for (i, f) in found.enumerated() where !used[i] && abs(f - t) <= tolerance && abs(f - t) < bestD {
            best = i
            bestD = abs(f - t)
        }
        if best >= 0 { used[best] = true; hits += 1 }
    }
    let p = found.isEmpty ? 0 : Double(hits) / Double(found.count)
    let r = truth.isEmpty ? 0 : Double(hits) / Double(truth.count)
    return (p + r > 0 ? 2 * p * r / (p + r) : 0, p, r)
}

final class AnalysisTests: XCTestCase {
    func report(_ name: String, _ m: (f: Double, p: Double, r: Double)) {
        print(String(format: "%@: F %.3f (precision %.3f, recall %.3f)", name, m.f, m.p, m.r))
    }

    func testExactMathMatchesLibm() throws {
        for x in [1e-9, 0.001, 0.5, 0.7071, 1, 1.5, 2, 10, 1234.5, 1e12] {
            XCTAssertEqual(ExactMath.log(x), Foundation.log(x), accuracy: 1e-14 * max(1, abs(Foundation.log(x))))
        }
        for x in [-700.0, -20, -1, -0.3, 0, 0.2, 1, 5, 50] {
            XCTAssertEqual(ExactMath.exp(x), Foundation.exp(x), accuracy: 1e-14 * Foundation.exp(x))
        }
        let (c, s) = ExactMath.unitCircle(1024, count: 1024)
        for k in stride(from: 0, to: 1024, by: 37) {
            XCTAssertEqual(c[k], cos(2 * Double.pi * Double(k) / 1024), accuracy: 1e-14)
            XCTAssertEqual(s[k], sin(2 * Double.pi * Double(k) / 1024), accuracy: 1e-14)
        }
    }

    func testFFTFindsASine() throws {
        var fft = RealFFT(size: 1024)
        let x = (0..<1024).map { cos(2 * Double.pi * 50 * Double($0) / 1024) }
        var m = [Double](repeating: 0, count: 513)
        x.withUnsafeBufferPointer { xb in m.withUnsafeMutableBufferPointer { fft.magnitudes(xb, into: $0) } }
        XCTAssertEqual(m[50], 512, accuracy: 1e-9)
        XCTAssertEqual(m[49] + m[51] + m[0] + m[512], 0, accuracy: 1e-9)
    }

    func testOnsetsOfSteadyDrums() throws {
        let t = DrumSynth.drums(bpm: 120, bars: 8)
        let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        let m = fMeasure(s.onsets(), t.onsets, tolerance: 0.05)
        report("onsets, steady 120 BPM (flux)", m)
        XCTAssertGreaterThanOrEqual(m.f, 0.95)
    }

    func testOnsetsOfSwing() throws {
        let t = DrumSynth.drums(bpm: 120, bars: 8, swing: 2.0 / 3)
        let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        let m = fMeasure(s.onsets(), t.onsets, tolerance: 0.05)
        report("onsets, swing (flux)", m)
        XCTAssertGreaterThanOrEqual(m.f, 0.95)
    }

    func testOnsetsOfTheOtherMethods() throws {
        let t = DrumSynth.drums(bpm: 120, bars: 8)
        let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        for method in [OnsetOptions.Method.energy, .hfc] {
            let m = fMeasure(s.onsets(OnsetOptions(method: method)), t.onsets, tolerance: 0.05)
            report("onsets, steady 120 BPM (\(method))", m)
            XCTAssertGreaterThanOrEqual(m.f, 0.9, "\(method)")
        }
    }

    /// The soft material with the options docs/API.md gives for it.
    func testOnsetsOfASoftPad() throws {
        let t = DrumSynth.pad(chords: 16)
        let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        let m = fMeasure(s.onsets(OnsetOptions(method: .flux, threshold: 0.05, minGap: 0.3)), t.onsets, tolerance: 0.05)
        report("onsets, soft pad (flux, threshold 0.05, minGap 0.3)", m)
        XCTAssertGreaterThanOrEqual(m.f, 0.85)
    }

    func testBeatsOfSteadyDrums() throws {
        let t = DrumSynth.drums(bpm: 120, bars: 8)
        let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        let m = fMeasure(s.beats(), t.beats, tolerance: 0.07)
        report("beats, steady 120 BPM", m)
        XCTAssertGreaterThanOrEqual(m.f, 0.9)
        XCTAssertEqual(s.tempo(), 120, accuracy: 1)
    }

    func testBeatsFollowATempoChange() throws {
        let t = DrumSynth.drums(tempo: [(120, 16), (96, 20)])
        let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        let m = fMeasure(s.beats(), t.beats, tolerance: 0.07)
        report("beats, 120 → 96 BPM", m)
        XCTAssertGreaterThanOrEqual(m.f, 0.9)
    }

    func testBeatsOfSwing() throws {
        let t = DrumSynth.drums(bpm: 120, bars: 8, swing: 2.0 / 3)
        let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        let m = fMeasure(s.beats(), t.beats, tolerance: 0.07)
        report("beats, swing", m)
        XCTAssertGreaterThanOrEqual(m.f, 0.9)
    }

    /// White noise has no periodic pulse: no beats, and a tempo of 0
    /// (as docs/API.md says), though the tracker alone would find a chain.
    func testNoiseHasNoBeats() throws {
        for seed: UInt64 in [1, 2, 3] {
            let t = DrumSynth.noise(seconds: 12, seed: seed)
            let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
            XCTAssertEqual(s.beats(), [], "seed \(seed)")
            XCTAssertEqual(s.tempo(), 0, "seed \(seed)")
        }
    }

    /// A syncopated groove whose snare and open hat (off the beat) rise
    /// more than the kick (on it): the beats are on the kicks.
    func testBeatsOfASyncopatedGrooveAreOnTheKicks() throws {
        for bpm in [96.0, 104, 112] {
            let t = DrumSynth.funk(bpm: bpm, bars: 8)
            let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
            let m = fMeasure(s.beats(), t.beats, tolerance: 0.07)
            report("beats, syncopated groove at \(bpm) BPM", m)
            XCTAssertGreaterThanOrEqual(m.f, 0.9, "\(bpm) BPM: \(s.beats())")
            XCTAssertEqual(s.tempo(), bpm, accuracy: 1)
        }
    }

    func testTheSameNumbersTwice() throws {
        let t = DrumSynth.drums(tempo: [(120, 8), (96, 8)])
        let a = try Sound(samples: t.samples, sampleRate: t.sampleRate), b = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        XCTAssertEqual(a.onsets(), b.onsets())
        XCTAssertEqual(a.beats(), b.beats())
        XCTAssertEqual(a.tempo(), b.tempo())
        for x in a.onsets() + a.beats() { XCTAssertEqual(x, (x * 1000).rounded() / 1000) }
    }

    func testLevel() throws {
        let sr = 44_100
        var samples = [Float](repeating: 0, count: sr)
        for i in sr / 2..<sr { samples[i] = i % 2 == 0 ? 0.5 : -0.5 }
        let s = try Sound(samples: samples, sampleRate: sr)
        XCTAssertEqual(s.level(from: 0, to: 0.5), 0)
        XCTAssertEqual(s.level(from: 0.5, to: 1), 0.5, accuracy: 1e-12)
        XCTAssertEqual(s.level(from: 0.25, to: 0.75), 0.5 / 2.squareRoot(), accuracy: 1e-3)
        XCTAssertEqual(s.level(from: 2, to: 3), 0)
        XCTAssertEqual(s.level(from: 0.7, to: 0.7), 0)
    }

    func testSilenceHasNoOnsetsOrBeats() throws {
        let s = try Sound(samples: [Float](repeating: 0, count: 44_100 * 3), sampleRate: 44_100)
        XCTAssertEqual(s.onsets(), [])
        XCTAssertEqual(s.beats(), [])
        XCTAssertEqual(s.tempo(), 0)
    }

    func testClicksAreFoundWhereTheyAre() throws {
        let t = DrumSynth.clicks(at: [0.5, 1.0, 1.733], duration: 2.5)
        let s = try Sound(samples: t.samples, sampleRate: t.sampleRate)
        let o = s.onsets()
        XCTAssertEqual(o.count, 3)
        for (f, truth) in zip(o, t.onsets) { XCTAssertEqual(f, truth, accuracy: 0.015) }
    }
}

final class ThreadingTests: XCTestCase {
    /// The detection functions are the same bits in one pass and in slices.
    func testSlicesGiveTheSameBitsAsOnePass() throws {
        let t = DrumSynth.drums(tempo: [(120, 8), (96, 8)])
        var results: [[UInt64]] = []
        for threads in [1, 2, 3] {
            let s = Spectra(samples: try CheckedArray.copy(of: t.samples), sampleRate: t.sampleRate)
            s.threads = threads
            results.append(OnsetOptions.Method.allCases.flatMap { s.detection($0).map(\.bitPattern) } + s.lowFlux().map(\.bitPattern))
        }
        XCTAssertEqual(results[0], results[1])
        XCTAssertEqual(results[0], results[2])
    }
}
