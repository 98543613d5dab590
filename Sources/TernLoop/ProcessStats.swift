import CLibUV
import Foundation

/// The process's own memory and CPU facts, read from the OS through libuv.
///
/// Tern reports peak memory per pass from these readings, never from estimates.
public enum ProcessStats {
    /// Resident set size now, in bytes.
    public static func residentMemory() throws -> Int {
        var rss = 0
        try UVError.check(uv_resident_set_memory(&rss), "uv_resident_set_memory")
        return rss
    }

    /// The highest resident set size the process has reached, in bytes.
    public static func peakResidentMemory() throws -> Int {
        var usage = uv_rusage_t()
        try UVError.check(uv_getrusage(&usage), "uv_getrusage")
        return Int(usage.ru_maxrss) * 1024  // kilobytes on Linux
    }

    /// Starts a new peak: from now on `peakResidentMemorySinceReset()` reports the highest
    /// resident set size reached after this call. Linux only (`/proc/self/clear_refs`); returns
    /// false where the kernel refuses, and callers then sample `residentMemory()` instead.
    public static func resetPeakResidentMemory() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// The kernel's high-water mark of the resident set (`VmHWM`), in bytes: the peak since the
    /// process started or since `resetPeakResidentMemory()`. Nil where `/proc` is not available.
    public static func peakResidentMemorySinceReset() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.dropFirst("VmHWM:".count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// The number of CPUs this process may use: the default worker count.
    public static var availableParallelism: Int {
        Int(uv_available_parallelism())
    }
}
