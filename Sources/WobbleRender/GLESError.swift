/// A failure of the GLES backend. Every case names the EGL or GL call (or
/// the check) that failed, so the one-line message says where it broke.
public enum GLESError: Error, Equatable, CustomStringConvertible {
    /// No EGL display could be opened and initialized on any platform; the
    /// message lists what was tried.
    case noDisplay(attempts: [String])
    /// An EGL call failed, with the EGL error name (`EGL_NOT_INITIALIZED`).
    case egl(call: String, error: String)
    /// A GL call failed, with the GL error name (`GL_INVALID_VALUE`).
    case gl(call: String, error: String)
    /// The platform lacks something the renderer needs (an extension, GLES 3).
    case unsupported(String)
    /// A shader failed to compile: its file in `Shaders/`, the info log and
    /// the source lines the log points at.
    case shaderCompile(shader: String, log: String, lines: String)
    /// A program failed to link: its shaders and the info log.
    case programLink(program: String, log: String)
    /// The framebuffer is incomplete (`glCheckFramebufferStatus`).
    case framebufferIncomplete(status: String)
    /// An image is larger than the GL implementation allows.
    case imageTooLarge(what: String, width: Int, height: Int, limit: String, max: Int)
    /// An image with no pixels.
    case emptyImage(width: Int, height: Int)

    public var description: String {
        switch self {
        case .noDisplay(let attempts):
            return "no EGL display available (\(attempts.joined(separator: "; "))); "
                + "is Mesa (libegl-mesa0) or a GPU driver installed? Use --backend cpu to render without EGL"
        case .egl(let call, let error):
            return "\(call) failed: \(error)"
        case .gl(let call, let error):
            return "\(call) failed: \(error)"
        case .unsupported(let what):
            return "GLES backend unsupported here: \(what); use --backend cpu"
        case .shaderCompile(let shader, let log, let lines):
            return "glCompileShader failed for \(shader): \(log.trimmingTrailingWhitespace)"
                + (lines.isEmpty ? "" : "\n" + lines)
        case .programLink(let program, let log):
            return "glLinkProgram failed for \(program): \(log.trimmingTrailingWhitespace)"
        case .framebufferIncomplete(let status):
            return "glCheckFramebufferStatus: framebuffer incomplete: \(status)"
        case .imageTooLarge(let what, let width, let height, let limit, let max):
            return "\(what) \(width)x\(height) is too large for the GLES renderer (\(limit) is \(max)); "
                + "use a smaller --width/--height or --backend cpu"
        case .emptyImage(let width, let height):
            return "cannot render an empty image (\(width)x\(height))"
        }
    }
}

extension String {
    var trimmingTrailingWhitespace: String {
        var s = Substring(self)
        while let last = s.last, last.isWhitespace { s.removeLast() }
        return String(s)
    }
}
