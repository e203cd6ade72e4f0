/// Graph-based over-segmentation (Felzenszwalb and Huttenlocher, "Efficient
/// graph-based image segmentation", 2004): pixels are joined along the
/// edges between 8-neighbours, weakest first, while the edge is no stronger
/// than the variation inside both parts plus `k / size`; parts under
/// `minSize` pixels are then joined to their weakest neighbour.
///
/// What a click uses to find an object whose colours also occur around it
/// (a dark rim on a dark background): parts follow edges, not colour
/// statistics. Deterministic: integer edge weights (squared RGB distance),
/// ties broken by the edge's index, the threshold compared in doubles
/// without fused arithmetic.
enum Segments {
    /// One label per pixel of `rgb` (`width × height`, 3 bytes a pixel),
    /// 0 ..< count, numbered in the order parts first appear in rows.
    static func felzenszwalb(rgb: [UInt8], width: Int, height: Int, k: Double, minSize: Int) -> (labels: [Int32], count: Int) {
        felzenszwalb(rgb: rgb, width: width, height: height, ks: [k], minSize: minSize)[0]
    }

    /// `felzenszwalb(rgb:width:height:k:minSize:)` for each of `ks` (the
    /// edges sorted once).
    static func felzenszwalb(rgb: [UInt8], width: Int, height: Int, ks: [Double], minSize: Int) -> [(labels: [Int32], count: Int)] {
        let n = width * height
        guard n > 0 else { return ks.map { _ in ([], 0) } }
        // Edges: (weight << 32 | index) sorted; index → the pixel pair.
        var keys: [UInt64] = []
        var ends: [(Int32, Int32)] = []
        keys.reserveCapacity(n * 4)
        ends.reserveCapacity(n * 4)
        rgb.withUnsafeBufferPointer { p in
            func add(_ a: Int, _ b: Int) {
                let d0 = Int(p[a * 3]) - Int(p[b * 3]), d1 = Int(p[a * 3 + 1]) - Int(p[b * 3 + 1]), d2 = Int(p[a * 3 + 2]) - Int(p[b * 3 + 2])
                let w = UInt64(d0 * d0 + d1 * d1 + d2 * d2)
                keys.append(w << 32 | UInt64(ends.count))
                ends.append((Int32(a), Int32(b)))
            }
            for y in 0..<height {
                for x in 0..<width {
                    let i = y * width + x
                    if x + 1 < width { add(i, i + 1) }
                    if y + 1 < height {
                        add(i, i + width)
                        if x + 1 < width { add(i, i + width + 1) }
                        if x > 0 { add(i, i + width - 1) }
                    }
                }
            }
        }
        keys.sort()
        return ks.map { segment(n: n, keys: keys, ends: ends, k: $0, minSize: minSize) }
    }

    /// The joining of `felzenszwalb` over edges sorted by weight.
    private static func segment(n: Int, keys: [UInt64], ends: [(Int32, Int32)], k: Double, minSize: Int) -> (labels: [Int32], count: Int) {
        var parent = [Int32](0 ..< Int32(n))
        var size = [Int32](repeating: 1, count: n)
        var threshold = [Double](repeating: k, count: n)
        func find(_ x: Int32) -> Int32 {
            var r = x
            while parent[Int(r)] != r { r = parent[Int(r)] }
            var c = x
            while parent[Int(c)] != r { let next = parent[Int(c)]; parent[Int(c)] = r; c = next }
            return r
        }
        func join(_ a: Int32, _ b: Int32) -> Int32 {
            let (big, small) = size[Int(a)] >= size[Int(b)] ? (a, b) : (b, a)
            parent[Int(small)] = big
            size[Int(big)] += size[Int(small)]
            return big
        }
        for key in keys {
            let (p, q) = ends[Int(key & 0xffff_ffff)]
            let a = find(p), b = find(q)
            guard a != b else { continue }
            let w = Double(key >> 32).squareRoot()
            if w <= threshold[Int(a)] && w <= threshold[Int(b)] {
                let r = join(a, b)
                threshold[Int(r)] = w + k / Double(size[Int(r)])
            }
        }
        for key in keys {
            let (p, q) = ends[Int(key & 0xffff_ffff)]
            let a = find(p), b = find(q)
            if a != b && (Int(size[Int(a)]) < minSize || Int(size[Int(b)]) < minSize) { _ = join(a, b) }
        }
        var number = [Int32](repeating: -1, count: n)
        var labels = [Int32](repeating: 0, count: n)
        var count: Int32 = 0
        for i in 0..<n {
            let r = Int(find(Int32(i)))
            if number[r] < 0 { number[r] = count; count += 1 }
            labels[i] = number[r]
        }
        return (labels, Int(count))
    }
}
