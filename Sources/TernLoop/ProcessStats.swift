import CLibUV

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

    /// The number of CPUs this process may use: the default worker count.
    public static var availableParallelism: Int {
        Int(uv_available_parallelism())
    }
}
