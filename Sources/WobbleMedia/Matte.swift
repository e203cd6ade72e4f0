import WobbleCore
import WobbleSystem

/// A matte colour (`--matte COLOR`): partly transparent pixels are blended
/// onto it and become opaque, as a web page's background would show them,
/// instead of GIF's 50% alpha threshold. Fully transparent pixels stay
/// transparent; opaque ones are unchanged.
public struct Matte: Equatable, Sendable {
    public var r: UInt8, g: UInt8, b: UInt8

    public init(r: UInt8, g: UInt8, b: UInt8) {
        self.r = r
        self.g = g
        self.b = b
    }

    /// Colour names `parse` knows.
    public static let names: [String: Matte] = [
        "white": Matte(r: 255, g: 255, b: 255), "black": Matte(r: 0, g: 0, b: 0),
        "gray": Matte(r: 128, g: 128, b: 128), "grey": Matte(r: 128, g: 128, b: 128),
        "red": Matte(r: 255, g: 0, b: 0), "green": Matte(r: 0, g: 128, b: 0), "blue": Matte(r: 0, g: 0, b: 255),
    ]

    /// `#RRGGBB`, `RRGGBB`, `#RGB` or a name (`white`, `black`, …); nil
    /// for anything else.
    public static func parse(_ text: String) -> Matte? {
        let t = text.lowercased()
        if let named = names[t] { return named }
        var hex = t.hasPrefix("#") ? String(t.dropFirst()) : t
        if hex.count == 3 { hex = hex.map { "\($0)\($0)" }.joined() }
        guard hex.count == 6, hex.allSatisfy(\.isHexDigit), let v = UInt32(hex, radix: 16) else { return nil }
        return Matte(r: UInt8(v >> 16), g: UInt8((v >> 8) & 0xFF), b: UInt8(v & 0xFF))
    }

    /// `image` with its partly transparent pixels blended onto the matte.
    public func apply(_ image: RGBAImage) -> RGBAImage {
        // Most frames have no partly transparent pixel: no copy for them.
        let partly = image.pixels.withUnsafeBufferPointer { p in
            stride(from: 3, to: p.count, by: 4).contains { p[$0] != 0 && p[$0] != 255 }
        }
        guard partly else { return image }
        var px = image.pixels
        let (mr, mg, mb) = (UInt32(r), UInt32(g), UInt32(b))
        px.withUnsafeMutableBufferPointer { p in
            var i = 0
            while i < p.count {
                let a = UInt32(p[i + 3])
                if a != 0 && a != 255 {
                    let ia = 255 - a
                    p[i] = UInt8((UInt32(p[i]) * a + mr * ia + 127) / 255)
                    p[i + 1] = UInt8((UInt32(p[i + 1]) * a + mg * ia + 127) / 255)
                    p[i + 2] = UInt8((UInt32(p[i + 2]) * a + mb * ia + 127) / 255)
                    p[i + 3] = 255
                }
                i += 4
            }
        }
        return RGBAImage(width: image.width, height: image.height, pixels: px)
    }
}

/// A sink that blends each frame onto a matte (`Matte.apply`) before
/// handing it on; `make` builds the inner sink and receives the blending
/// (for the GIF's still, its palette source).
public final class MatteSink: FrameSink {
    private let matte: Matte
    private let inner: FrameSink

    public init(matte: Matte, make: ((RGBAImage) -> RGBAImage) throws -> FrameSink) throws {
        self.matte = matte
        inner = try make { matte.apply($0) }
    }

    public func write(_ frame: RGBAImage, index: Int) throws { try inner.write(matte.apply(frame), index: index) }
    /// The matte works pixel by pixel: the boxes stay true.
    public func write(_ frame: RGBAImage, index: Int, changed: [PixelRect]?) throws {
        try inner.write(matte.apply(frame), index: index, changed: changed)
    }
    public func finish() throws { try inner.finish() }
    public func abort() { inner.abort() }
    public var bytesWritten: Int? { inner.bytesWritten }
}
