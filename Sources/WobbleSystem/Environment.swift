import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process's environment: the one place it is read or changed.
public enum Environment {
    /// The value of `name`, or nil when it is not set.
    public static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Every variable and its value, as the process has them now.
    public static var all: [String: String] { ProcessInfo.processInfo.environment }

    /// Sets `name` to `value` unless it is set already (the user's setting
    /// wins). Only before threads that read the environment have started.
    public static func setDefault(_ name: String, _ value: String) {
        setenv(name, value, 0)
    }
}
