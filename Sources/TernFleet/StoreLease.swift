import Foundation
import Synchronization
import Tern
import TernCommands

/// Who holds a store's lease: written into the lease file, read by every other task.
struct LeaseHolder: Codable, Equatable, Sendable {
    /// Unique to one attempt of one task.
    var owner: String
    /// For people: the shard and the engine's job, as the task knows them.
    var task: String
    var host: String
    var pid: Int32
    /// The boot and the process-id namespace `pid` belongs to: only a task that shares both can
    /// tell from `pid` whether the holder is alive (two containers may share a host name).
    var processSpace: String
    /// Unix seconds.
    var acquired: Double
    var expires: Double

    var summary: String { "\(task) (pid \(pid) on \(host))" }
}

/// This task, as a lease holder.
struct LeaseIdentity: Sendable {
    var owner = UUID().uuidString
    var task: String
    var host = ProcessInfo.processInfo.hostName
    var pid = getpid()
    var processSpace = LeaseIdentity.currentProcessSpace()

    func holder(now: Double, length: Double) -> LeaseHolder {
        LeaseHolder(owner: owner, task: task, host: host, pid: pid, processSpace: processSpace, acquired: now, expires: now + length)
    }

    /// The boot id and the pid namespace of this process (empty where /proc has neither).
    static func currentProcessSpace() -> String {
        let boot = (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let namespace = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/ns/pid")) ?? ""
        return boot.isEmpty || namespace.isEmpty ? "" : "\(boot)/\(namespace)"
    }

    /// Whether `holder` has certainly ended: its lease expired, or it ran in this process space
    /// and its process is gone (a task SIGKILLed and retried on the same machine need not wait).
    func isStale(_ holder: LeaseHolder, now: Double) -> Bool {
        // An expiry further off than the longest lease is a wrong clock or a forged file.
        if holder.expires < now || holder.expires > now + StoreLease.longest + 60 { return true }
        guard !processSpace.isEmpty, holder.processSpace == processSpace, holder.host == host, holder.pid != pid else { return false }
        return kill(holder.pid, 0) != 0 && errno == ESRCH
    }
}

/// A store's lease: a file beside the store (`.NAME.tern-lease`) that says which task is
/// migrating it and until when. Made for shared storage where `flock` may not reach across
/// machines (NFS without lockd, object-store mounts), and for engines that run one task twice:
///
/// - it is created whole and atomically: written under a name of its own, then hard-linked to the
///   lease's name, which fails when a lease exists (and the link count proves success on NFS,
///   where a retried `link` can report a failure that happened);
/// - its holder renews it every third of its length by renaming a new file over it, and stops
///   its migration (`isLost`) when it finds the lease gone or someone else's, or when the lease
///   is within a sixth of its length of expiring unrenewed (a stalled renewal, a paused process):
///   a holder never works on past its expiry, when another task may take the store;
/// - it is taken over only when it has expired or its process is known to be dead, by renaming
///   it aside first, so two tasks breaking one stale lease cannot both win.
///
/// Clocks of the machines must agree to within a few seconds of the lease's length.
final class StoreLease: Sendable {
    enum Acquisition {
        case acquired(StoreLease)
        case held(LeaseHolder)
    }

    let path: String
    let identity: LeaseIdentity
    let length: Double
    private let lost = Atomic<Bool>(false)
    private let expires: Mutex<Double>
    /// Seconds since 1970: the wall clock, or a test's, which it moves on by hand.
    private let clock: Clock

    /// What a lease reads the time from.
    typealias Clock = @Sendable () -> Double

    /// The time every lease of every task compares: seconds since 1970.
    static let wallClock: Clock = { Date().timeIntervalSince1970 }

    /// The longest a lease may last, in seconds: a day.
    static let longest = 86_400.0

    /// The lease file of a store: beside the file itself, a symbolic link followed, so two names
    /// of one store share one lease.
    static func path(for store: String) -> String {
        let url = URL(fileURLWithPath: store).resolvingSymlinksInPath()
        return url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).tern-lease").path
    }

    private init(path: String, identity: LeaseIdentity, length: Double, expires: Double, clock: @escaping Clock) {
        self.path = path
        self.identity = identity
        self.length = length
        self.expires = Mutex(expires)
        self.clock = clock
    }

    /// Takes the lease of `store` for `length` seconds, or says who holds it. Each lease gets an
    /// owner of its own, so two leases of one task (a store and a link to it) never pass for one.
    static func acquire(store: String, identity task: LeaseIdentity, length: Double, clock: @escaping Clock = wallClock) throws -> Acquisition {
        let path = path(for: store)
        var identity = task
        identity.owner = UUID().uuidString
        var holder: LeaseHolder?
        for _ in 0..<8 {
            let now = clock()
            let mine = identity.holder(now: now, length: length)
            if try create(path, holding: mine, scratch: "\(path).\(identity.owner).new") {
                return .acquired(StoreLease(path: path, identity: identity, length: length, expires: mine.expires, clock: clock))
            }
            guard let current = try read(path, length: length) else { continue }  // released meanwhile
            guard identity.isStale(current, now: now) else { return .held(current) }
            try breakStale(path, seen: current, identity: identity, length: length, now: clock)
            holder = current
        }
        // Eight rounds lost to other tasks breaking, taking and releasing it: busy; try later.
        let now = clock()
        return .held(
            try read(path, length: length) ?? holder
                ?? LeaseHolder(owner: "unknown", task: "other tasks, taking and releasing it", host: "", pid: 0, processSpace: "", acquired: now, expires: now))
    }

    /// How close to its expiry an unrenewed lease counts as lost.
    private var margin: Double { length / 6 }

    /// True once the lease was found gone or taken, or is about to expire unrenewed: the
    /// migration under it must stop.
    var isLost: Bool {
        lost.load(ordering: .relaxed) || clock() >= expires.withLock { $0 } - margin
    }

    /// Extends the lease by its length. Returns false, and marks it lost, when it is no longer
    /// this task's: taken over after expiring, or removed by someone.
    @discardableResult
    func renew() -> Bool {
        // Under the lock `release` takes too: a renewal racing a release would rename a new
        // lease file into the place the release just emptied.
        expires.withLock { expires in
            let now = clock()
            // Too late: another task may be taking it over this moment.
            guard !lost.load(ordering: .relaxed), now < expires - margin else {
                lost.store(true, ordering: .relaxed)
                return false
            }
            let current: LeaseHolder?
            do { current = try Self.read(path, length: length) } catch {
                return true  // unreadable just now (NFS): not renewed this time, not lost either
            }
            guard let current, current.owner == identity.owner else {
                lost.store(true, ordering: .relaxed)
                return false
            }
            var holder = current
            holder.expires = now + length
            let scratch = "\(path).\(identity.owner).renew"
            guard (try? Self.writeNew(scratch, holder)) != nil, rename(scratch, path) == 0 else {
                unlink(scratch)
                return true  // not renewed this time; the next try may succeed before it expires
            }
            expires = holder.expires
            return true
        }
    }

    /// Gives the lease up, if it is still this task's.
    func release() {
        expires.withLock { _ in
            // Still ours in the file (even if given up as about to expire): remove it.
            if let current = try? Self.read(path, length: length), current.owner == identity.owner { unlink(path) }
            lost.store(true, ordering: .relaxed)
        }
    }

    // MARK: Files

    /// Creates the lease file holding `holder`, atomically; false when a lease file exists.
    private static func create(_ path: String, holding holder: LeaseHolder, scratch: String) throws -> Bool {
        do { try writeNew(scratch, holder) } catch let error as CannotWrite {
            unlink(scratch)
            throw LeaseError(path: path, code: error.code)
        }
        defer { unlink(scratch) }
        let linked = link(scratch, path) == 0
        let code = errno
        var info = stat()
        if linked || (stat(scratch, &info) == 0 && info.st_nlink == 2) { return true }
        guard code == EEXIST else { throw LeaseError(path: path, code: code, linking: true) }
        return false
    }

    /// A system call's failure while writing a lease file.
    private struct CannotWrite: Error { var code: Int32 }

    private static func writeNew(_ path: String, _ holder: LeaseHolder) throws {
        let bytes = Array(try JSONEncoder.fleetLine().encode(holder)) + [UInt8(ascii: "\n")]
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw CannotWrite(code: errno) }
        defer { close(descriptor) }
        let written = bytes.withUnsafeBytes { Foundation.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count, fsync(descriptor) == 0 else { throw CannotWrite(code: written < 0 ? errno : (errno == 0 ? EIO : errno)) }
    }

    /// The holder a lease file names; nil when there is none. A file that is not a lease (never
    /// written by a task, which writes whole files) counts as a holder whose lease ends one
    /// length after the file was last changed.
    static func read(_ path: String, length: Double) throws -> LeaseHolder? {
        // Never through a link, never waiting on a FIFO: anything but a regular file is no lease.
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            guard errno == ENOENT else {
                guard errno == ELOOP || errno == ENXIO else {
                    throw TernError(.io, "cannot read the lease file: \(String(cString: strerror(errno)))", path: path)
                }
                return notALease(path, length: length)
            }
            return nil
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return notALease(path, length: length) }
        let data = (try? handle.read(upToCount: 64 << 10)) ?? Data()
        return (try? JSONDecoder().decode(LeaseHolder.self, from: data)) ?? notALease(path, length: length)
    }

    /// A file in the lease's place that no task wrote (tasks write whole files): it counts as a
    /// holder whose lease ends one length after the file last changed.
    private static func notALease(_ path: String, length: Double) -> LeaseHolder {
        var info = stat()
        let changed = lstat(path, &info) == 0 ? Double(info.st_mtim.tv_sec) : 0
        return LeaseHolder(owner: "unknown", task: "not a lease file", host: "", pid: 0, processSpace: "", acquired: changed, expires: changed + length)
    }

    /// Removes a stale lease so it can be created again; only one of the tasks breaking it at once
    /// moves it aside, and a lease renewed in the meantime is put back.
    private static func breakStale(_ path: String, seen: LeaseHolder, identity: LeaseIdentity, length: Double, now: Clock) throws {
        let aside = "\(path).\(identity.owner).stale"
        guard rename(path, aside) == 0 else {
            guard errno == ENOENT else { throw TernError(.io, "cannot take over an expired lease: \(String(cString: strerror(errno)))", path: path) }
            return  // another task moved it first
        }
        defer { unlink(aside); rmdir(aside) }  // a directory in the lease's place goes too, if empty
        let moved = try read(aside, length: length)
        if let moved, moved != seen, !identity.isStale(moved, now: now()) {
            _ = link(aside, path)  // renewed just now: its holder keeps it
        }
    }
}

/// A lease file could not be written beside a store: its folder is gone, or not writable, or
/// the storage has no hard links.
struct LeaseError: Error, CustomStringConvertible {
    /// The lease file's path.
    var path: String
    var code: Int32
    /// Whether the hard link into place failed (the file itself was written).
    var linking = false

    /// The store the lease is for.
    var store: String {
        let url = URL(fileURLWithPath: path)
        return url.deletingLastPathComponent().appendingPathComponent(String(url.lastPathComponent.dropFirst().dropLast(".tern-lease".count))).path
    }

    /// A missing folder, a permission or a filesystem without hard links is no better on a retry;
    /// anything else may be.
    var isPermanent: Bool { [ENOENT, ENOTDIR, EACCES, EPERM, EROFS, ENOTSUP, EOPNOTSUPP, ENOSYS, EXDEV].contains(code) }

    var description: String {
        let reason =
            switch code {
            case ENOENT, ENOTDIR: "its folder does not exist"
            case _ where linking && [EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS, EXDEV].contains(code): "the storage has no hard links, which leases need"
            default: String(cString: strerror(code))
            }
        return "\(store): cannot create the store's lease beside it (\(reason)); tern writes its lease, its backup and the migrated store there"
    }
}
