// wobble-sound-bench: the sound analysis benchmark and the drum
// synthesiser behind Scripts/bench-sound.sh and Scripts/make-drums.sh.
//
//   wobble-sound-bench synth steady|tempo-change|swing|pad|funk|noise OUT.wav [--seconds S]
//   wobble-sound-bench bench [--seconds 30] [--runs 5]
import Foundation
import WobbleSystem
import WobbleAudio

func fail(_ message: String) -> Never {
    Messages.writeStderr("wobble-sound-bench: \(message)\n")
    ThisProcess.exit(2)
}

func value(_ name: String, in args: [String], default d: Double) -> Double {
    guard let i = args.firstIndex(of: name) else { return d }
    guard i + 1 < args.count, let v = Double(args[i + 1]), v > 0 else { fail("\(name) needs a positive number") }
    return v
}

/// The named synthetic track, at least `seconds` long (the pattern repeats).
func track(_ name: String, seconds: Double) -> SyntheticTrack {
    switch name {
    case "steady": return DrumSynth.drums(bpm: 120, bars: max(1, Int((seconds / 2).rounded(.up))))
    case "tempo-change":
        let beats = max(2, Int((seconds / 0.5 / 2).rounded(.up)))
        return DrumSynth.drums(tempo: [(120, beats), (96, Int(Double(beats) * 0.8))])
    case "swing": return DrumSynth.drums(bpm: 120, bars: max(1, Int((seconds / 2).rounded(.up))), swing: 2.0 / 3)
    case "pad": return DrumSynth.pad(chords: max(2, Int(seconds)))
    case "funk": return DrumSynth.funk(bpm: 104, bars: max(1, Int((seconds / 2.3).rounded(.up))))
    case "noise": return DrumSynth.noise(seconds: seconds)
    default: fail("unknown track '\(name)' (steady, tempo-change, swing, pad, funk, noise)")
    }
}

let args = Array(CommandLine.arguments.dropFirst())
switch args.first {
case "synth":
    guard args.count >= 3 else { fail("usage: synth steady|tempo-change|swing|pad|funk|noise OUT.wav [--seconds S]") }
    let t = track(args[1], seconds: value("--seconds", in: args, default: 16))
    let bytes = WAVFile.encode(t.samples, sampleRate: t.sampleRate)
    do { try AtomicFile.write(bytes, to: args[2]) } catch { fail("cannot write \(args[2]): \(error)") }
    print("\(args[2]): \(String(format: "%.3f", t.duration)) s, \(t.onsets.count) onsets, \(t.beats.count) beats")
case "bench":
    let seconds = value("--seconds", in: args, default: 30)
    let runs = Int(value("--runs", in: args, default: 5))
    for name in ["steady", "tempo-change", "pad", "funk", "noise"] {
        var t = track(name, seconds: seconds)
        let n = Int(seconds * Double(t.sampleRate))
        if t.samples.count > n { t.samples = Array(t.samples[0..<n]) }
        var times: [Double] = []
        var summary = ""
        for _ in 0..<runs {
            let start = monotonic()
            guard let s = try? Sound(samples: t.samples, sampleRate: t.sampleRate) else { fail("out of memory") }
            let onsets = s.onsets(), beats = s.beats(), tempo = s.tempo()
            let ms = (monotonic() - start) * 1e3
            times.append(ms)
            summary = "\(onsets.count) onsets, \(beats.count) beats, \(tempo) BPM"
        }
        times.sort()
        let median = times.count % 2 == 1 ? times[times.count / 2] : (times[times.count / 2 - 1] + times[times.count / 2]) / 2
        print(String(format: "%-13@ %5.1f s of audio: onsets + beats + tempo in %6.1f ms median, %6.1f best of %d (%@)",
                     name as NSString, Double(t.samples.count) / Double(t.sampleRate), median, times[0], runs, summary as NSString))
    }
default:
    fail("usage: wobble-sound-bench synth KIND OUT.wav | bench [--seconds 30] [--runs 5]")
}
