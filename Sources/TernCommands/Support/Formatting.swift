import Foundation

/// How numbers read in tern's text output: the progress bar, summaries, plans, benchmark tables.
package enum Formatting {
    /// 1234567 → "1,234,567", whatever the locale.
    package static func count(_ value: Int) -> String {
        value.formatted(.number.grouping(.automatic).locale(Locale(identifier: "en_US")))
    }

    /// Bytes → "36.9 MiB".
    package static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }

    /// Seconds → "m:ss", or "h:mm:ss" from an hour on.
    static func clock(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        return whole >= 3600 ? String(format: "%d:%02d:%02d", whole / 3600, whole / 60 % 60, whole % 60) : String(format: "%d:%02d", whole / 60, whole % 60)
    }
}
