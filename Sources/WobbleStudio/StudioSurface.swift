import WobbleCore
import WobbleStudioCore
import WobbleRender

/// What the studio needs of its window: events in, a frame out. The SDL
/// window (`StudioWindow`) is one; tests use a fake that records the frames
/// and hands out scripted inputs, in-process, on a manual clock.
protocol StudioSurface: AnyObject {
    /// The inputs that arrived, waiting up to `timeoutMs` for the first.
    func events(timeoutMs: Int) -> [StudioInput]
    /// The next presents draw the whole window.
    func invalidate()
    /// Someone else sized the window to this (window pixels).
    func adopt(width: Int, height: Int)
    /// Sizes the window.
    func resize(width: Int, height: Int)
    /// The window's top-left corner on the screen.
    var position: (Int, Int) { get }
    /// The back buffer keeps its pixels across a swap.
    var preserved: Bool { get }
    /// Frames can be drawn 1:1 into the back buffer.
    var drawableMatchesWindow: Bool { get }
    /// Solid boxes drawn over the next presents, under the chrome (the
    /// handles that lie outside the picture).
    var marks: [WindowMark] { get set }
    /// The inspector's column, drawn at `(x, y)` at 1:1 with every present
    /// from now on (nil: none).
    func setPanel(_ image: RGBAImage?, x: Int, y: Int)
    /// The window's title (the unsaved marker).
    func setTitle(_ title: String)
    /// Makes the window's GL context current (a renderer drawing straight
    /// into the window is made in it).
    func makeCurrent() throws
    /// A frame whose image area `drawImage` draws itself in the window's
    /// context, then the chrome at `(0, chromeY)`.
    func present(imageAt rect: (x: Int, y: Int), chrome: RGBAImage, chromeY: Int,
                 drawImage: (DrawTarget, _ full: Bool) throws -> Void) throws
    /// `frame` (nil: a plain dark area) into `frameRect`, `chrome` at
    /// `(0, chromeY)`; `frameChanged` false reuses the last frame,
    /// `frameDirty` the boxes that changed since it.
    func present(frame: RGBAImage?, frameOpaque: Bool, frameChanged: Bool, frameDirty: [PixelRect]?,
                 frameRect: (x: Int, y: Int, w: Int, h: Int),
                 chrome: RGBAImage, chromeY: Int) throws
}

/// How the studio opens its surface and learns about the screen.
struct SurfaceFactory {
    /// The usable area of the screen, nil when unknown.
    var usableBounds: () -> (width: Int, height: Int)?
    /// Opens a surface with this title and size (window pixels).
    var open: (_ title: String, _ width: Int, _ height: Int, _ position: (Int, Int)?) throws -> any StudioSurface
    /// Sets what runs when the display goes away (nil: nothing).
    var onDisplayLost: ((() -> Void)?) -> Void
    /// Opens the audio device the soundtrack plays on (SDL audio; a fake in tests).
    var audio: () throws -> any AudioSink

    /// The SDL surface: the window on X11 or Wayland, and the soundtrack
    /// through SDL audio (SDL.swift starts both).
    static var sdl: SurfaceFactory {
        SurfaceFactory(
        usableBounds: { StudioWindow.usableBounds() },
        open: { try StudioWindow(title: $0, width: $1, height: $2, position: $3) },
        onDisplayLost: { StudioWindow.onDisplayLost = $0 },
        audio: { try SDLAudioSink() })
    }
}

extension StudioWindow: StudioSurface {}

/// A solid box in window pixels (a handle outside the picture).
struct WindowMark: Equatable {
    var x: Int, y: Int, w: Int, h: Int
    var r: UInt8, g: UInt8, b: UInt8
}
