import CWobbleKernel
import WobbleSystem

/// The CPU level of the C kernel: the levels `Sources/CWobbleKernel`
/// compiles it for.
public enum CPULevel: Int32, Sendable, CaseIterable {
    /// Any x86-64 (SSE2), or another architecture: one pixel at a time.
    case baseline = 0
    /// AVX2: eight pixels at a time, their texels gathered.
    case avx2 = 1
    /// AVX-512F: sixteen pixels at a time, their texels permuted from the
    /// rows they lie in.
    case avx512 = 2

    /// The best level this CPU runs.
    public static let best = CPULevel(rawValue: wobble_kernel_best_level()) ?? .baseline

    /// Every level this CPU runs, lowest first.
    public static var runnable: [CPULevel] { allCases.filter { $0.rawValue <= best.rawValue } }
}

/// The kernel that draws the rows a region alone moves in the CPU
/// backend (`FastCPURenderer.movingRow`): the Swift kernel (the reference)
/// or the C kernel at a CPU level. Every choice gives the same bytes.
public enum RowKernel: Sendable, Equatable {
    case swift
    case c(CPULevel)

    /// The kernel `WOBBLE_CPU` asks for: `baseline` the C kernel's
    /// baseline x86-64 build (what a CPU without AVX2 runs), `avx2` its
    /// AVX2 build (what a CPU without AVX-512 runs; the best level where the
    /// CPU lacks AVX2), `swift` the Swift kernel, anything else (or unset)
    /// the C kernel at the best level this CPU runs.
    public static func named(_ value: String?) -> RowKernel {
        switch value {
        case "baseline": .c(.baseline)
        case "avx2": .c(CPULevel.best.rawValue >= CPULevel.avx2.rawValue ? .avx2 : CPULevel.best)
        case "swift": .swift
        default: .c(CPULevel.best)
        }
    }

    /// The kernel of this process (`WOBBLE_CPU`, read once).
    public static let chosen = named(Environment.value("WOBBLE_CPU"))
}
