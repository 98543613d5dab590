/*
 * A fault-injecting SQLite VFS for Tern's tests and scripts/soak, after SQLite's own test_vfs.c
 * (the Nth read, write, sync, truncate or open fails) and test6.c (a power cut loses the writes
 * since each file's last sync). Never part of Tern: it is built into a shared object by the tests
 * and loaded into the real `tern` with LD_PRELOAD, where its constructor registers it as the
 * default VFS, wrapping "unix". Every connection of the process then goes through it: sources,
 * step stores, destinations.
 *
 * TERN_FAULT = OP:N:MODE[:KIND]
 *   OP    read | write | sync | truncate | open, or exit (N 1, MODE powerloss or tear): the
 *         power goes as the process exits, after it said what it did
 *   N     the Nth call of OP, counted over the files of KIND (1-based)
 *   MODE  once        SQLITE_IOERR_* for that call only
 *         persistent  SQLITE_IOERR_* for that call and every later call of OP
 *         full        SQLITE_FULL for that call and every later write (OP write only)
 *         powerloss   at that call, every open file loses the writes made since its last sync,
 *                     and the process dies at once (exit 137, as a SIGKILL would)
 *         tear        as powerloss, but each lost write is kept or lost by a coin (seeded by N)
 *   KIND  main | wal | journal | any (default: any; temporary files are never counted)
 * TERN_FAULT_COUNTS = FILE: at exit, appends one line "read=R write=W sync=S truncate=T open=O"
 *   (the calls of each OP over files of KIND), so a sweep knows how many points there are.
 * TERN_FAULT_TRACE (set): every counted call is printed to standard error, to find where one is.
 *
 * When a fault fires it prints "tern-fault: OP #N of FILE failed (MODE)" to standard error.
 *
 * Undoing a lost write: before each write or truncate of a file since its last sync, the bytes
 * it replaces (and the file's size) are kept in memory, also after the file is closed (the page
 * cache keeps unsynced writes); a sync of the file, through any handle, makes them durable. A
 * power cut puts them back, newest first. What SQLite writes outside xWrite (the memory-mapped
 * -shm) is not durable anyway. Files Tern writes itself through write(2) are not modelled.
 *
 * Directory changes: with powerloss or tear, rename(2), link(2) and unlink(2) of the process
 * (SQLite's journals, -wal and -shm aside) are durable only once their directory is fsynced; a
 * power cut undoes the others, newest first, before the files' lost writes are put back. A name a
 * rename replaced or an unlink removed is kept under a hidden hard link until then.
 */
#include <sqlite3.h>
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OP_READ, OP_WRITE, OP_SYNC, OP_TRUNCATE, OP_OPEN, OP_COUNT, OP_EXIT = OP_COUNT };
static const char *const op_names[OP_COUNT + 1] = { "read", "write", "sync", "truncate", "open", "exit" };
enum { KIND_TEMP, KIND_MAIN, KIND_WAL, KIND_JOURNAL, KIND_ANY };
enum { MODE_ONCE, MODE_PERSISTENT, MODE_FULL, MODE_POWERLOSS, MODE_TEAR };
static const char *const mode_names[] = { "once", "persistent", "full", "powerloss", "tear" };

static struct {
    int enabled, op, mode, kind, trace;
    long long n;
    const char *counts_file;
    long long counts[OP_COUNT];
    int failing[OP_COUNT];  /* persistent: every later call fails */
    pthread_mutex_t mutex;  /* counts, the open files and their undo logs */
} fault = { .mutex = PTHREAD_MUTEX_INITIALIZER };

static sqlite3_vfs *real_vfs;

typedef struct Undo {
    sqlite3_int64 offset;
    int amount;     /* bytes of `bytes` that existed before the write */
    void *bytes;
} Undo;

typedef struct FaultFile {
    sqlite3_file base;
    int kind;
    const char *name;
    /* Since the last sync: the size then (-1: not taken yet) and the bytes writes replaced. */
    sqlite3_int64 synced_size;
    Undo *undo;
    int undo_count, undo_capacity;
    struct FaultFile *next_open;
    sqlite3_file *real;  /* the wrapped file, allocated right after this struct */
} FaultFile;

static FaultFile *open_files;

/* Files closed with writes not yet synced: the page cache keeps them after close, and a power cut
 * loses them all the same, until something syncs the file again. */
typedef struct ClosedFile {
    char *path;
    sqlite3_int64 synced_size;
    Undo *undo;
    int undo_count;
    struct ClosedFile *next;
} ClosedFile;

static ClosedFile *closed_files;

static int same_path(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static int counts_kind(const FaultFile *file) {
    return file->kind != KIND_TEMP && (fault.kind == KIND_ANY || fault.kind == file->kind);
}

static void power_cut(void);

/* Counts a call of `op` on `file` (or a file of `kind` being opened) and says whether it fails. */
static int should_fail(int op, int kind, const char *name) {
    if (kind == KIND_TEMP || !(fault.kind == KIND_ANY || fault.kind == kind)) return 0;
    pthread_mutex_lock(&fault.mutex);
    long long call = ++fault.counts[op];
    if (fault.trace) fprintf(stderr, "tern-fault: %s #%lld of %s\n", op_names[op], call, name ? name : "?");
    int fails = 0;
    if (fault.enabled && op == fault.op) {
        if (call == fault.n) {
            errno = fault.mode == MODE_FULL ? ENOSPC : EIO;  /* what sqlite3_system_errno reports */
            fails = 1;
            fprintf(stderr, "tern-fault: %s #%lld of %s failed (%s)\n", op_names[op], call, name ? name : "?", mode_names[fault.mode]);
            if (fault.mode == MODE_POWERLOSS || fault.mode == MODE_TEAR) power_cut();  /* does not return */
            if (fault.mode != MODE_ONCE) fault.failing[op] = 1;
        } else if (fault.failing[op]) {
            errno = fault.mode == MODE_FULL ? ENOSPC : EIO;
            fails = 1;
        }
    }
    pthread_mutex_unlock(&fault.mutex);
    return fails;
}

/* Keeps what a write of `amount` bytes at `offset` (or a truncate to `offset`, amount < 0) replaces. */
static int remember(FaultFile *file, sqlite3_int64 offset, int amount) {
    if (fault.mode != MODE_POWERLOSS && fault.mode != MODE_TEAR) return SQLITE_OK;
    if (!fault.enabled) return SQLITE_OK;
    pthread_mutex_lock(&fault.mutex);
    int rc = SQLITE_OK;
    sqlite3_int64 size = 0;
    if ((rc = file->real->pMethods->xFileSize(file->real, &size)) != SQLITE_OK) goto done;
    if (file->synced_size < 0) file->synced_size = size;
    if (amount < 0) { offset = offset < size ? offset : size; amount = (int)(size - offset); }
    if (offset >= size || amount <= 0) goto done;  /* nothing existed there: the size undoes it */
    if (offset + amount > size) amount = (int)(size - offset);
    if (file->undo_count == file->undo_capacity) {
        int capacity = file->undo_capacity ? 2 * file->undo_capacity : 64;
        Undo *grown = realloc(file->undo, (size_t)capacity * sizeof(Undo));
        if (!grown) { rc = SQLITE_NOMEM; goto done; }
        file->undo = grown;
        file->undo_capacity = capacity;
    }
    void *bytes = malloc((size_t)amount);
    if (!bytes) { rc = SQLITE_NOMEM; goto done; }
    rc = file->real->pMethods->xRead(file->real, bytes, amount, offset);
    if (rc != SQLITE_OK) { free(bytes); goto done; }
    file->undo[file->undo_count++] = (Undo){ offset, amount, bytes };
done:
    pthread_mutex_unlock(&fault.mutex);
    return rc;
}

static void forget(FaultFile *file) {
    for (int i = 0; i < file->undo_count; i++) free(file->undo[i].bytes);
    file->undo_count = 0;
    file->synced_size = -1;
}

/* A sync of `path` makes every write to that file durable, whichever handle made it, closed ones
 * included (fsync flushes the file, not the descriptor). Called with the mutex held. */
static void synced(const char *path) {
    for (FaultFile *file = open_files; file; file = file->next_open) {
        if (same_path(file->name, path)) forget(file);
    }
    for (ClosedFile **link = &closed_files; *link;) {
        ClosedFile *closed = *link;
        if (!same_path(closed->path, path)) { link = &closed->next; continue; }
        *link = closed->next;
        for (int i = 0; i < closed->undo_count; i++) free(closed->undo[i].bytes);
        free(closed->undo);
        free(closed->path);
        free(closed);
    }
}

/* The power goes: each open file gets back the bytes and size it had at its last sync (with
 * `tear`, each lost write by a coin), then the process dies without flushing anything. */
static void undo_directory_changes(void);

static void power_cut(void) {
    undo_directory_changes();
    unsigned long long coin = (unsigned long long)fault.n * 0x9E3779B97F4A7C15ull + 1;
    /* Open handles first (their writes are the newest), then files closed unsynced, newest first. */
    for (FaultFile *file = open_files; file; file = file->next_open) {
        for (int i = file->undo_count - 1; i >= 0; i--) {
            coin ^= coin << 13; coin ^= coin >> 7; coin ^= coin << 17;
            if (fault.mode == MODE_TEAR && (coin & 1)) continue;
            file->real->pMethods->xWrite(file->real, file->undo[i].bytes, file->undo[i].amount, file->undo[i].offset);
        }
        if (file->synced_size >= 0 && (fault.mode == MODE_POWERLOSS || (coin & 2))) {
            file->real->pMethods->xTruncate(file->real, file->synced_size);
        }
    }
    for (ClosedFile *closed = closed_files; closed; closed = closed->next) {
        int descriptor = open(closed->path, O_WRONLY);
        if (descriptor < 0) continue;  /* deleted since: nothing to put back */
        for (int i = closed->undo_count - 1; i >= 0; i--) {
            coin ^= coin << 13; coin ^= coin >> 7; coin ^= coin << 17;
            if (fault.mode == MODE_TEAR && (coin & 1)) continue;
            if (pwrite(descriptor, closed->undo[i].bytes, (size_t)closed->undo[i].amount, closed->undo[i].offset) < 0) break;
        }
        if (closed->synced_size >= 0 && (fault.mode == MODE_POWERLOSS || (coin & 2))) {
            if (ftruncate(descriptor, closed->synced_size) != 0) { /* keep going: the cut is best effort */ }
        }
        close(descriptor);
    }
    _exit(137);
}

static int fault_close(sqlite3_file *f) {
    FaultFile *file = (FaultFile *)f;
    pthread_mutex_lock(&fault.mutex);
    for (FaultFile **link = &open_files; *link; link = &(*link)->next_open) {
        if (*link == file) { *link = file->next_open; break; }
    }
    if (file->undo_count > 0 && file->name) {
        ClosedFile *closed = calloc(1, sizeof *closed);
        if (closed && (closed->path = strdup(file->name))) {
            closed->synced_size = file->synced_size;
            closed->undo = file->undo;
            closed->undo_count = file->undo_count;
            closed->next = closed_files;
            closed_files = closed;
            file->undo = NULL;
            file->undo_count = 0;
        } else {
            free(closed);
        }
    }
    forget(file);
    free(file->undo);
    pthread_mutex_unlock(&fault.mutex);
    return file->real->pMethods->xClose(file->real);
}

static int fault_read(sqlite3_file *f, void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *file = (FaultFile *)f;
    if (should_fail(OP_READ, file->kind, file->name)) return SQLITE_IOERR_READ;
    return file->real->pMethods->xRead(file->real, buffer, amount, offset);
}

static int fault_write(sqlite3_file *f, const void *buffer, int amount, sqlite3_int64 offset) {
    FaultFile *file = (FaultFile *)f;
    if (should_fail(OP_WRITE, file->kind, file->name)) return fault.mode == MODE_FULL ? SQLITE_FULL : SQLITE_IOERR_WRITE;
    int rc = counts_kind(file) ? remember(file, offset, amount) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : file->real->pMethods->xWrite(file->real, buffer, amount, offset);
}

static int fault_truncate(sqlite3_file *f, sqlite3_int64 size) {
    FaultFile *file = (FaultFile *)f;
    if (should_fail(OP_TRUNCATE, file->kind, file->name)) return SQLITE_IOERR_TRUNCATE;
    int rc = counts_kind(file) ? remember(file, size, -1) : SQLITE_OK;
    return rc != SQLITE_OK ? rc : file->real->pMethods->xTruncate(file->real, size);
}

static int fault_sync(sqlite3_file *f, int flags) {
    FaultFile *file = (FaultFile *)f;
    if (should_fail(OP_SYNC, file->kind, file->name)) return SQLITE_IOERR_FSYNC;
    int rc = file->real->pMethods->xSync(file->real, flags);
    if (rc == SQLITE_OK) {
        pthread_mutex_lock(&fault.mutex);
        synced(file->name);
        pthread_mutex_unlock(&fault.mutex);
    }
    return rc;
}

static int fault_file_size(sqlite3_file *f, sqlite3_int64 *size) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xFileSize(p->real, size); }
static int fault_lock(sqlite3_file *f, int level) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xLock(p->real, level); }
static int fault_unlock(sqlite3_file *f, int level) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xUnlock(p->real, level); }
static int fault_check_reserved(sqlite3_file *f, int *out) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xCheckReservedLock(p->real, out); }
static int fault_file_control(sqlite3_file *f, int op, void *arg) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xFileControl(p->real, op, arg); }
static int fault_sector_size(sqlite3_file *f) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xSectorSize(p->real); }
static int fault_device(sqlite3_file *f) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xDeviceCharacteristics(p->real); }
static int fault_shm_map(sqlite3_file *f, int region, int size, int extend, void volatile **out) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xShmMap(p->real, region, size, extend, out); }
static int fault_shm_lock(sqlite3_file *f, int offset, int n, int flags) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xShmLock(p->real, offset, n, flags); }
static void fault_shm_barrier(sqlite3_file *f) { FaultFile *p = (FaultFile *)f; p->real->pMethods->xShmBarrier(p->real); }
static int fault_shm_unmap(sqlite3_file *f, int remove) { FaultFile *p = (FaultFile *)f; return p->real->pMethods->xShmUnmap(p->real, remove); }
/* No memory-mapped reads: every read goes through xRead, where faults are injected. */
static int fault_fetch(sqlite3_file *f, sqlite3_int64 offset, int amount, void **out) { (void)f; (void)offset; (void)amount; *out = 0; return SQLITE_OK; }
static int fault_unfetch(sqlite3_file *f, sqlite3_int64 offset, void *page) { (void)f; (void)offset; (void)page; return SQLITE_OK; }

static const sqlite3_io_methods fault_methods = {
    3, fault_close, fault_read, fault_write, fault_truncate, fault_sync, fault_file_size,
    fault_lock, fault_unlock, fault_check_reserved, fault_file_control, fault_sector_size,
    fault_device, fault_shm_map, fault_shm_lock, fault_shm_barrier, fault_shm_unmap,
    fault_fetch, fault_unfetch,
};

static int fault_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out_flags) {
    (void)vfs;
    FaultFile *file = (FaultFile *)f;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)&file[1];
    file->name = name;
    file->synced_size = -1;
    file->kind = !name ? KIND_TEMP
        : (flags & SQLITE_OPEN_MAIN_DB) ? KIND_MAIN
        : (flags & SQLITE_OPEN_WAL) ? KIND_WAL
        : (flags & SQLITE_OPEN_MAIN_JOURNAL) ? KIND_JOURNAL : KIND_TEMP;
    if (should_fail(OP_OPEN, file->kind, name)) return SQLITE_CANTOPEN;
    int rc = real_vfs->xOpen(real_vfs, name, file->real, flags, out_flags);
    if (rc != SQLITE_OK || !file->real->pMethods) return rc;
    file->base.pMethods = &fault_methods;
    pthread_mutex_lock(&fault.mutex);
    file->next_open = open_files;
    open_files = file;
    pthread_mutex_unlock(&fault.mutex);
    return SQLITE_OK;
}

/* A deleted file has nothing to put back (a power cut could bring it back; not modelled). */
static int fault_delete(sqlite3_vfs *v, const char *name, int sync) {
    (void)v;
    pthread_mutex_lock(&fault.mutex);
    synced(name);
    pthread_mutex_unlock(&fault.mutex);
    return real_vfs->xDelete(real_vfs, name, sync);
}
static int fault_access(sqlite3_vfs *v, const char *name, int flags, int *out) { (void)v; return real_vfs->xAccess(real_vfs, name, flags, out); }
static int fault_full_path(sqlite3_vfs *v, const char *name, int n, char *out) { (void)v; return real_vfs->xFullPathname(real_vfs, name, n, out); }
static void *fault_dl_open(sqlite3_vfs *v, const char *name) { (void)v; return real_vfs->xDlOpen(real_vfs, name); }
static void fault_dl_error(sqlite3_vfs *v, int n, char *out) { (void)v; real_vfs->xDlError(real_vfs, n, out); }
static void (*fault_dl_sym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return real_vfs->xDlSym(real_vfs, h, s); }
static void fault_dl_close(sqlite3_vfs *v, void *h) { (void)v; real_vfs->xDlClose(real_vfs, h); }
static int fault_randomness(sqlite3_vfs *v, int n, char *out) { (void)v; return real_vfs->xRandomness(real_vfs, n, out); }
static int fault_sleep(sqlite3_vfs *v, int micro) { (void)v; return real_vfs->xSleep(real_vfs, micro); }
static int fault_current_time(sqlite3_vfs *v, double *out) { (void)v; return real_vfs->xCurrentTime(real_vfs, out); }
static int fault_last_error(sqlite3_vfs *v, int n, char *out) { (void)v; return real_vfs->xGetLastError(real_vfs, n, out); }
static int fault_current_time64(sqlite3_vfs *v, sqlite3_int64 *out) { (void)v; return real_vfs->xCurrentTimeInt64(real_vfs, out); }

static sqlite3_vfs fault_vfs = {
    .iVersion = 2, .mxPathname = 1024, .zName = "tern-fault",
    .xOpen = fault_open, .xDelete = fault_delete, .xAccess = fault_access, .xFullPathname = fault_full_path,
    .xDlOpen = fault_dl_open, .xDlError = fault_dl_error, .xDlSym = fault_dl_sym, .xDlClose = fault_dl_close,
    .xRandomness = fault_randomness, .xSleep = fault_sleep, .xCurrentTime = fault_current_time,
    .xGetLastError = fault_last_error, .xCurrentTimeInt64 = fault_current_time64,
};

/* ---- Directory changes since each directory's last fsync ---------------------------------- */

enum { CHANGE_RENAME, CHANGE_LINK, CHANGE_UNLINK };

typedef struct Change {
    int type;
    char *from, *to;   /* rename: from → to; link: the new name `to`; unlink: the name `from` */
    char *kept;        /* a hidden hard link to what `to` replaced (rename) or `from` was (unlink) */
    struct Change *previous;
} Change;

static Change *changes;  /* newest first */
static unsigned long kept_count;
static int (*real_rename)(const char *, const char *);
static int (*real_link)(const char *, const char *);
static int (*real_unlink)(const char *);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static int modelled(const char *path) {
    if (!fault.enabled || (fault.mode != MODE_POWERLOSS && fault.mode != MODE_TEAR) || !path) return 0;
    size_t length = strlen(path);
    static const char *const sqlites[] = { "-journal", "-wal", "-shm" };
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(sqlites[i]);
        if (length >= n && strcmp(path + length - n, sqlites[i]) == 0) return 0;
    }
    return 1;
}

/* The directory of `path`, resolved, in `out` (PATH_MAX). */
static int directory_of(const char *path, char *out) {
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    return realpath(dirname(copy), out) ? 0 : -1;
}

/* Keeps `path`'s file under a hidden hard link beside it; NULL when there is none. */
static char *keep(const char *path) {
    struct stat status;
    if (lstat(path, &status) != 0 || !S_ISREG(status.st_mode)) return NULL;
    char *kept = malloc(strlen(path) + 48);
    if (!kept) return NULL;
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path);
    char *slash = strrchr(copy, '/');
    if (slash) { *slash = 0; sprintf(kept, "%s/.tern-fault-kept-%d-%lu", copy, (int)getpid(), ++kept_count); }
    else sprintf(kept, ".tern-fault-kept-%d-%lu", (int)getpid(), ++kept_count);
    if (real_link(path, kept) != 0) { free(kept); return NULL; }
    return kept;
}

static void record(int type, const char *from, const char *to, char *kept) {
    Change *change = calloc(1, sizeof *change);
    if (!change) return;
    change->type = type;
    change->from = from ? strdup(from) : NULL;
    change->to = to ? strdup(to) : NULL;
    change->kept = kept;
    change->previous = changes;
    changes = change;
}

static void drop(Change *change) {
    if (change->kept) real_unlink(change->kept);
    free(change->from); free(change->to); free(change->kept); free(change);
}

/* An fsync of a directory makes every change of a name in it durable. */
static void directory_synced(int descriptor) {
    struct stat status;
    if (fstat(descriptor, &status) != 0 || !S_ISDIR(status.st_mode)) return;
    char link_path[64], directory[4096];
    snprintf(link_path, sizeof link_path, "/proc/self/fd/%d", descriptor);
    ssize_t length = readlink(link_path, directory, sizeof directory - 1);
    if (length < 0) return;
    directory[length] = 0;
    pthread_mutex_lock(&fault.mutex);
    for (Change **link = &changes; *link;) {
        Change *change = *link;
        char of_from[4096] = "", of_to[4096] = "";
        int durable = (!change->from || (directory_of(change->from, of_from) == 0 && strcmp(of_from, directory) == 0))
                   && (!change->to || (directory_of(change->to, of_to) == 0 && strcmp(of_to, directory) == 0));
        if (durable) { *link = change->previous; drop(change); } else link = &change->previous;
    }
    pthread_mutex_unlock(&fault.mutex);
}

int rename(const char *from, const char *to) {
    if (!modelled(to)) return real_rename(from, to);
    pthread_mutex_lock(&fault.mutex);
    char *kept = keep(to);
    int rc = real_rename(from, to);
    if (rc == 0) record(CHANGE_RENAME, from, to, kept);
    else if (kept) { int saved = errno; real_unlink(kept); free(kept); errno = saved; }
    pthread_mutex_unlock(&fault.mutex);
    return rc;
}

int link(const char *from, const char *to) {
    int rc = real_link(from, to);
    if (rc == 0 && modelled(to)) {
        pthread_mutex_lock(&fault.mutex);
        record(CHANGE_LINK, NULL, to, NULL);
        pthread_mutex_unlock(&fault.mutex);
    }
    return rc;
}

int unlink(const char *path) {
    if (!modelled(path)) return real_unlink(path);
    pthread_mutex_lock(&fault.mutex);
    char *kept = keep(path);
    int rc = real_unlink(path);
    if (rc == 0) record(CHANGE_UNLINK, path, NULL, kept);
    else if (kept) { int saved = errno; real_unlink(kept); free(kept); errno = saved; }
    pthread_mutex_unlock(&fault.mutex);
    return rc;
}

int fsync(int descriptor) {
    int rc = real_fsync(descriptor);
    if (rc == 0 && changes) directory_synced(descriptor);
    return rc;
}

int fdatasync(int descriptor) {
    int rc = real_fdatasync(descriptor);
    if (rc == 0 && changes) directory_synced(descriptor);
    return rc;
}

/* The power goes: every change not yet made durable is undone, newest first. */
static void undo_directory_changes(void) {
    for (Change *change = changes; change; change = change->previous) {
        switch (change->type) {
        case CHANGE_RENAME:
            real_rename(change->to, change->from);
            if (change->kept) real_rename(change->kept, change->to);
            break;
        case CHANGE_LINK:
            real_unlink(change->to);
            break;
        case CHANGE_UNLINK:
            if (change->kept) real_rename(change->kept, change->from);
            break;
        }
        free(change->kept);
        change->kept = NULL;
    }
    changes = NULL;
}

/* At a normal exit nothing is lost: the hidden links go. With OP exit, the power goes now. */
static void at_exit(void) {
    if (fault.enabled && fault.op == OP_EXIT) {
        fprintf(stderr, "tern-fault: power cut at exit (%s)\n", mode_names[fault.mode]);
        pthread_mutex_lock(&fault.mutex);
        power_cut();  /* does not return */
    }
    pthread_mutex_lock(&fault.mutex);
    while (changes) { Change *change = changes; changes = change->previous; drop(change); }
    pthread_mutex_unlock(&fault.mutex);
}

static void write_counts(void) {
    if (!fault.counts_file) return;
    FILE *out = fopen(fault.counts_file, "a");
    if (!out) return;
    pthread_mutex_lock(&fault.mutex);
    fprintf(out, "read=%lld write=%lld sync=%lld truncate=%lld open=%lld\n", fault.counts[OP_READ], fault.counts[OP_WRITE],
            fault.counts[OP_SYNC], fault.counts[OP_TRUNCATE], fault.counts[OP_OPEN]);
    pthread_mutex_unlock(&fault.mutex);
    fclose(out);
}

static int index_of(const char *word, const char *const *names, int count) {
    for (int i = 0; i < count; i++) if (strcmp(word, names[i]) == 0) return i;
    return -1;
}

/* Reads TERN_FAULT; a malformed one stops the process (a sweep must never run without its fault). */
static void configure(void) {
    fault.kind = KIND_ANY;
    fault.counts_file = getenv("TERN_FAULT_COUNTS");
    fault.trace = getenv("TERN_FAULT_TRACE") != NULL;
    const char *spec = getenv("TERN_FAULT");
    if (!spec || !*spec) return;
    char op[16] = "", mode[16] = "", kind[16] = "any";
    long long n = 0;
    static const char *const kinds[] = { "temp", "main", "wal", "journal", "any" };
    if (sscanf(spec, "%15[a-z]:%lld:%15[a-z]:%15[a-z]", op, &n, mode, kind) < 3
        || (fault.op = index_of(op, op_names, OP_COUNT + 1)) < 0
        || (fault.mode = index_of(mode, mode_names, 5)) < 0
        || (fault.kind = index_of(kind, kinds, 5)) <= 0 || n < 1
        || (fault.mode == MODE_FULL && fault.op != OP_WRITE)
        || (fault.op == OP_EXIT && (n != 1 || (fault.mode != MODE_POWERLOSS && fault.mode != MODE_TEAR)))) {
        fprintf(stderr, "tern-fault: TERN_FAULT=%s is not OP:N:MODE[:KIND]\n", spec);
        _exit(2);
    }
    fault.n = n;
    fault.enabled = 1;
}

__attribute__((constructor)) static void register_fault_vfs(void) {
    real_rename = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    real_link = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "link");
    real_unlink = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    if (!real_rename || !real_link || !real_unlink || !real_fsync || !real_fdatasync) { fprintf(stderr, "tern-fault: no libc\n"); _exit(2); }
    configure();
    real_vfs = sqlite3_vfs_find("unix");
    if (!real_vfs) { fprintf(stderr, "tern-fault: no unix VFS\n"); _exit(2); }
    fault_vfs.szOsFile = (int)sizeof(FaultFile) + real_vfs->szOsFile;
    fault_vfs.mxPathname = real_vfs->mxPathname;
    if (sqlite3_vfs_register(&fault_vfs, 1) != SQLITE_OK) { fprintf(stderr, "tern-fault: cannot register\n"); _exit(2); }
    atexit(write_counts);
    atexit(at_exit);  /* runs first: atexit handlers run newest first */
}
