/// An error from reading or writing media; `message` is the whole clear
/// line the user sees after `wobble-run: ` (for example
/// `image 'x.png': not a PNG or JPEG file`).
public struct MediaError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
