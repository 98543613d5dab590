import Foundation

/// The few SVG elements tern's charts are drawn with, written as text: charts are files a
/// browser or GitHub shows as they are, with no library and no fonts to ship.
struct SVG {
    let width: Int
    let height: Int
    private var elements: [String] = []

    init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    mutating func text(_ content: String, x: Double, y: Double, size: Int = 12, anchor: String = "start", weight: String = "normal", color: String = "#222") {
        elements.append(
            "<text x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" font-size=\"\(size)\" text-anchor=\"\(anchor)\" font-weight=\"\(weight)\" fill=\"\(color)\">\(Self.escaped(content))</text>"
        )
    }

    mutating func rectangle(x: Double, y: Double, width: Double, height: Double, color: String) {
        elements.append(
            "<rect x=\"\(Self.number(x))\" y=\"\(Self.number(y))\" width=\"\(Self.number(max(width, 0)))\" height=\"\(Self.number(max(height, 0)))\" fill=\"\(color)\"/>"
        )
    }

    mutating func line(from start: (Double, Double), to end: (Double, Double), color: String, width: Double = 1, dashed: Bool = false) {
        elements.append(
            "<line x1=\"\(Self.number(start.0))\" y1=\"\(Self.number(start.1))\" x2=\"\(Self.number(end.0))\" y2=\"\(Self.number(end.1))\" stroke=\"\(color)\" stroke-width=\"\(Self.number(width))\"\(dashed ? " stroke-dasharray=\"4 3\"" : "")/>"
        )
    }

    mutating func polyline(_ points: [(Double, Double)], color: String, width: Double = 2) {
        guard !points.isEmpty else { return }
        let list = points.map { "\(Self.number($0.0)),\(Self.number($0.1))" }.joined(separator: " ")
        elements.append("<polyline points=\"\(list)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"\(Self.number(width))\" stroke-linejoin=\"round\"/>")
    }

    var document: String {
        ([
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" font-family=\"Helvetica, Arial, sans-serif\">",
            "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>",
        ] + elements + ["</svg>"]).joined(separator: "\n") + "\n"
    }

    private static func number(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
