import Foundation

/// Resident memory over one migration's time, with each pass's end marked and the objects
/// written per second beneath: "memory per pass", seen rather than read from a table.
struct MemoryChart {
    struct Sample: Codable {
        var seconds: Double
        var residentBytes: Int
        /// Objects written so far (as progress reported them).
        var objects: Int
    }

    struct Mark: Codable {
        var seconds: Double
        var label: String
    }

    static func svg(title: String, samples: [Sample], marks: [Mark]) -> String {
        let left = 70.0, top = 40.0, plotWidth = 760.0, memoryHeight = 220.0, rateHeight = 110.0, gap = 50.0
        var svg = SVG(width: Int(left + plotWidth + 30), height: Int(top + memoryHeight + gap + rateHeight + 50))
        svg.text(title, x: 12, y: 22, size: 15, weight: "bold")
        let duration = max(samples.last?.seconds ?? 1, 0.001)
        let x = { (seconds: Double) in left + seconds / duration * plotWidth }
        // Memory, from zero to a round number of MiB above the peak.
        let peak = Double(samples.map(\.residentBytes).max() ?? 1) / 1_048_576
        let memoryTop = max(8, (peak / 8).rounded(.up) * 8)
        axes(&svg, left: left, top: top, width: plotWidth, height: memoryHeight, maximum: memoryTop, unit: "MiB")
        svg.polyline(
            samples.map { (x($0.seconds), top + memoryHeight - Double($0.residentBytes) / 1_048_576 / memoryTop * memoryHeight) }, color: BarChart.ternColor)
        svg.text(
            "resident memory (peak \(String(format: "%.1f", peak)) MiB)", x: left + plotWidth, y: top - 6, size: 11, anchor: "end", color: BarChart.ternColor)
        svg.text("objects written per second", x: left + plotWidth, y: top + memoryHeight + gap - 6, size: 11, anchor: "end", color: "#d07a1f")
        // Objects written per second, between consecutive samples.
        let rateTop = top + memoryHeight + gap
        var rates: [(Double, Double)] = []
        for (previous, sample) in zip(samples, samples.dropFirst()) where sample.seconds > previous.seconds {
            rates.append((sample.seconds, Double(max(0, sample.objects - previous.objects)) / (sample.seconds - previous.seconds)))
        }
        let fastest = max(rates.map(\.1).max() ?? 1, 1)
        axes(&svg, left: left, top: rateTop, width: plotWidth, height: rateHeight, maximum: fastest, unit: "objects/s")
        svg.polyline(rates.map { (x($0.0), rateTop + rateHeight - $0.1 / fastest * rateHeight) }, color: "#d07a1f", width: 1.5)
        // Labels in three rows, so marks close together stay readable.
        for (index, mark) in marks.enumerated() {
            svg.line(from: (x(mark.seconds), top), to: (x(mark.seconds), rateTop + rateHeight), color: "#888", dashed: true)
            svg.text(mark.label, x: x(mark.seconds) - 3, y: top + 30 + Double(index % 3) * 12, size: 10, anchor: "end", color: "#555")
        }
        svg.text(String(format: "%.1f s", duration), x: left + plotWidth, y: rateTop + rateHeight + 18, size: 11, anchor: "end")
        svg.text("0 s", x: left, y: rateTop + rateHeight + 18, size: 11)
        return svg.document
    }

    private static func axes(_ svg: inout SVG, left: Double, top: Double, width: Double, height: Double, maximum: Double, unit: String) {
        svg.line(from: (left, top), to: (left, top + height), color: "#444")
        svg.line(from: (left, top + height), to: (left + width, top + height), color: "#444")
        for step in 0...4 {
            let value = maximum * Double(step) / 4
            let y = top + height - Double(step) / 4 * height
            if step > 0 { svg.line(from: (left, y), to: (left + width, y), color: "#e4e4e4") }
            svg.text(
                value >= 10_000 ? Formatting.count(Int(value)) : String(format: value < 10 ? "%.1f" : "%.0f", value), x: left - 6, y: y + 4, size: 10,
                anchor: "end")
        }
        svg.text(unit, x: left - 6, y: top - 6, size: 10, anchor: "end")
    }
}
