import Foundation
import XCTest
import WobbleMedia
@testable import WobbleEngine

/// The preset's quality search (`PresetRun.QualityModel.search`) on sizes
/// made up to behave like an encoder's: which qualities it tries, in how
/// many rounds, and which one it keeps.
final class QualitySearchTests: XCTestCase {
    /// Runs the search with `bytes(q)` as the encoder; the choice and the rounds tried.
    func run(limit: Int, _ bytes: (Int) -> Int) throws -> (PresetRun.Candidate?, [[Int]]) {
        var rounds: [[Int]] = []
        let c = try PresetRun.QualityModel.search(limit: limit) { levels in
            rounds.append(levels)
            return levels.map { PresetRun.Candidate(format: .webm, bytes: bytes($0), level: $0) }
        }
        return (c, rounds)
    }

    /// The best quality that fits, by trying every one.
    func truth(limit: Int, _ bytes: (Int) -> Int) -> Int? {
        (PresetRun.lowestQuality...PresetRun.QualityModel.top).last { bytes($0) <= limit }
    }

    func testAnExponentialCurveIsFoundExactlyInTwoRounds() throws {
        let bytes = { (q: Int) in Int(20_000 * exp(0.045 * Double(q))) }
        for limit in [300_000, 600_000, 900_000, 1_200_000] {
            let (c, rounds) = try run(limit: limit, bytes)
            let best = truth(limit: limit, bytes)
            XCTAssertEqual(c?.level, best, "limit \(limit): \(rounds)")
            XCTAssertEqual(c?.bytes, best.map(bytes))
            XCTAssertEqual(rounds.count, 2, "limit \(limit): \(rounds)")
            XCTAssertEqual(rounds[0], [95, 80])
            XCTAssertLessThanOrEqual(rounds.map(\.count).max() ?? 0, 2, "two tries at a time")
        }
    }

    /// VP9's quality is a CRF of 64 steps, and real sizes wander off the
    /// line: the choice always fits, and is within 3 of the best.
    func testAStepsAndNoiseCurveFitsAndComesClose() throws {
        let crf = { (q: Int) in Int((63 - Double(q - 1) * 63 / 99).rounded()) }
        let bytes = { (q: Int) in
            let c = crf(q)
            let wobble = 1 + 0.04 * sin(Double(c) * 1.7)
            return Int(3_000_000 * exp(-0.07 * Double(c)) * wobble)
        }
        for limit in stride(from: 60_000, through: 2_500_000, by: 97_000) {
            let (c, rounds) = try run(limit: limit, bytes)
            let best = try XCTUnwrap(truth(limit: limit, bytes), "limit \(limit)")
            let chosen = try XCTUnwrap(c, "limit \(limit): \(rounds)")
            XCTAssertLessThanOrEqual(chosen.bytes, limit)
            XCTAssertGreaterThanOrEqual(chosen.level, best - 3, "limit \(limit): \(rounds)")
            XCTAssertLessThanOrEqual(rounds.count, 3, "limit \(limit): \(rounds)")
        }
    }

    func testTheTopFittingIsOneRound() throws {
        let (c, rounds) = try run(limit: 1000) { $0 * 10 }
        XCTAssertEqual(c?.level, 95)
        XCTAssertEqual(rounds, [[95, 80]])
    }

    /// Nothing fits: the lowest quality was tried (its size is the one the
    /// error names), and nothing is chosen.
    func testNothingFittingTriesTheLowest() throws {
        let (c, rounds) = try run(limit: 1000) { 5000 + $0 }
        XCTAssertNil(c)
        XCTAssertTrue(rounds.joined().contains(PresetRun.lowestQuality), "\(rounds)")
        XCTAssertLessThanOrEqual(rounds.count, 3)
    }

    /// Sizes that do not fall with quality (a GIF's palette can do that):
    /// still a choice that fits, found by halving.
    func testSizesThatDoNotFallStillFit() throws {
        let bytes = { (q: Int) in q >= 60 ? 10_000 : 500 }
        let (c, rounds) = try run(limit: 1000, bytes)
        let chosen = try XCTUnwrap(c, "\(rounds)")
        XCTAssertLessThanOrEqual(chosen.bytes, 1000)
        XCTAssertLessThan(chosen.level, 60)
    }
}
