// GL names owned by final classes (created and deleted while their context
// is current), the checked-call helper and shader building. Only the GLES
// backend uses this file.
internal import CGLES
internal import WobbleShaders
import Foundation

/// Name of a GL error code.
func glErrorName(_ code: GLenum) -> String {
    switch Int32(code) {
    case GL_NO_ERROR: return "GL_NO_ERROR"
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM"
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE"
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION"
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION"
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY"
    default: return "GL error 0x" + String(code, radix: 16)
    }
}

/// Throws `GLESError.gl` naming `call` when GL recorded an error since the
/// last check (the call just made, or the group of calls it stands for).
func glCheck(_ call: String) throws {
    let code = glGetError()
    guard code == GLenum(GL_NO_ERROR) else {
        // Drain any further queued errors so the next check starts clean.
        while glGetError() != GLenum(GL_NO_ERROR) {}
        throw GLESError.gl(call: call, error: glErrorName(code))
    }
}

/// A GL string (`glGetString`), or "?" when GL has none.
func glString(_ name: Int32) -> String {
    glGetString(GLenum(name)).map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) } ?? "?"
}

/// One GL name (texture, framebuffer, program, vertex array) and the context
/// it lives in; deleted in `deinit` with that context current.
final class GLObject {
    enum Kind { case texture, framebuffer, program, vertexArray }
    let kind: Kind
    let name: GLuint
    let context: GLContext

    /// Creates a name of `kind`; the context must be current.
    init(_ kind: Kind, in context: GLContext) throws {
        self.kind = kind
        self.context = context
        var n: GLuint = 0
        switch kind {
        case .texture: glGenTextures(1, &n)
        case .framebuffer: glGenFramebuffers(1, &n)
        case .vertexArray: glGenVertexArrays(1, &n)
        case .program: n = glCreateProgram()
        }
        try glCheck(GLObject.creator(kind))
        guard n != 0 else { throw GLESError.gl(call: GLObject.creator(kind), error: "returned no name") }
        name = n
    }

    private static func creator(_ kind: Kind) -> String {
        switch kind {
        case .texture: "glGenTextures"
        case .framebuffer: "glGenFramebuffers"
        case .vertexArray: "glGenVertexArrays"
        case .program: "glCreateProgram"
        }
    }

    deinit {
        var n = name
        let kind = kind
        _ = try? context.withCurrent {
            switch kind {
            case .texture: glDeleteTextures(1, &n)
            case .framebuffer: glDeleteFramebuffers(1, &n)
            case .vertexArray: glDeleteVertexArrays(1, &n)
            case .program: glDeleteProgram(n)
            }
        }
    }
}

/// A linked program of two shaders from `Shaders/`, with its uniforms.
final class GLProgram {
    let object: GLObject
    private var locations: [String: GLint] = [:]

    /// Compiles and links `vertex` and `fragment` (file names in `Shaders/`,
    /// sources from `EmbeddedShaders`), the fragment shader with a
    /// `#define NAME VALUE` line per entry of `defines` after its `#version`
    /// line; the context must be current.
    init(vertex: String, fragment: String, defines: [(name: String, value: Int)] = [], in context: GLContext) throws {
        object = try GLObject(.program, in: context)
        let vs = try GLProgram.compile(vertex, type: GLenum(GL_VERTEX_SHADER))
        defer { glDeleteShader(vs) }
        let fs = try GLProgram.compile(fragment, type: GLenum(GL_FRAGMENT_SHADER), defines: defines)
        defer { glDeleteShader(fs) }
        let p = object.name
        glAttachShader(p, vs)
        glAttachShader(p, fs)
        glLinkProgram(p)
        var ok: GLint = 0
        glGetProgramiv(p, GLenum(GL_LINK_STATUS), &ok)
        if ok == 0 {
            throw GLESError.programLink(program: "\(vertex) + \(fragment)", log: GLProgram.log(program: p))
        }
        glDetachShader(p, vs)
        glDetachShader(p, fs)
        try glCheck("glLinkProgram")
    }

    var name: GLuint { object.name }

    /// The location of uniform `uniform` (which must be used by the shaders).
    func location(_ uniform: String) throws -> GLint {
        let l = optionalLocation(uniform)
        guard l >= 0 else { throw GLESError.gl(call: "glGetUniformLocation(\(uniform))", error: "no such active uniform") }
        return l
    }

    /// The location of uniform `uniform`, or -1 (which `glUniform*` ignore)
    /// where this program does not use it (a switch compiled in, a branch
    /// compiled out).
    func optionalLocation(_ uniform: String) -> GLint {
        if let l = locations[uniform] { return l }
        let l = glGetUniformLocation(object.name, uniform)
        locations[uniform] = l
        return l
    }

    /// `text` with a `#define NAME VALUE` line per entry of `defines` after
    /// its first line (the `#version` line, which must come first).
    static func defining(_ defines: [(name: String, value: Int)], in text: String) -> String {
        guard !defines.isEmpty else { return text }
        let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        return ([String(lines[0])] + defines.map { "#define \($0.name) \($0.value)" } + lines.dropFirst().map(String.init))
            .joined(separator: "\n")
    }

    /// `text` with each line `#include "NAME"` replaced by the embedded
    /// file NAME (GLSL ES has no includes of its own); one level deep.
    static func expandIncludes(_ text: String, in file: String) throws -> String {
        guard text.contains("#include") else { return text }
        var out: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("#include") else { out.append(line); continue }
            let name = t.dropFirst("#include".count).trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            guard let included = EmbeddedShaders.all[name],
                  !included.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces).hasPrefix("#include") }) else {
                throw GLESError.shaderCompile(shader: file, log: "#include \"\(name)\": not an embedded file without includes", lines: "")
            }
            out.append(Substring(included))
        }
        return out.joined(separator: "\n")
    }

    private static func compile(_ file: String, type: GLenum, defines: [(name: String, value: Int)] = []) throws -> GLuint {
        guard let text = EmbeddedShaders.all[file] else {
            throw GLESError.shaderCompile(shader: file, log: "not among the embedded shaders", lines: "")
        }
        let source = GLProgram.defining(defines, in: try GLProgram.expandIncludes(text, in: file))
        let shader = glCreateShader(type)
        guard shader != 0 else { throw GLESError.gl(call: "glCreateShader(\(file))", error: glErrorName(glGetError())) }
        source.withCString { cs in
            var p: UnsafePointer<GLchar>? = cs
            glShaderSource(shader, 1, &p, nil)
        }
        glCompileShader(shader)
        var ok: GLint = 0
        glGetShaderiv(shader, GLenum(GL_COMPILE_STATUS), &ok)
        if ok == 0 {
            var length: GLint = 0
            glGetShaderiv(shader, GLenum(GL_INFO_LOG_LENGTH), &length)
            var buffer = [GLchar](repeating: 0, count: Int(max(length, 1)) + 1)
            glGetShaderInfoLog(shader, GLsizei(buffer.count), nil, &buffer)
            glDeleteShader(shader)
            let log = string(fromLog: buffer)
            throw GLESError.shaderCompile(shader: "Shaders/\(file)", log: log, lines: offendingLines(log: log, source: source))
        }
        return shader
    }

    private static func log(program: GLuint) -> String {
        var length: GLint = 0
        glGetProgramiv(program, GLenum(GL_INFO_LOG_LENGTH), &length)
        var buffer = [GLchar](repeating: 0, count: Int(max(length, 1)) + 1)
        glGetProgramInfoLog(program, GLsizei(buffer.count), nil, &buffer)
        return string(fromLog: buffer)
    }
}

/// The text of a NUL-terminated info log buffer.
private func string(fromLog buffer: [GLchar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The source lines an info log points at, numbered, with a line of context
/// either side. Understands Mesa's `0:12(5): error` and NVIDIA's
/// `0(12) : error`.
func offendingLines(log: String, source: String) -> String {
    let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
    var wanted = Set<Int>()
    for entry in log.split(separator: "\n") {
        // The line number follows "0:" or "0(" at the start of the entry.
        let chars = Array(entry)
        guard chars.count > 2, chars[0].isNumber else { continue }
        var i = 0
        while i < chars.count, chars[i].isNumber { i += 1 }
        guard i < chars.count, chars[i] == ":" || chars[i] == "(" else { continue }
        i += 1
        var n = 0, digits = 0
        while i < chars.count, let d = chars[i].wholeNumberValue { n = n * 10 + d; i += 1; digits += 1 }
        if digits > 0, n >= 1, n <= lines.count { wanted.insert(n) }
    }
    var shown = Set<Int>()
    for n in wanted { for k in (n - 1)...(n + 1) where k >= 1 && k <= lines.count { shown.insert(k) } }
    return shown.sorted().map { k in
        (wanted.contains(k) ? ">" : " ") + String(format: "%4d| ", k) + lines[k - 1]
    }.joined(separator: "\n")
}
