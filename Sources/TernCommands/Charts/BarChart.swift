/// Horizontal bars, one per run, in panels side by side (wall time, peak memory): tern's runs in
/// one colour, the references they are measured against (the hand-written SQL script, the naive
/// program) in another, so a ratio can be seen at a glance.
package struct BarChart {
    package struct Bar {
        var label: String
        var value: Double
        var text: String
        var isReference: Bool

        package init(label: String, value: Double, text: String, isReference: Bool) {
            (self.label, self.value, self.text, self.isReference) = (label, value, text, isReference)
        }
    }

    package struct Panel {
        var title: String
        var bars: [Bar]

        package init(title: String, bars: [Bar]) {
            (self.title, self.bars) = (title, bars)
        }
    }

    static let ternColor = "#2f6db5"
    static let referenceColor = "#b0b0b0"

    package static func svg(title: String, panels: [Panel]) -> String {
        // Wide enough for the longest label at about 7 px a character (SVG text cannot be measured here).
        let longest = panels.flatMap(\.bars).map(\.label.count).max() ?? 0
        let labelWidth = max(200, Double(longest) * 7 + 20), panelWidth = 300.0, barHeight = 18.0, gap = 8.0, top = 56.0
        let rows = panels.map(\.bars.count).max() ?? 0
        let height = Int(top + Double(rows) * (barHeight + gap) + 40)
        var svg = SVG(width: Int(labelWidth + Double(panels.count) * (panelWidth + 20) + 20), height: height)
        svg.text(title, x: 12, y: 22, size: 15, weight: "bold")
        for (index, panel) in panels.enumerated() {
            let left = labelWidth + Double(index) * (panelWidth + 20)
            svg.text(panel.title, x: left, y: top - 12, weight: "bold")
            let largest = panel.bars.map(\.value).max() ?? 1
            for (row, bar) in panel.bars.enumerated() {
                let y = top + Double(row) * (barHeight + gap)
                if index == 0 { svg.text(bar.label, x: labelWidth - 10, y: y + barHeight - 5, anchor: "end") }
                let length = largest > 0 ? bar.value / largest * (panelWidth - 90) : 0
                svg.rectangle(x: left, y: y, width: length, height: barHeight, color: bar.isReference ? referenceColor : ternColor)
                svg.text(bar.text, x: left + length + 6, y: y + barHeight - 5, size: 11)
            }
        }
        let legend = top + Double(rows) * (barHeight + gap) + 16
        svg.rectangle(x: labelWidth, y: legend - 10, width: 12, height: 12, color: ternColor)
        svg.text("tern", x: labelWidth + 18, y: legend, size: 11)
        svg.rectangle(x: labelWidth + 70, y: legend - 10, width: 12, height: 12, color: referenceColor)
        svg.text("references: the hand-written SQL script, the naive program", x: labelWidth + 88, y: legend, size: 11)
        return svg.document
    }
}
