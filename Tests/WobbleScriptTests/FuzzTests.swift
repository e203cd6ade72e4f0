import XCTest
import Foundation
@testable import WobbleScript
import WobbleCore
import WobbleTestSupport

/// A fuzz harness for the Lua API: random calls of every API function and
/// handle operation with random arguments (NaN, ±inf, huge numbers, nested
/// tables, functions, coroutines, wrong and stale handles), each under
/// pcall. Asserts that nothing crashes and that every failure is a clean
/// string message (`scene.lua:N: bad argument ...`, `scene.lua:N: impulse: ...`).
///
/// `WOBBLE_FUZZ_CASES` sets the number of calls (default 3000),
/// `WOBBLE_FUZZ_SEED` the seed (default 1).
final class FuzzTests: XCTestCase {

    static let numbers = ["0", "1", "-1", "2", "0.5", "3", "1e308", "-1e308", "1/0", "-1/0", "0/0", "math.huge",
                          "math.mininteger", "math.maxinteger", "2^53", "1e-300", "10", "100", "1.2", "0.01", "-0.0",
                          // Huge coordinates (issue 9): at, just past and far past the ±1e6 limit.
                          "1e6", "-1e6", "1000000.5", "-2e6", "1e19", "-1e19", "2^63", "-2^63", "5e-324", "1e300"]
    static let strings = ["'str'", "''", "'1'", "'cat.png'", "'big.png'", "'bad.png'", "'../x'", "'t.csv'", "'bad.csv'",
                          "'none.csv'", "'/etc/passwd'", "'a\\0b'", "string.rep('x', 300)", "'lt'", "'center'", "'x'",
                          "'spring'", "'classic'", "'sum'", "'first'", "'mirror'", "'clamp'"]
    static let functionNames = ["image", "size", "fps", "output", "addSketch", "sketchModels", "clear", "prepare",
                                "wobbleModels", "impulse", "touch", "enableMotion", "shake", "reset", "overlay", "wait",
                                "time", "untilStill", "overlap", "edges"]
    static let sketchKeys = ["lt", "rt", "rb", "lb", "center", "x", "y", "w", "h", "duration", "decay", "threshold",
                             "strength", "widht", "1", "motion", "motion", "damping"]
    static let fieldKeys = ["lt", "rt", "rb", "lb", "center", "direction", "amplitude", "lastAnimationBeginTime", "live",
                            "duration", "decay", "threshold", "strength", "motion", "damping", "topLineCenter", "contains", "nope", "1", "__gc",
                            "__index"]

    func value(_ r: inout SplitMix64, depth: Int = 0) -> String {
        switch r.int(depth > 2 ? 4 : 12) {
        case 0: return r.pick(FuzzTests.numbers)
        case 1: return r.pick(FuzzTests.strings)
        case 2: return "H[\(r.int(12) + 1)]"                               // a handle (maybe nil, maybe stale)
        case 3: return r.pick(["nil", "true", "false"])
        case 4: return "{\(value(&r, depth: depth + 1)), \(value(&r, depth: depth + 1))}"   // {x, y}-ish
        case 5: return "{x = \(value(&r, depth: depth + 1)), y = \(value(&r, depth: depth + 1))}"
        case 6: return sketchSpec(&r, depth: depth + 1)
        case 7: return r.pick(["function() end", "print", "coroutine.create(function() end)", "wobbleModels",
                               "setmetatable({}, {__index = function() error('boom') end})", "{{{{{}}}}}",
                               "{1, 2, 3}", "{x = 1}", "{[{}] = 1}", "{[1.5] = 2, [2] = 3}", "{x = 1, y = 2, z = 3}"])
        case 8: return "H[\(r.int(12) + 1)] and H[\(r.int(12) + 1)].\(r.pick(["lt", "center", "direction", "rb"]))"
        case 9: return "(\(r.pick(FuzzTests.numbers)) * \(r.pick(FuzzTests.numbers)))"
        default: return r.pick(FuzzTests.numbers)
        }
    }

    func sketchSpec(_ r: inout SplitMix64, depth: Int) -> String {
        var parts: [String] = []
        for _ in 0..<r.int(6) {
            let key = r.pick(FuzzTests.sketchKeys)
            let v: String
            if ["lt", "rt", "rb", "lb", "center"].contains(key) && r.chance(probability: 0.7) {
                v = "{\(r.pick(FuzzTests.numbers)), \(r.pick(FuzzTests.numbers))}"
            } else {
                v = depth > 2 ? r.pick(FuzzTests.numbers) : value(&r, depth: depth + 1)
            }
            parts.append(key == "1" ? v : "\(key) = \(v)")
        }
        return "{" + parts.joined(separator: ", ") + "}"
    }

    /// One random operation as a Lua expression returning its results.
    func operation(_ r: inout SplitMix64) -> String {
        let h = "H[\(r.int(12) + 1)]"
        switch r.int(20) {
        case 0..<11:
            let f = r.pick(FuzzTests.functionNames)
            let args = (0..<r.int(6)).map { _ in value(&r) }
            return "\(f)(\(args.joined(separator: ", ")))"
        case 11: return "addSketch(\(sketchSpec(&r, depth: 0)))"
        case 12: return "(function() local s = \(h) local _ = s[\(r.pick(FuzzTests.fieldKeys.map { "'\($0)'" } + ["1", "{}"]))] return _ end)()"
        case 13: return "(function() \(h)[\(r.pick(FuzzTests.fieldKeys.map { "'\($0)'" } + ["1", "0/0 == 0 and 1 or 2"]))] = \(value(&r)) end)()"
        case 14: return "\(h):\(r.pick(["topLineCenter", "leftLineCenter", "bottomLineCenter", "rightLineCenter", "contains"]))(\(value(&r)), \(value(&r)))"
        case 15: return "\(h).contains(\(value(&r)), \(value(&r)), \(value(&r)))"
        case 16: return "tostring(\(h)), \(h) == \(h), rawequal(\(h), \(h))"
        case 17: return "impulse(\(r.pick([h, "nil", "1", "2", "#wobbleModels()"])), \(r.pick(FuzzTests.numbers)), \(r.pick(FuzzTests.numbers)))"
        case 18: return r.pick(["prepare()", "reset()", "clear()", "enableMotion()", "untilStill(1)", "wait(0.05)"])
        default: return "touch(\(r.pick(FuzzTests.numbers)), \(r.pick(FuzzTests.numbers)), \(r.pick(FuzzTests.numbers)), \(r.pick(FuzzTests.numbers)))"
        }
    }

    /// The Lua checking each result: handles are collected, errors must be
    /// clean strings.
    static let harness = """
    H = {}
    local fuzzErrors, fuzzCalls = 0, 0
    local names = {}
    for _, n in ipairs{'image','size','fps','output','addSketch','sketchModels','clear','prepare','wobbleModels',
      'impulse','touch','enableMotion','shake','reset','overlay','wait','time','untilStill','sketch','wobble',
      'overlap','edges',
      'setmetatable'} do names[n] = true end
    local function clean(msg)
      if type(msg) ~= 'string' then return false end
      if msg == 'not enough memory' then return true end
      local rest = msg:match('^[^:]*:%d+: (.*)$')
      if not rest then return false end
      if rest:match("^bad argument #%d+ to '[%w_]+' %(.+%)$") then return true end
      if rest:match("^calling '[%w_]+' on bad self %(.+%)$") then return true end
      local fn = rest:match('^([%w_]+): .+')
      if fn and names[fn] then return true end
      -- Lua's own errors from the generated code (indexing nil handles etc.)
      if rest:match('^attempt to ') then return true end
      return false
    end
    local function keep(v)
      if type(v) == 'userdata' then H[(#H % 12) + 1] = v end
      if type(v) == 'table' then for _, x in ipairs(v) do if type(x) == 'userdata' then H[(#H % 12) + 1] = x end end end
    end
    function R(ok, ...)
      fuzzCalls = fuzzCalls + 1
      if ok then
        for i = 1, select('#', ...) do keep((select(i, ...))) end
      else
        local msg = ...
        fuzzErrors = fuzzErrors + 1
        if not clean(msg) then error('FUZZ: unclean error: ' .. tostring(msg), 0) end
      end
    end
    function FUZZ_SUMMARY() return fuzzCalls, fuzzErrors end
    image('cat.png')
    """

    func testRandomAPICallsFailCleanly() throws {
        let env = ProcessInfo.processInfo.environment
        let cases = Int(env["WOBBLE_FUZZ_CASES"] ?? "") ?? 3000
        let seed = UInt64(env["WOBBLE_FUZZ_SEED"] ?? "") ?? 1
        let perScript = 250
        var r = SplitMix64(state: seed)
        let f = SceneFixture()
        f.write("t.csv", "t,ax,ay\n0.1,2,0\n0.3,0,-3\n")
        f.write("bad.csv", "0.1,x\n")
        var done = 0, scripts = 0, runtimeEnds = 0, finishEnds = 0, calls = 0, failures = 0
        let start = Date()
        while done < cases {
            let n = min(perScript, cases - done)
            var src = FuzzTests.harness + "\n"
            for _ in 0..<n { src += "R(pcall(function() return \(operation(&r)) end))\n" }
            // Half the scripts end with an unprotected call: a clean ScriptError or success.
            // The counts leave through the output path of a last, protected call.
            src += "R(pcall(output, string.format('counts_%d_%d', FUZZ_SUMMARY())))\n"
            let unprotected = r.chance(probability: 0.5)
            if unprotected { src += "local _ = " + operation(&r) + "\n" }
            do {
                let res = try f.run(src) { $0.timeout = 60 }
                XCTAssertGreaterThanOrEqual(res.clip.frameCount, 1)
                if let out = res.outputPath?.split(separator: "/").last, out.hasPrefix("counts_") {
                    let parts = out.split(separator: "_")
                    calls += Int(parts[1]) ?? 0
                    failures += Int(parts[2]) ?? 0
                }
            } catch let e as ScriptError {
                XCTAssertFalse(e.message.hasPrefix("FUZZ:"), "\(e.message)\nscript:\n\(src)")
                switch e.kind {
                case .runtime:
                    runtimeEnds += 1
                    XCTAssertTrue(unprotected, "a protected call escaped: \(e.message)")
                    let rest = e.message.replacingOccurrences(of: f.dir + "/", with: "")
                    XCTAssertTrue(rest.hasPrefix("scene.lua:") || rest == "not enough memory", rest)
                case .finish:
                    finishEnds += 1
                    XCTAssertTrue(e.message.hasPrefix("wobble-run: "), e.message)
                default:
                    XCTFail("unexpected \(e.kind): \(e.message)")
                }
            }
            done += n
            scripts += 1
        }
        print("fuzz: \(done) calls in \(scripts) scripts (seed \(seed)); in the scripts that returned, \(calls) calls"
              + " of which \(failures) failed cleanly; \(runtimeEnds) scripts ended by an unprotected error,"
              + " \(finishEnds) failed at finish, \(String(format: "%.1f", Date().timeIntervalSince(start))) s")
    }
}
