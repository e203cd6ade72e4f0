import WobbleCore

/// The pixels of a straight-alpha layer that are not transparent (the
/// studio's handles), to blend "over" frames of its size on the CPU.
struct SparseOverlay: Sendable {
    let width: Int
    let height: Int
    /// Pixel index (`y · width + x`) and colour of each visible pixel.
    private(set) var indices: [Int] = []
    private(set) var colors: [(UInt8, UInt8, UInt8, UInt8)] = []

    init(_ layer: RGBAImage) {
        width = layer.width
        height = layer.height
        for i in 0..<(layer.width * layer.height) where layer.pixels[i * 4 + 3] != 0 {
            indices.append(i)
            colors.append((layer.pixels[i * 4], layer.pixels[i * 4 + 1], layer.pixels[i * 4 + 2], layer.pixels[i * 4 + 3]))
        }
    }

    var isEmpty: Bool { indices.isEmpty }

    /// Blends the layer over `img` (of the layer's size; another size is
    /// left alone).
    func blend(into img: inout RGBAImage) {
        guard img.width == width, img.height == height else { return }
        img.pixels.withUnsafeMutableBufferPointer { px in
            for (n, i) in indices.enumerated() {
                let c = colors[n], a = Int(c.3), j = i * 4
                px[j] = UInt8((Int(c.0) * a + Int(px[j]) * (255 - a) + 127) / 255)
                px[j + 1] = UInt8((Int(c.1) * a + Int(px[j + 1]) * (255 - a) + 127) / 255)
                px[j + 2] = UInt8((Int(c.2) * a + Int(px[j + 2]) * (255 - a) + 127) / 255)
                px[j + 3] = UInt8(max(a, Int(px[j + 3])))
            }
        }
    }
}
