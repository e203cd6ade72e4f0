import WobbleCore
import WobbleStudioCore
import WobbleRender

/// Every key and mouse action of the studio (`StudioKeyMap.help`, which
/// the browser page shows too), shown over the window by `F1` (or `?`), with the last message whole; pages when the window is too
/// small for it all (`Down` shows the next page, any other key closes it).
enum HelpSheet {
    static var entries: [(keys: String, what: String)] { StudioKeyMap.help.map { ($0.keys, $0.what) } }

    /// The sheet's lines at `columns` characters (entries, then the last message).
    static func lines(columns: Int, message: String) -> [String] {
        let keyWidth = min(25, max(8, columns / 3))
        var out: [String] = []
        for e in entries {
            let key = e.keys.count < keyWidth ? e.keys + String(repeating: " ", count: keyWidth - e.keys.count) : e.keys + " "
            let rest = Chrome.wrap(e.what, width: max(8, columns - keyWidth - 1))
            if key.count > keyWidth {
                out.append(e.keys)
                out += rest.map { String(repeating: " ", count: keyWidth) + $0 }
            } else {
                out.append(key + (rest.first ?? ""))
                out += rest.dropFirst().map { String(repeating: " ", count: keyWidth) + $0 }
            }
        }
        if !message.isEmpty {
            out.append("")
            out.append("last message:")
            out += Chrome.wrap(message, width: max(8, columns))
        }
        return out
    }

    /// The page `page` of the sheet for a window `width` x `height`, and
    /// how many pages there are.
    static func image(width: Int, height: Int, page: Int, message: String) -> (image: RGBAImage, pages: Int) {
        var c = Canvas(width: max(1, width), height: max(1, height), color: (24, 26, 32))
        let pad = 10, row = StudioFont.cellHeight + 2
        let columns = max(8, Canvas.fits(from: pad, to: width - pad))
        let all = lines(columns: columns, message: message)
        let perPage = max(1, (height - pad * 2 - row * 2) / row)
        let pages = max(1, (all.count + perPage - 1) / perPage)
        let p = min(max(0, page), pages - 1)
        let title = pages > 1 ? "Keys, page \(p + 1)/\(pages): Down next page, any other key closes" : "Keys: any key closes"
        for (i, l) in Chrome.wrap(title, width: columns).prefix(1).enumerated() { c.text(l, x: pad, y: pad + i * row, (255, 220, 120)) }
        for (i, l) in all.dropFirst(p * perPage).prefix(perPage).enumerated() {
            c.text(l, x: pad, y: pad + (i + 2) * row, (225, 225, 230))
        }
        return (c.image, pages)
    }
}
