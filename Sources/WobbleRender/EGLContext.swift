// The only file that calls EGL. It picks an EGL platform at run time, opens
// a display once per process, and makes headless GLES 3 contexts
// (EGL_KHR_surfaceless_context: no window, no pbuffer; rendering goes to an
// FBO).
//
// Platform choice (env WOBBLE_EGL_PLATFORM overrides it):
//   unset / "auto"  1. EGL_PLATFORM_DEVICE_EXT on a hardware device (NVIDIA's
//                      headless path; devices Mesa marks
//                      EGL_MESA_device_software are skipped here),
//                   2. EGL_PLATFORM_SURFACELESS_MESA (Mesa: llvmpipe, or a
//                      GPU through its render node),
//                   3. EGL_PLATFORM_DEVICE_EXT on a software device,
//                   4. eglGetDisplay(EGL_DEFAULT_DISPLAY).
//                   The first that initializes and gives a GLES 3 context wins.
//   "device"        devices only (hardware or software, in EGL's order)
//   "surfaceless"   EGL_PLATFORM_SURFACELESS_MESA only
//   "default"       eglGetDisplay(EGL_DEFAULT_DISPLAY) only
internal import CEGL
import Foundation
import WobbleSystem

/// Raw EGL handles (opaque pointers) that may cross threads.
private struct DisplayHandle: @unchecked Sendable {
    var display: EGLDisplay
    var platform: String
}

/// The display every renderer of this process shares: EGL displays are
/// process-wide, and eglTerminate would pull it from under other renderers,
/// so it is opened once and never terminated.
private let sharedDisplay = NSLock()
/// Read and written only with `sharedDisplay` held.
nonisolated(unsafe) private var chosenDisplay: DisplayHandle?

/// Name of an EGL error code.
func eglErrorName(_ code: EGLint) -> String {
    switch code {
    case EGL_SUCCESS: return "EGL_SUCCESS"
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED"
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS"
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC"
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE"
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG"
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT"
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE"
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY"
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH"
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP"
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW"
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER"
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE"
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST"
    default: return "EGL error 0x" + String(code, radix: 16)
    }
}

/// Checks the result of an EGL call; on failure throws `GLESError.egl`
/// naming the call and the error `eglGetError` reports.
@discardableResult
private func eglCheck(_ call: String, _ ok: EGLBoolean) throws -> EGLBoolean {
    if ok == EGLBoolean(EGL_FALSE) {
        throw GLESError.egl(call: call, error: eglErrorName(eglGetError()))
    }
    return ok
}

private func extensions(_ display: EGLDisplay?) -> Set<Substring> {
    guard let s = eglQueryString(display, EGL_EXTENSIONS) else { return [] }
    return Set(String(cString: s).split(separator: " "))
}

/// A headless GLES 3 context on the shared display. GL objects keep their
/// context alive (they hold a reference) and are deleted while it is
/// current; the context is destroyed after the last of them.
///
/// The context is current only inside `withCurrent`, on the calling thread,
/// and released afterwards, so a renderer may be used from any thread (one
/// at a time).
final class GLContext {
    private let display: EGLDisplay
    private let context: EGLContext
    /// The surface of an adopted context (a window's), nil for our own.
    private let surface: EGLSurface?
    /// Whether the context belongs to someone else (a window), who keeps it
    /// current and destroys it.
    let adopted: Bool
    private let lock = NSRecursiveLock()
    /// Which EGL platform the display came from (`surfaceless`, `device #0 …`).
    let platform: String
    /// `EGL_VENDOR` and `EGL_VERSION` of the display.
    let eglVendor: String
    let eglVersion: String

    init() throws {
        let (handle, context) = try GLContext.openDisplayAndContext()
        display = handle.display
        self.context = context
        platform = handle.platform
        eglVendor = eglQueryString(handle.display, EGL_VENDOR).map { String(cString: $0) } ?? "?"
        eglVersion = eglQueryString(handle.display, EGL_VERSION).map { String(cString: $0) } ?? "?"
        surface = nil
        adopted = false
    }

    /// The context current on this thread (a window's, made by SDL), with
    /// its display and draw surface: a renderer made on it draws into the
    /// window's framebuffer. The owner keeps it alive longer than us.
    init(adoptingCurrent: ()) throws {
        guard let d = eglGetCurrentDisplay(), let c = eglGetCurrentContext() else {
            throw GLESError.unsupported("no EGL context is current to draw into")
        }
        display = d
        context = c
        surface = eglGetCurrentSurface(EGL_DRAW)
        adopted = true
        platform = "a window's context"
        eglVendor = eglQueryString(d, EGL_VENDOR).map { String(cString: $0) } ?? "?"
        eglVersion = eglQueryString(d, EGL_VERSION).map { String(cString: $0) } ?? "?"
    }

    /// Asks the adopted context's draw surface (a window's) to keep its
    /// pixels across a swap (`EGL_SWAP_BEHAVIOR` `EGL_BUFFER_PRESERVED`);
    /// whether it will. False for our own context (it has no surface).
    func preserveSwaps() -> Bool {
        guard let surface else { return false }
        return eglSurfaceAttrib(display, surface, EGL_SWAP_BEHAVIOR, EGL_BUFFER_PRESERVED) == EGLBoolean(EGL_TRUE)
    }

    deinit {
        guard !adopted else { return }
        if eglGetCurrentContext() == context {
            eglMakeCurrent(display, nil, nil, nil)
        }
        eglDestroyContext(display, context)
    }

    /// Runs `body` with this context current on the calling thread.
    func withCurrent<T>(_ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if eglGetCurrentContext() == context {
            return try body()
        }
        if adopted {
            // The owner's context, made current for a moment (freeing GL
            // names while the owner has released it), then released again.
            try eglCheck("eglMakeCurrent", eglMakeCurrent(display, surface, surface, context))
            defer { eglMakeCurrent(display, nil, nil, nil) }
            return try body()
        }
        try eglCheck("eglMakeCurrent", eglMakeCurrent(display, nil, nil, context))
        defer { eglMakeCurrent(display, nil, nil, nil) }
        return try body()
    }

    // MARK: Choosing the display

    private static func openDisplayAndContext() throws -> (DisplayHandle, EGLContext) {
        sharedDisplay.lock()
        defer { sharedDisplay.unlock() }
        if let d = chosenDisplay {
            return (d, try makeContext(d.display))
        }
        var attempts: [String] = []
        for candidate in candidates(&attempts) {
            do {
                guard let display = candidate.open() else {
                    throw GLESError.egl(call: "eglGetPlatformDisplayEXT", error: eglErrorName(eglGetError()))
                }
                var major: EGLint = 0, minor: EGLint = 0
                try eglCheck("eglInitialize", eglInitialize(display, &major, &minor))
                do {
                    let context = try makeContext(display)
                    let handle = DisplayHandle(display: display, platform: candidate.name)
                    chosenDisplay = handle
                    return (handle, context)
                } catch {
                    eglTerminate(display)
                    throw error
                }
            } catch {
                attempts.append("\(candidate.name): \(error)")
            }
        }
        throw GLESError.noDisplay(attempts: attempts.isEmpty ? ["no EGL platform found"] : attempts)
    }

    private struct Candidate {
        var name: String
        var open: () -> EGLDisplay?
    }

    /// The EGL devices (EGL_EXT_platform_device), hardware and software
    /// (Mesa's EGL_MESA_device_software) apart; why there are none goes to
    /// `attempts`.
    private static func devices(_ attempts: inout [String]) -> (hardware: [Candidate], software: [Candidate]) {
        let client = extensions(nil)
        let getPlatformDisplay: PFNEGLGETPLATFORMDISPLAYEXTPROC? =
            client.contains("EGL_EXT_platform_base")
            ? eglGetProcAddress("eglGetPlatformDisplayEXT").map { unsafeBitCast($0, to: PFNEGLGETPLATFORMDISPLAYEXTPROC.self) }
            : nil
        var hardware: [Candidate] = [], software: [Candidate] = []
        do {
            if let getPlatformDisplay, client.contains("EGL_EXT_platform_device"),
               let q = eglGetProcAddress("eglQueryDevicesEXT") {
                let queryDevices = unsafeBitCast(q, to: PFNEGLQUERYDEVICESEXTPROC.self)
                let queryString = eglGetProcAddress("eglQueryDeviceStringEXT")
                    .map { unsafeBitCast($0, to: PFNEGLQUERYDEVICESTRINGEXTPROC.self) }
                var count: EGLint = 0
                if queryDevices(0, nil, &count) != EGLBoolean(EGL_FALSE), count > 0 {
                    var devices = [EGLDeviceEXT?](repeating: nil, count: Int(count))
                    _ = queryDevices(count, &devices, &count)
                    for (i, device) in devices.prefix(Int(count)).enumerated() {
                        let ext = queryString.flatMap { $0(device, EGL_EXTENSIONS) }.map { String(cString: $0) } ?? ""
                        let file = ext.contains("EGL_EXT_device_drm")
                            ? queryString.flatMap { $0(device, EGL_DRM_DEVICE_FILE_EXT) }.map { " " + String(cString: $0) } ?? ""
                            : ""
                        let isSoftware = ext.contains("EGL_MESA_device_software")
                        let c = Candidate(name: "device #\(i)\(isSoftware ? " (software)" : file)") {
                            getPlatformDisplay(EGLenum(EGL_PLATFORM_DEVICE_EXT), device, nil)
                        }
                        if isSoftware { software.append(c) } else { hardware.append(c) }
                    }
                } else {
                    attempts.append("device: eglQueryDevicesEXT found no device")
                }
            } else {
                attempts.append("device: EGL_EXT_platform_device not supported")
            }
        }
        return (hardware, software)
    }

    /// Whether EGL offers a hardware device (a GPU, not Mesa's software
    /// rasteriser): `--backend auto` draws with GLES there, on the CPU
    /// elsewhere. Looks for a render node (`/dev/dri/renderD*`,
    /// `/dev/nvidia*`) first, so a machine without one never loads EGL.
    static var hasHardwareDevice: Bool {
        let dri = FileSystem.names(in: "/dev/dri").contains { $0.hasPrefix("renderD") }
        let nvidia = FileSystem.names(in: "/dev").contains { $0.hasPrefix("nvidia") }
        guard dri || nvidia else { return false }
        var attempts: [String] = []
        return !devices(&attempts).hardware.isEmpty
    }

    private static func candidates(_ attempts: inout [String]) -> [Candidate] {
        let mode = Environment.value("WOBBLE_EGL_PLATFORM")?.lowercased() ?? "auto"
        let client = extensions(nil)   // client extensions (EGL_EXT_client_extensions)
        let getPlatformDisplay: PFNEGLGETPLATFORMDISPLAYEXTPROC? =
            client.contains("EGL_EXT_platform_base")
            ? eglGetProcAddress("eglGetPlatformDisplayEXT").map { unsafeBitCast($0, to: PFNEGLGETPLATFORMDISPLAYEXTPROC.self) }
            : nil

        let (hardware, software) = mode == "auto" || mode == "device" ? devices(&attempts) : ([], [])
        var surfaceless: [Candidate] = []
        if mode == "auto" || mode == "surfaceless" {
            if let getPlatformDisplay, client.contains("EGL_MESA_platform_surfaceless") {
                surfaceless.append(Candidate(name: "surfaceless") {
                    getPlatformDisplay(EGLenum(EGL_PLATFORM_SURFACELESS_MESA), nil, nil)
                })
            } else {
                attempts.append("surfaceless: EGL_MESA_platform_surfaceless not supported")
            }
        }
        let fallback = Candidate(name: "default display") { eglGetDisplay(nil) }
        switch mode {
        case "device": return hardware + software
        case "surfaceless": return surfaceless
        case "default": return [fallback]
        case "auto": return hardware + surfaceless + software + [fallback]
        default:
            attempts.append("WOBBLE_EGL_PLATFORM='\(mode)' is not one of auto, device, surfaceless, default")
            return []
        }
    }

    /// A GLES 3 context on `display`, without any surface.
    private static func makeContext(_ display: EGLDisplay) throws -> EGLContext {
        let ext = extensions(display)
        guard ext.contains("EGL_KHR_surfaceless_context") else {
            throw GLESError.unsupported("the EGL display lacks EGL_KHR_surfaceless_context")
        }
        try eglCheck("eglBindAPI", eglBindAPI(EGLenum(EGL_OPENGL_ES_API)))
        let configAttributes: [EGLint] = [
            EGL_RENDERABLE_TYPE, EGL_OPENGL_ES3_BIT,
            EGL_SURFACE_TYPE, 0,   // no surface: any config will do
            EGL_NONE,
        ]
        var config: EGLConfig?
        var count: EGLint = 0
        try eglCheck("eglChooseConfig", eglChooseConfig(display, configAttributes, &config, 1, &count))
        if count == 0 {
            guard ext.contains("EGL_KHR_no_config_context") else {
                throw GLESError.unsupported("no EGL config renders OpenGL ES 3 (eglChooseConfig found none)")
            }
            config = nil   // EGL_NO_CONFIG_KHR
        }
        let contextAttributes: [EGLint] = [EGL_CONTEXT_CLIENT_VERSION, 3, EGL_NONE]
        guard let context = eglCreateContext(display, config, nil, contextAttributes) else {
            throw GLESError.egl(call: "eglCreateContext", error: eglErrorName(eglGetError()))
        }
        return context
    }
}
