import WobbleSystem

/// `--slice I/N`: which rows of a pack this process renders (those whose
/// index is ≡ I mod N), so that N processes — on one machine or many,
/// side by side or one after another — make the whole pack together.
///
/// `--slice auto` reads the slice from a job scheduler's environment:
/// Slurm's job arrays (`SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`,
/// and `SLURM_ARRAY_TASK_MIN`/`_STEP` for an array that does not start at
/// 0 or steps: `--array=1-4`, `--array=0-12:4`), or a Kubernetes Indexed
/// Job's `JOB_COMPLETION_INDEX`. Kubernetes does not put the Job's number
/// of completions in the environment: give it as `--slice auto/N` (with
/// Slurm, `auto/N` must agree with the array's count).
package struct PackSlice: Equatable, Sendable, CustomStringConvertible {
    package var index: Int
    package var count: Int

    package init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// The whole pack.
    package static let all = PackSlice(index: 0, count: 1)

    package var description: String { "\(index)/\(count)" }

    /// Whether the row with this index is in the slice.
    package func contains(_ row: Int) -> Bool { row % count == index }

    /// The largest slice count taken.
    package static let maxCount = 100_000

    /// Parses `I/N`, `auto` or `auto/N`; `environment` reads a variable
    /// (`Environment.value`).
    ///
    /// - Throws: `UsageError` naming what is wrong.
    package static func parse(_ text: String, environment: (String) -> String? = Environment.value) throws -> PackSlice {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw UsageError("--slice: '\(text)' is not I/N, auto or auto/N") }
        var given: Int?
        if parts.count == 2 {
            guard let n = Int(digits: parts[1]), n >= 1, n <= maxCount else {
                throw UsageError("--slice: '\(text)': N must be a whole number from 1 to \(maxCount)")
            }
            given = n
        }
        if parts[0] == "auto" { return try auto(count: given, text: text, environment: environment) }
        guard let given, let i = Int(digits: parts[0]) else { throw UsageError("--slice: '\(text)' is not I/N, auto or auto/N") }
        guard i < given else { throw UsageError("--slice: \(text): I must be less than N (0 to \(given - 1))") }
        return PackSlice(index: i, count: given)
    }

    static func auto(count given: Int?, text: String, environment: (String) -> String?) throws -> PackSlice {
        func number(_ name: String) throws -> Int? {
            guard let v = environment(name), !v.isEmpty else { return nil }
            guard let n = Int(digits: v) else { throw UsageError("--slice \(text): \(name)='\(v)' is not a whole number") }
            return n
        }
        if let id = try number("SLURM_ARRAY_TASK_ID") {
            guard let count = try number("SLURM_ARRAY_TASK_COUNT"), count >= 1 else {
                throw UsageError("--slice \(text): SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")
            }
            let first = try number("SLURM_ARRAY_TASK_MIN") ?? 0
            let step = max(1, try number("SLURM_ARRAY_TASK_STEP") ?? 1)
            guard id >= first, (id - first) % step == 0, (id - first) / step < count else {
                throw UsageError("--slice \(text): SLURM_ARRAY_TASK_ID \(id) is not one of the array's \(count) tasks from \(first) in steps of \(step)")
            }
            if let given, given != count {
                throw UsageError("--slice \(text): the Slurm array has \(count) tasks, not \(given)")
            }
            return PackSlice(index: (id - first) / step, count: count)
        }
        if let index = try number("JOB_COMPLETION_INDEX") {
            guard let given else {
                throw UsageError("--slice \(text): JOB_COMPLETION_INDEX is set, but Kubernetes does not say how many completions the Job has: give --slice auto/N (N: the Job's completions)")
            }
            guard index < given else {
                throw UsageError("--slice \(text): JOB_COMPLETION_INDEX \(index) is not less than \(given)")
            }
            return PackSlice(index: index, count: given)
        }
        throw UsageError("--slice \(text): neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; give --slice I/N")
    }
}
