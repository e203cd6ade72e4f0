// The only file that calls SDL's video and input: an SDL2 window with an
// OpenGL ES 3 context through EGL (X11 or Wayland), input events translated
// into `StudioInput`, and `present` placing RGBA images (the frame, scaled,
// the chrome and the inspector at 1:1) in it through the renderer's
// `WindowPainter` (the project's shaders; no GL call here). SDL itself is
// initialised and shut down by `SDLLibrary` (SDL.swift).
internal import CSDL2
import Foundation
import Synchronization
import WobbleCore
import WobbleRender
import WobbleStudioCore
import WobbleSystem

/// An error opening the window, as one line.
struct WindowError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

private func sdlError() -> String { SDLLibrary.error() }

/// The studio's window.
final class StudioWindow {
    /// Ctrl, Shift, Alt, the system key and Caps Lock (the keys that only modify others).
    static let modifierKeys: Set<Int32> = Set([SDLK_LCTRL, SDLK_RCTRL, SDLK_LSHIFT, SDLK_RSHIFT, SDLK_LALT, SDLK_RALT,
                                              SDLK_LGUI, SDLK_RGUI, SDLK_CAPSLOCK, SDLK_MODE].map { Int32($0.rawValue) })

    private let window: OpaquePointer
    private let context: SDL_GLContext
    /// Draws into the window's back buffer (made in its context, released
    /// before the context is deleted).
    private var painter: WindowPainter?
    private var frameTexture: WindowPainter.Texture?
    private var chromeTexture: WindowPainter.Texture?
    private var controllers: [OpaquePointer] = []
    private(set) var width: Int
    private(set) var height: Int
    /// The back buffer keeps its pixels across a swap (EGL_BUFFER_PRESERVED).
    private(set) var preserved = false
    /// How many presents still draw the whole window (after it opened,
    /// resized or was exposed).
    private var fullRedrawsLeft = StudioWindow.fullRedrawsAfterChange
    private var lastDrawableSize = (0, 0)
    /// The left button's press was a pan (Space held): its release ends it.
    private var leftPans = false
    /// The modifiers and Space as the events seen so far leave them, not
    /// as SDL's state is now: the events come in batches (a busy frame), so
    /// by the time a click is read SDL may already have read the key
    /// release that followed it (`Shift`+click would lose its Shift).
    private var heldMods: UInt32 = UInt32(SDL_GetModState().rawValue)
    private var spaceHeld = false
    /// Boxes drawn over the window outside the picture (handles there).
    var marks: [WindowMark] = []
    static let fullRedrawsAfterChange = 15

    /// Makes the next presents draw the whole window.
    func invalidate() { fullRedrawsLeft = StudioWindow.fullRedrawsAfterChange }

    /// The usable area of the first display (for the 1:1-or-scaled choice),
    /// nil when SDL cannot tell.
    static func usableBounds() -> (width: Int, height: Int)? {
        var r = SDL_Rect()
        guard SDL_GetDisplayUsableBounds(0, &r) == 0, r.w > 0, r.h > 0 else { return nil }
        return (Int(r.w), Int(r.h))
    }

    /// Set when an X error says a window or drawable is gone (another
    /// program destroyed the window): the studio quits as if closed.
    /// (These two are only touched on the window thread: Xlib calls its
    /// handlers on the thread that made the X call.)
    nonisolated(unsafe) static var windowDestroyed = false
    /// The X window's id (0 off X11): only errors about it mean it is gone.
    nonisolated(unsafe) private static var windowXID: UInt = 0
    /// Called once if the connection to the X server breaks (the server
    /// died, the client was killed): last words before the process exits,
    /// such as writing a take being recorded. Xlib exits when it returns.
    nonisolated(unsafe) static var onDisplayLost: (() -> Void)?

    private static let lostLock = NSLock()

    /// The display went away: one line, the last words (`onDisplayLost`),
    /// exit status 1. Called by Xlib's IO error handler on the window
    /// thread, or by the watchdog when the window thread is stuck in the GL
    /// driver's swap on the dead connection (then the last words run on the
    /// watchdog's thread while the window thread cannot move). A second
    /// caller waits on the lock until the first has exited. `_exit`: the
    /// process's GL threads may be stuck, and everything written is
    /// already on disk (nothing is buffered in the process).
    static func displayLost() -> Never {
        lostLock.lock()
        Messages.writeStderr("wobble-run: edit: the connection to the display was lost\n")
        let lost = onDisplayLost
        onDisplayLost = nil
        lost?()
        ThisProcess.exitNow(1)
    }

    /// Set while the window closes: the watchdog stops.
    private static let closingFlag = Atomic<Bool>(false)
    private static var closing: Bool {
        get { closingFlag.load(ordering: .acquiring) }
        set { closingFlag.store(newValue, ordering: .releasing) }
    }
    /// Watches the X connection's socket for a hang-up (the server died or
    /// killed us) on a thread of its own: Mesa's swap on a dead connection
    /// can block forever, so Xlib's IO error handler would never run.
    private func watchConnection() {
        var info = SDL_SysWMinfo()
        SDL_GetVersion(&info.version)
        guard SDL_GetWindowWMInfo(window, &info) == SDL_TRUE, info.subsystem == SDL_SYSWM_X11,
              let d = info.info.x11.display else { return }
        StudioWindow.windowXID = UInt(info.info.x11.window)
        let fd = XConnectionNumber(d)
        SystemThread.detach {
            while !StudioWindow.closing {
                let hungUp = Posix.waitForHangUp(fd, seconds: 0.25)
                guard !StudioWindow.closing else { return }
                if hungUp {
                    // Give the window thread a moment to notice it itself.
                    pause(seconds: 0.5)
                    guard !StudioWindow.closing else { return }
                    StudioWindow.displayLost()
                }
            }
        }
    }

    /// Initialises SDL's video and game controller subsystems on X11 or
    /// Wayland, whichever the environment names (`SDL_VIDEODRIVER` decides
    /// when set); never on another driver (SDL would fall back to an
    /// offscreen one when the display named does not answer, and the
    /// studio would run with no window).
    static func initialise() throws {
        SDLLibrary.hint(SDL_HINT_VIDEO_X11_FORCE_EGL, "1")
        SDLLibrary.hint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
        // One close of the window is one window event, not also a quit
        // event (`CloseRequests`: the two would ask and answer at once).
        SDLLibrary.hint(SDL_HINT_QUIT_ON_LAST_WINDOW_CLOSE, "0")
        let env = Environment.all
        let display = env["DISPLAY"] ?? "", wayland = env["WAYLAND_DISPLAY"] ?? ""
        let forced = !(env["SDL_VIDEODRIVER"] ?? "").isEmpty
        // libwayland finds a relative WAYLAND_DISPLAY in XDG_RUNTIME_DIR and,
        // when that is not set (an ssh or su session), prints its own
        // "XDG_RUNTIME_DIR is invalid" line before ours: Wayland is not
        // tried then, and our line says why.
        let noRuntimeDir = !wayland.isEmpty && !wayland.hasPrefix("/") && !(env["XDG_RUNTIME_DIR"] ?? "").hasPrefix("/")
        let waylandNote = noRuntimeDir
            ? "WAYLAND_DISPLAY '\(wayland)' needs XDG_RUNTIME_DIR, which is not set (or not an absolute path)" : nil
        var drivers: [String]?
        if !forced {
            drivers = [display.isEmpty ? nil : "x11", wayland.isEmpty || noRuntimeDir ? nil : "wayland"].compactMap { $0 }
            if drivers == [], let waylandNote {
                throw WindowError(message: "wobble-run: edit: cannot open the display: \(waylandNote)")
            }
        }
        func named() -> String {
            [display.isEmpty ? nil : "DISPLAY '\(display)'", wayland.isEmpty || noRuntimeDir && !forced ? nil : "WAYLAND_DISPLAY '\(wayland)'"]
                .compactMap { $0 }.joined(separator: " or ")
        }
        // Xlib's default handler for a broken connection prints and exits:
        // ours says it in one line, lets the studio save what it can, and
        // exits with status 1 (Xlib exits when it returns anyway).
        _ = XSetIOErrorHandler { _ in StudioWindow.displayLost() }
        // On X11, an X error is reported on stderr instead of ending the
        // process (Xlib's default handler exits with status 1). Installed
        // before SDL_Init: SDL saves the handler it finds and puts it back
        // before it closes the display in SDL_Quit, so an error that
        // arrives while the window closes reaches this one, not Xlib's.
        _ = XSetErrorHandler { _, event in
            if let e = event?.pointee {
                // BadWindow, BadDrawable about our window: it was destroyed under us.
                if e.error_code == 3 || e.error_code == 9, e.resourceid != 0, e.resourceid == StudioWindow.windowXID {
                    StudioWindow.windowDestroyed = true
                } else {
                    Messages.writeStderr("studio: X error \(e.error_code) on request \(e.request_code) (ignored)\n")
                }
            }
            return 0
        }
        do {
            try SDLLibrary.start(.video, drivers: drivers)
        } catch {
            let e = error.message
            let why = forced || e.contains("not available") ? ": \(e)" : ": no X11 or Wayland server answers there"
            let note = !forced ? waylandNote.map { "; \($0)" } ?? "" : ""
            throw WindowError(message: "wobble-run: edit: cannot open the display (\(forced ? "SDL_VIDEODRIVER '\(env["SDL_VIDEODRIVER"] ?? "")'" : named()))\(why)\(note)")
        }
        // A controller is optional: without the subsystem there is no shake from it.
        try? SDLLibrary.start(.controllers)
    }

    static func shutdown() { SDLLibrary.shutdown() }

    init(title: String, width: Int, height: Int, position: (Int, Int)?) throws {
        SDL_GL_SetAttribute(SDL_GL_CONTEXT_PROFILE_MASK, Int32(SDL_GL_CONTEXT_PROFILE_ES.rawValue))
        SDL_GL_SetAttribute(SDL_GL_CONTEXT_MAJOR_VERSION, 3)
        SDL_GL_SetAttribute(SDL_GL_CONTEXT_MINOR_VERSION, 0)
        SDL_GL_SetAttribute(SDL_GL_DOUBLEBUFFER, 1)
        let centered = Int32(bitPattern: 0x2FFF_0000)   // SDL_WINDOWPOS_CENTERED
        let x = position.map { Int32(clamping: $0.0) } ?? centered
        let y = position.map { Int32(clamping: $0.1) } ?? centered
        let flags = UInt32(SDL_WINDOW_OPENGL.rawValue) | UInt32(SDL_WINDOW_SHOWN.rawValue) | UInt32(SDL_WINDOW_ALLOW_HIGHDPI.rawValue)
            | UInt32(SDL_WINDOW_RESIZABLE.rawValue)
        guard let w = SDL_CreateWindow(title, x, y, Int32(clamping: width), Int32(clamping: height), flags) else {
            throw WindowError(message: "wobble-run: edit: cannot open a window: \(sdlError())")
        }
        guard let c = SDL_GL_CreateContext(w) else {
            let e = sdlError()
            SDL_DestroyWindow(w)
            throw WindowError(message: "wobble-run: edit: cannot create an OpenGL ES 3 context for the window: \(e)")
        }
        window = w
        context = c
        self.width = width
        self.height = height
        SDL_GL_SetSwapInterval(0)   // the studio paces itself at the clip's fps
        StudioWindow.closing = false
        watchConnection()
        try makeCurrent()
        // Ask for a back buffer that keeps its pixels across a swap: then a
        // frame redraws only what changed (the regions' box and the chrome).
        // Where the EGL config cannot, every frame is drawn whole.
        let painter: WindowPainter
        do {
            painter = try WindowPainter(preserve: Environment.value("WOBBLE_STUDIO_FULL_REDRAW") != "1")
        } catch {
            throw WindowError(message: "wobble-run: edit: the window's drawing: \(error)")
        }
        self.painter = painter
        maxDrawable = painter.maxDrawable
        preserved = painter.preservesBackBuffer
    }

    deinit {
        StudioWindow.closing = true
        try? makeCurrent()
        // The GL names go while the context is current, before it does.
        (frameTexture, chromeTexture, panelTexture, painter) = (nil, nil, nil, nil)
        for c in controllers { SDL_GameControllerClose(c) }
        SDL_GL_DeleteContext(context)
        SDL_DestroyWindow(window)
    }

    /// Makes the window's context current again (the headless renderer
    /// switches to its own context while it renders; SDL would skip a
    /// call that it thinks changes nothing, hence the release first).
    func makeCurrent() throws {
        SDL_GL_MakeCurrent(window, nil)
        guard SDL_GL_MakeCurrent(window, context) == 0 else {
            throw WindowError(message: "wobble-run: edit: SDL_GL_MakeCurrent: \(sdlError())")
        }
    }

    func setTitle(_ title: String) {
        SDL_SetWindowTitle(window, title)
        // SDL 2.26 on X11 changes only WM_NAME (and as Latin-1) after the
        // window is made; window managers show _NET_WM_NAME (UTF-8): set it too.
        var info = SDL_SysWMinfo()
        SDL_GetVersion(&info.version)
        guard SDL_GetWindowWMInfo(window, &info) == SDL_TRUE, info.subsystem == SDL_SYSWM_X11,
              let d = info.info.x11.display else { return }
        let bytes = Array(title.utf8)
        bytes.withUnsafeBufferPointer { b in
            _ = XChangeProperty(d, info.info.x11.window, XInternAtom(d, "_NET_WM_NAME", 0), XInternAtom(d, "UTF8_STRING", 0), 8,
                                PropModeReplace, b.baseAddress, Int32(b.count))
        }
        XFlush(d)
    }

    func resize(width: Int, height: Int) {
        guard width != self.width || height != self.height else { return }
        self.width = width
        self.height = height
        invalidate()
        SDL_SetWindowSize(window, Int32(clamping: width), Int32(clamping: height))
    }

    /// Takes the size the window was given by someone else (a window
    /// manager): drawing and mouse coordinates follow it.
    func adopt(width: Int, height: Int) {
        self.width = max(1, width)
        self.height = max(1, height)
        invalidate()
    }

    /// The window's position on the screen.
    var position: (Int, Int) {
        var x: Int32 = 0, y: Int32 = 0
        SDL_GetWindowPosition(window, &x, &y)
        return (Int(x), Int(y))
    }

    // MARK: Events

    /// The window's close and SDL's quit event of one close, counted once.
    private var closes = CloseRequests()

    /// Waits up to `timeoutMs` for an event, then returns every pending one.
    func events(timeoutMs: Int) -> [StudioInput] {
        var out: [StudioInput] = []
        var e = SDL_Event()
        var got = SDL_WaitEventTimeout(&e, Int32(clamping: max(0, timeoutMs))) == 1
        closes.newBatch()
        while got {
            if let i = translate(e) { out.append(i) }
            got = SDL_PollEvent(&e) == 1
        }
        if StudioWindow.windowDestroyed { out.append(.windowGone) }
        return out
    }

    private func translate(_ e: SDL_Event) -> StudioInput? {
        if e.type == SDL_KEYDOWN.rawValue || e.type == SDL_KEYUP.rawValue {
            // (`keysym.mod`: the modifiers with this key's change applied.)
            heldMods = UInt32(e.key.keysym.mod)
            if e.key.keysym.scancode == SDL_SCANCODE_SPACE { spaceHeld = e.type == SDL_KEYDOWN.rawValue }
        } else if e.type == SDL_WINDOWEVENT.rawValue, UInt32(e.window.event) == SDL_WINDOWEVENT_FOCUS_GAINED.rawValue {
            // Keys pressed while another window had the focus.
            heldMods = UInt32(SDL_GetModState().rawValue)
            if let keys = SDL_GetKeyboardState(nil) { spaceHeld = keys[Int(SDL_SCANCODE_SPACE.rawValue)] != 0 }
        }
        switch e.type {
        case SDL_QUIT.rawValue:
            return closes.quit(windowClose: false)
        case SDL_WINDOWEVENT.rawValue:
            let w = UInt32(e.window.event)
            if w == SDL_WINDOWEVENT_CLOSE.rawValue { return closes.quit(windowClose: true) }
            if w == SDL_WINDOWEVENT_EXPOSED.rawValue { return .redraw }
            if w == SDL_WINDOWEVENT_SIZE_CHANGED.rawValue {
                let (nw, nh) = (Int(e.window.data1), Int(e.window.data2))
                return nw == width && nh == height ? .redraw : .resized(width: nw, height: nh)
            }
            return nil
        case SDL_KEYDOWN.rawValue where e.key.repeat != 0 && e.key.keysym.sym == Int32(SDLK_SPACE.rawValue):
            // Space held (to pan) repeats: one press is one toggle.
            return nil
        case SDL_KEYDOWN.rawValue where StudioWindow.modifierKeys.contains(e.key.keysym.sym):
            // A modifier pressed alone is not a key (Ctrl comes before the
            // S of Ctrl+S: answering the quit question with it would be wrong).
            return nil
        case SDL_KEYDOWN.rawValue:
            let shift = (UInt32(e.key.keysym.mod) & UInt32(KMOD_SHIFT.rawValue)) != 0
            let ctrl = (UInt32(e.key.keysym.mod) & UInt32(KMOD_CTRL.rawValue)) != 0
            let key: StudioKey
            switch e.key.keysym.sym {
            case Int32(SDLK_SPACE.rawValue): key = .space
            case Int32(SDLK_LEFT.rawValue): key = .left
            case Int32(SDLK_RIGHT.rawValue): key = .right
            case Int32(SDLK_UP.rawValue): key = .up
            case Int32(SDLK_DOWN.rawValue): key = .down
            case Int32(SDLK_HOME.rawValue): key = .home
            case Int32(SDLK_h.rawValue): key = .h
            case Int32(SDLK_r.rawValue): key = .r
            case Int32(SDLK_a.rawValue): key = .a
            case Int32(SDLK_s.rawValue): key = .s
            case Int32(SDLK_z.rawValue): key = .z
            case Int32(SDLK_ESCAPE.rawValue): key = .escape
            case Int32(SDLK_BACKSPACE.rawValue): key = .backspace
            case Int32(SDLK_DELETE.rawValue): key = .delete
            case Int32(SDLK_l.rawValue): key = .l
            case Int32(SDLK_b.rawValue): key = .b
            case Int32(SDLK_m.rawValue): key = .m
            case Int32(SDLK_c.rawValue): key = .c
            case Int32(SDLK_o.rawValue): key = .o
            case Int32(SDLK_f.rawValue): key = .f
            case Int32(SDLK_e.rawValue): key = .e
            case Int32(SDLK_p.rawValue): key = .p
            case Int32(SDLK_F1.rawValue), Int32(SDLK_QUESTION.rawValue): key = .help
            case Int32(SDLK_SLASH.rawValue) where shift: key = .help
            case Int32(SDLK_TAB.rawValue): key = .tab
            case Int32(SDLK_MINUS.rawValue), Int32(SDLK_KP_MINUS.rawValue): key = .minus
            case Int32(SDLK_EQUALS.rawValue), Int32(SDLK_PLUS.rawValue), Int32(SDLK_KP_PLUS.rawValue): key = .plus
            case Int32(SDLK_RETURN.rawValue), Int32(SDLK_KP_ENTER.rawValue): key = .enter
            case Int32(SDLK_y.rawValue): key = .y
            case Int32(SDLK_PAGEUP.rawValue): key = .pageUp
            case Int32(SDLK_PAGEDOWN.rawValue): key = .pageDown
            default: key = .other
            }
            return .key(key, shift: shift, ctrl: ctrl)
        case SDL_MOUSEBUTTONDOWN.rawValue where e.button.button == UInt8(SDL_BUTTON_LEFT):
            if spaceHeld {
                leftPans = true
                return .panStart(x: Int(e.button.x), y: Int(e.button.y), space: true)
            }
            let mods = heldMods
            if (mods & UInt32(KMOD_CTRL.rawValue)) != 0 {
                return .select(x: Int(e.button.x), y: Int(e.button.y))
            }
            if (mods & UInt32(KMOD_SHIFT.rawValue | KMOD_ALT.rawValue)) != 0 {
                return .strokeStart(x: Int(e.button.x), y: Int(e.button.y), object: (mods & UInt32(KMOD_SHIFT.rawValue)) != 0)
            }
            return .mouseDown(x: Int(e.button.x), y: Int(e.button.y))
        case SDL_MOUSEBUTTONDOWN.rawValue where e.button.button == UInt8(SDL_BUTTON_RIGHT):
            return .select(x: Int(e.button.x), y: Int(e.button.y))
        case SDL_TEXTINPUT.rawValue:
            let text = withUnsafeBytes(of: e.text.text) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            return text.isEmpty ? nil : .text(text)
        case SDL_MOUSEBUTTONUP.rawValue where e.button.button == UInt8(SDL_BUTTON_LEFT):
            if leftPans {
                leftPans = false
                return .panEnd(x: Int(e.button.x), y: Int(e.button.y))
            }
            return .mouseUp(x: Int(e.button.x), y: Int(e.button.y))
        case SDL_MOUSEBUTTONDOWN.rawValue where e.button.button == UInt8(SDL_BUTTON_MIDDLE):
            return .panStart(x: Int(e.button.x), y: Int(e.button.y), space: false)
        case SDL_MOUSEBUTTONUP.rawValue where e.button.button == UInt8(SDL_BUTTON_MIDDLE):
            return .panEnd(x: Int(e.button.x), y: Int(e.button.y))
        case SDL_MOUSEWHEEL.rawValue:
            var mx: Int32 = 0, my: Int32 = 0
            SDL_GetMouseState(&mx, &my)
            let flipped = e.wheel.direction == UInt32(SDL_MOUSEWHEEL_FLIPPED.rawValue)
            let steps = Double(e.wheel.y) * (flipped ? -1 : 1)
            return steps == 0 ? nil : .wheel(x: Int(mx), y: Int(my), steps: steps)
        case SDL_MOUSEMOTION.rawValue:
            return .mouseMove(x: Int(e.motion.x), y: Int(e.motion.y))
        case SDL_CONTROLLERDEVICEADDED.rawValue:
            if let c = SDL_GameControllerOpen(e.cdevice.which) {
                if SDL_GameControllerHasSensor(c, SDL_SENSOR_ACCEL) == SDL_TRUE {
                    SDL_GameControllerSetSensorEnabled(c, SDL_SENSOR_ACCEL, SDL_TRUE)
                    controllers.append(c)
                } else {
                    SDL_GameControllerClose(c)
                }
            }
            return nil
        case SDL_CONTROLLERSENSORUPDATE.rawValue where e.csensor.sensor == SDL_SENSOR_ACCEL.rawValue:
            let g = 9.80665   // SDL_STANDARD_GRAVITY: SDL reports m/s²
            let d = e.csensor.data
            return .accel(x: Double(d.0) / g, y: Double(d.1) / g, z: Double(d.2) / g)
        default:
            return nil
        }
    }

    // MARK: Drawing

    /// Starts a frame: the window's context current and its back buffer
    /// bound. Returns the drawable's size and whether the whole window is
    /// drawn (it is then cleared): after it opened, resized or was exposed,
    /// where the back buffer does not keep its pixels, or when the caller
    /// cannot draw only a part (`partialAllowed` false).
    ///
    /// Nil when the drawable is larger than GL can draw (`maxDrawable`: a
    /// window resized to 30000×30000): nothing is drawn or swapped (the
    /// chrome's window-wide texture would fail with GL_INVALID_VALUE, and
    /// the swap of such a buffer can break the display's connection) until
    /// the window is smaller again; one line says so, once.
    private func beginFrame(partialAllowed: Bool) throws -> (full: Bool, width: Int, height: Int)? {
        // (Asked before the context is made current: making it current on
        // such a window already allocates its buffers.)
        var dw: Int32 = 0, dh: Int32 = 0
        SDL_GL_GetDrawableSize(window, &dw, &dh)
        if Int(dw) > maxDrawable.width || Int(dh) > maxDrawable.height || width > maxDrawable.width || height > maxDrawable.height {
            if !oversizeReported {
                oversizeReported = true
                printError("wobble-run: edit: the window is \(max(Int(dw), width))×\(max(Int(dh), height)) pixels, more than the \(maxDrawable.width)×\(maxDrawable.height) that GL draws here: not drawn until it is smaller")
            }
            return nil
        }
        try makeCurrent()
        if oversizeReported {
            oversizeReported = false
            invalidate()
        }
        // After opening, a resize or an expose the back buffer may be
        // reallocated a little later (the window system catches up): draw
        // whole frames for a while.
        if Int(dw) != width || Int(dh) != height || (Int(dw), Int(dh)) != lastDrawableSize { invalidate() }
        lastDrawableSize = (Int(dw), Int(dh))
        let partial = preserved && fullRedrawsLeft == 0 && partialAllowed
        fullRedrawsLeft = max(0, fullRedrawsLeft - 1)
        painter?.begin(drawable: (Int(dw), Int(dh)), window: (width, height), clear: !partial)
        return (!partial, Int(dw), Int(dh))
    }

    /// The largest drawable this context draws (`GL_MAX_TEXTURE_SIZE`, as
    /// the chrome is a texture as wide as the window, and
    /// `GL_MAX_VIEWPORT_DIMS`).
    private var maxDrawable = (width: Int.max, height: Int.max)
    /// The window was too large and said so (`beginFrame`).
    private var oversizeReported = false

    /// The inspector's column and where it goes; uploaded again when it changed.
    private var panel: (image: RGBAImage, x: Int, y: Int)?
    private var panelUploaded = true
    private var panelTexture: WindowPainter.Texture?

    /// The inspector's column, drawn at `(x, y)` at 1:1 with every present from now on (nil: none).
    func setPanel(_ image: RGBAImage?, x: Int, y: Int) {
        if let image, let p = panel, p.x == x, p.y == y, p.image == image { return }
        panel = image.map { ($0, x, y) }
        panelUploaded = false
    }

    /// Ends a frame: the inspector's column and `chrome` at 1:1 (the chrome
    /// at `(0, chromeY)`), then the swap.
    private func endFrame(chrome: RGBAImage, chromeY: Int, drawable dw: Int, _ dh: Int, started tStart: Double, drawn tUp: Double) throws {
        guard let painter else { return }
        // Solid boxes outside the picture (handles there).
        for m in marks { painter.fill(x: m.x, y: m.y, w: m.w, h: m.h, r: m.r, g: m.g, b: m.b) }
        if let p = panel {
            if panelTexture == nil { panelTexture = try texture() }
            if !panelUploaded, let panelTexture {
                painter.upload(p.image, into: panelTexture, linear: false)
                panelUploaded = true
            }
            if let panelTexture {
                painter.draw(panelTexture, x: p.x, y: p.y, w: p.image.width, h: p.image.height, backdrop: .opaque)
            }
        }
        if chromeTexture == nil { chromeTexture = try texture() }
        if let chromeTexture {
            painter.upload(chrome, into: chromeTexture, linear: false)
            painter.draw(chromeTexture, x: 0, y: chromeY, w: chrome.width, h: chrome.height, backdrop: .opaque)
        }
        if profiling { painter.finish() }
        let tDraw = monotonic()
        do {
            try painter.check("drawing the window")
        } catch {
            throw WindowError(message: "wobble-run: edit: \(error)")
        }
        SDL_GL_SwapWindow(window)
        if profiling {
            let tEnd = monotonic()
            timing.0 += tUp - tStart; timing.1 += tDraw - tUp; timing.2 += tEnd - tDraw; timing.3 += 1
            if timing.3 == 30 {
                printError(String(format: "studio: window ms: upload %.1f, draw %.1f, swap %.1f", timing.0 * 1000 / 30, timing.1 * 1000 / 30, timing.2 * 1000 / 30))
                timing = (0, 0, 0, 0)
            }
        }
    }

    /// A texture of the painter, made when first needed.
    private func texture() throws -> WindowPainter.Texture? {
        guard let painter else { return nil }
        do {
            return try painter.makeTexture()
        } catch {
            throw WindowError(message: "wobble-run: edit: \(error)")
        }
    }

    /// Whether frames can be drawn 1:1 into the back buffer: the drawable
    /// is as large as the window (no display scaling).
    var drawableMatchesWindow: Bool {
        var dw: Int32 = 0, dh: Int32 = 0
        SDL_GL_GetDrawableSize(window, &dw, &dh)
        return Int(dw) == width && Int(dh) == height
    }

    /// A frame whose image area `drawImage` draws itself in this context
    /// (a GLES renderer made in it): it gets where the image area is in the
    /// back buffer and whether to draw all of it (the window was cleared);
    /// then the chrome and the swap.
    func present(imageAt rect: (x: Int, y: Int), chrome: RGBAImage, chromeY: Int,
                 drawImage: (DrawTarget, _ full: Bool) throws -> Void) throws {
        let tStart = monotonic()
        guard let begun = try beginFrame(partialAllowed: true) else { return }
        let (full, dw, dh) = begun
        try drawImage(DrawTarget(drawableWidth: dw, drawableHeight: dh, x: rect.x, y: rect.y), full)
        try endFrame(chrome: chrome, chromeY: chromeY, drawable: dw, dh, started: tStart, drawn: tStart)
    }

    /// Draws `frame` (nil: a plain dark area) into `frameRect` (window
    /// pixels, scaled with linear filtering when it is not 1:1) and
    /// `chrome` at 1:1 at `(0, chromeY)`, then swaps. `frameChanged` false
    /// reuses the frame texture of the last call.
    func present(frame: RGBAImage?, frameOpaque: Bool, frameChanged: Bool, frameDirty: [PixelRect]?,
                 frameRect: (x: Int, y: Int, w: Int, h: Int),
                 chrome: RGBAImage, chromeY: Int) throws {
        let tStart = monotonic()
        // Partial: the back buffer still holds the last frame; redraw the
        // changed box of the picture (if any) and the chrome.
        let oneToOne = frame.map { frameRect.w == $0.width && frameRect.h == $0.height } ?? false
        guard let begun = try beginFrame(partialAllowed: oneToOne && (!frameChanged || frameDirty != nil)) else { return }
        let (full, dw, dh) = begun
        let partial = !full
        var tUp = monotonic()
        if let frame, let painter {
            if frameTexture == nil { frameTexture = try texture() }
            guard let frameTexture else { return }
            if frameChanged || (frameTexture.width, frameTexture.height) != (frame.width, frame.height) {
                let scaled = frameRect.w != frame.width || frameRect.h != frame.height
                if let boxes = frameDirty, (frameTexture.width, frameTexture.height) == (frame.width, frame.height) {
                    for box in boxes { painter.upload(frame, box: box, into: frameTexture) }
                } else {
                    painter.upload(frame, into: frameTexture, linear: scaled)
                }
                if profiling {
                    painter.finish()
                    tUp = monotonic()
                }
            }
            let backdrop: WindowPainter.Backdrop = frameOpaque ? .opaque : .checkerboard
            if !partial {
                painter.draw(frameTexture, x: frameRect.x, y: frameRect.y, w: frameRect.w, h: frameRect.h, backdrop: backdrop)
            } else if frameChanged, let boxes = frameDirty {
                painter.draw(frameTexture, x: frameRect.x, y: frameRect.y, w: frameRect.w, h: frameRect.h, backdrop: backdrop, only: boxes)
            }
        }
        try endFrame(chrome: chrome, chromeY: chromeY, drawable: dw, dh, started: tStart, drawn: tUp)
    }
    private var timing = (0.0, 0.0, 0.0, 0)
    /// WOBBLE_STUDIO_PROFILE=1: where the time of `present` goes, on stderr.
    private let profiling = Environment.value("WOBBLE_STUDIO_PROFILE") == "1"
}
