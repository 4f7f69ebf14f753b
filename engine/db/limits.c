/* SPDX-License-Identifier: MIT */
/*
 * limits.c - what SQLite may take of the machine: its heap and its
 * temporary files (the CPU time of a report is bounded in query/watchdog.c).
 *
 * The heap limit is SQLite's own hard heap limit: past it every allocation
 * fails with SQLITE_NOMEM, the aggregates of sqlfuncs.c included (they
 * allocate through SQLite). Temporary files (sorts, TEMP tables, statement
 * journals) are counted by a VFS that wraps the default one and is made the
 * default in its place: every file opened through it is passed on, and the
 * bytes of the temporary ones (the highest byte written, less what a
 * truncate gives back, until closed) are summed; a write that would take
 * the sum past the limit fails with SQLITE_FULL, and limits_explain() then
 * names the limit instead of SQLite's "database or disk is full".
 *
 * Both are process-wide. tb_limits_set() installs them once; db_open()
 * installs the defaults when nobody did.
 */
#define _POSIX_C_SOURCE 200809L
#include "db/limits.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tracebook/db.h"

#define MIB (1024.0 * 1024.0)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int installed;    /* the VFS is registered, the heap limit set */
static tb_limits cur;           /* in force, defaults resolved but cpu_seconds (0: default) */
static sqlite3_vfs *real;       /* the VFS wrapped */
static sqlite3_vfs shim;
static atomic_llong temp_used;  /* bytes of the open temporary files */
static atomic_llong temp_max;   /* the limit */
static atomic_int temp_hit;     /* a write was refused since limits_clear_hits */
static atomic_int temp_full;    /* the disk refused a temporary file's write (full) since then */
static int temp_set;            /* the temporary-file limit is the user's (else half the free space) */
static char temp_dir[4096];     /* where SQLite puts its temporary files (set with the limits) */

/* --- the counting VFS ------------------------------------------------------- */

typedef struct tfile {
    sqlite3_file base;
    sqlite3_file *sub;  /* the wrapped VFS's file: the bytes after this struct */
    int temp;           /* counted */
    long long size;     /* bytes counted for it */
} tfile;

#define SUB(f) (((tfile *)(f))->sub)

/* Counts the file's new size; 0 when that would pass the limit. */
static int grow(tfile *t, long long end)
{
    if (!t->temp || end <= t->size)
        return 1;
    long long add = end - t->size;
    long long now = atomic_fetch_add(&temp_used, add) + add;
    if (now > atomic_load(&temp_max)) {
        atomic_fetch_sub(&temp_used, add);
        atomic_store(&temp_hit, 1);
        return 0;
    }
    t->size = end;
    return 1;
}

static int t_close(sqlite3_file *f)
{
    tfile *t = (tfile *)f;
    int rc = t->sub->pMethods ? t->sub->pMethods->xClose(t->sub) : SQLITE_OK;
    if (t->temp)
        atomic_fetch_sub(&temp_used, t->size);
    t->size = 0;
    return rc;
}
static int t_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) { return SUB(f)->pMethods->xRead(SUB(f), b, n, o); }
static int t_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o)
{
    if (!grow((tfile *)f, o + n))
        return SQLITE_FULL;
    int rc = SUB(f)->pMethods->xWrite(SUB(f), b, n, o);
    if ((rc & 0xff) == SQLITE_FULL && ((tfile *)f)->temp)
        atomic_store(&temp_full, 1);
    return rc;
}
static int t_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    tfile *t = (tfile *)f;
    int rc = SUB(f)->pMethods->xTruncate(SUB(f), size);
    if (rc == SQLITE_OK && t->temp && size < t->size) {
        atomic_fetch_sub(&temp_used, t->size - size);
        t->size = size;
    }
    return rc;
}
static int t_sync(sqlite3_file *f, int fl) { return SUB(f)->pMethods->xSync(SUB(f), fl); }
static int t_size(sqlite3_file *f, sqlite3_int64 *s) { return SUB(f)->pMethods->xFileSize(SUB(f), s); }
static int t_lock(sqlite3_file *f, int l) { return SUB(f)->pMethods->xLock(SUB(f), l); }
static int t_unlock(sqlite3_file *f, int l) { return SUB(f)->pMethods->xUnlock(SUB(f), l); }
static int t_reserved(sqlite3_file *f, int *r) { return SUB(f)->pMethods->xCheckReservedLock(SUB(f), r); }
static int t_fcntl(sqlite3_file *f, int op, void *a) { return SUB(f)->pMethods->xFileControl(SUB(f), op, a); }
static int t_sector(sqlite3_file *f) { return SUB(f)->pMethods->xSectorSize(SUB(f)); }
static int t_devchar(sqlite3_file *f) { return SUB(f)->pMethods->xDeviceCharacteristics(SUB(f)); }
static int t_shmmap(sqlite3_file *f, int pg, int sz, int ext, void volatile **p)
{
    return SUB(f)->pMethods->xShmMap(SUB(f), pg, sz, ext, p);
}
static int t_shmlock(sqlite3_file *f, int o, int n, int fl) { return SUB(f)->pMethods->xShmLock(SUB(f), o, n, fl); }
static void t_shmbarrier(sqlite3_file *f) { SUB(f)->pMethods->xShmBarrier(SUB(f)); }
static int t_shmunmap(sqlite3_file *f, int del) { return SUB(f)->pMethods->xShmUnmap(SUB(f), del); }
static int t_fetch(sqlite3_file *f, sqlite3_int64 o, int n, void **p) { return SUB(f)->pMethods->xFetch(SUB(f), o, n, p); }
static int t_unfetch(sqlite3_file *f, sqlite3_int64 o, void *p) { return SUB(f)->pMethods->xUnfetch(SUB(f), o, p); }

static const sqlite3_io_methods t_methods = {
    3, t_close, t_read, t_write, t_truncate, t_sync, t_size, t_lock, t_unlock, t_reserved, t_fcntl, t_sector,
    t_devchar, t_shmmap, t_shmlock, t_shmbarrier, t_shmunmap, t_fetch, t_unfetch,
};
/* the same without shared memory or memory mapping, for a file whose VFS has neither */
static const sqlite3_io_methods t_methods1 = {
    1, t_close, t_read, t_write, t_truncate, t_sync, t_size, t_lock, t_unlock, t_reserved, t_fcntl, t_sector,
    t_devchar, NULL, NULL, NULL, NULL, NULL, NULL,
};

static int t_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
    (void)vfs;
    tfile *t = (tfile *)f;
    t->sub = (sqlite3_file *)(t + 1);
    t->size = 0;
    t->temp = !name || (flags & (SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_TRANSIENT_DB |
                                 SQLITE_OPEN_SUBJOURNAL | SQLITE_OPEN_DELETEONCLOSE)) != 0;
    memset(t->sub, 0, (size_t)real->szOsFile);
    int rc = real->xOpen(real, name, t->sub, flags, out);
    /* SQLite calls xClose even after a failed open when pMethods is set */
    f->pMethods = t->sub->pMethods ? (t->sub->pMethods->iVersion >= 3 ? &t_methods : &t_methods1) : NULL;
    return rc;
}

static int t_delete(sqlite3_vfs *v, const char *n, int s) { (void)v; return real->xDelete(real, n, s); }
static int t_access(sqlite3_vfs *v, const char *n, int fl, int *r) { (void)v; return real->xAccess(real, n, fl, r); }
static int t_full(sqlite3_vfs *v, const char *n, int sz, char *o) { (void)v; return real->xFullPathname(real, n, sz, o); }
static void *t_dlopen(sqlite3_vfs *v, const char *n) { (void)v; return real->xDlOpen(real, n); }
static void t_dlerror(sqlite3_vfs *v, int n, char *m) { (void)v; real->xDlError(real, n, m); }
static void (*t_dlsym(sqlite3_vfs *v, void *h, const char *s))(void) { (void)v; return real->xDlSym(real, h, s); }
static void t_dlclose(sqlite3_vfs *v, void *h) { (void)v; real->xDlClose(real, h); }
static int t_random(sqlite3_vfs *v, int n, char *o) { (void)v; return real->xRandomness(real, n, o); }
static int t_sleep(sqlite3_vfs *v, int us) { (void)v; return real->xSleep(real, us); }
static int t_time(sqlite3_vfs *v, double *o) { (void)v; return real->xCurrentTime(real, o); }
static int t_lasterr(sqlite3_vfs *v, int n, char *o)
{
    (void)v;
    return real->xGetLastError ? real->xGetLastError(real, n, o) : 0;
}
static int t_time64(sqlite3_vfs *v, sqlite3_int64 *o) { (void)v; return real->xCurrentTimeInt64(real, o); }
static int t_setcall(sqlite3_vfs *v, const char *n, sqlite3_syscall_ptr p) { (void)v; return real->xSetSystemCall(real, n, p); }
static sqlite3_syscall_ptr t_getcall(sqlite3_vfs *v, const char *n) { (void)v; return real->xGetSystemCall(real, n); }
static const char *t_nextcall(sqlite3_vfs *v, const char *n) { (void)v; return real->xNextSystemCall(real, n); }

static int install_vfs(void)
{
    real = sqlite3_vfs_find(NULL);
    if (!real)
        return SQLITE_ERROR;
    shim = (sqlite3_vfs){
        .iVersion = real->iVersion < 3 ? real->iVersion : 3,
        .szOsFile = (int)sizeof(tfile) + real->szOsFile,
        .mxPathname = real->mxPathname,
        .zName = "tracebook-counted",
        .xOpen = t_open, .xDelete = t_delete, .xAccess = t_access, .xFullPathname = t_full,
        .xDlOpen = t_dlopen, .xDlError = t_dlerror, .xDlSym = t_dlsym, .xDlClose = t_dlclose,
        .xRandomness = t_random, .xSleep = t_sleep, .xCurrentTime = t_time, .xGetLastError = t_lasterr,
        .xCurrentTimeInt64 = real->iVersion >= 2 ? t_time64 : NULL,
        .xSetSystemCall = real->iVersion >= 3 ? t_setcall : NULL,
        .xGetSystemCall = real->iVersion >= 3 ? t_getcall : NULL,
        .xNextSystemCall = real->iVersion >= 3 ? t_nextcall : NULL,
    };
    return sqlite3_vfs_register(&shim, 1);
}

/* --- defaults ----------------------------------------------------------------- */

static int64_t half_the_ram(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0)
        return (int64_t)4 << 30;
    return (int64_t)pages * size / 2;
}

/* Half the free space of the folder SQLite puts its temporary files in
 * (the first of these that is a folder, as SQLite's unix VFS looks). */
static int64_t half_the_temp_space(void)
{
    const char *dirs[] = {getenv("SQLITE_TMPDIR"), getenv("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp", "."};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        struct stat sb;
        struct statvfs vb;
        if (!dirs[i] || stat(dirs[i], &sb) || !S_ISDIR(sb.st_mode) || access(dirs[i], W_OK | X_OK))
            continue;
        snprintf(temp_dir, sizeof temp_dir, "%s", dirs[i]);
        if (statvfs(dirs[i], &vb) == 0)
            return (int64_t)((double)vb.f_bavail * (double)vb.f_frsize / 2);
    }
    return (int64_t)1 << 30;
}

static void apply(const tb_limits *l)
{
    cur.cpu_seconds = l && l->cpu_seconds > 0 ? l->cpu_seconds : 0;
    cur.memory_bytes = l && l->memory_bytes > 0 ? l->memory_bytes : half_the_ram();
    int64_t half = half_the_temp_space(); /* finds the folder too */
    temp_set = l && l->temp_bytes > 0;
    cur.temp_bytes = temp_set ? l->temp_bytes : half;
    sqlite3_hard_heap_limit64(cur.memory_bytes);
    atomic_store(&temp_max, cur.temp_bytes);
}

/* A size: digits, then K, M, G or T (powers of 1024) or nothing (bytes). */
static int read_size(const char *s, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    double x = strtod(s, &end);
    if (errno || end == s || !(x > 0))
        return -1;
    static const char units[] = "KMGT";
    const char *u = *end ? strchr(units, *end) : NULL;
    if (*end && (!u || end[1]))
        return -1;
    if (u)
        for (const char *p = units; p <= u; p++)
            x *= 1024;
    if (x < 1 || x > 9.0e18)
        return -1;
    *out = (int64_t)x;
    return 0;
}

int tb_limits_read(tb_limits *l, tb_limit_kind which, const char *text)
{
    if (which == TB_LIMIT_MEMORY)
        return read_size(text, &l->memory_bytes);
    if (which == TB_LIMIT_TEMP)
        return read_size(text, &l->temp_bytes);
    char *end = NULL;
    errno = 0;
    double x = strtod(text, &end);
    if (errno || end == text || *end || !(x > 0) || x > 1e9)
        return -1;
    l->cpu_seconds = x;
    return 0;
}

tb_status tb_limits_set(const tb_limits *l, tb_error *err)
{
    if (l && (!isfinite(l->cpu_seconds) || l->cpu_seconds < 0 || l->memory_bytes < 0 || l->temp_bytes < 0))
        return tb_error_set(err, TB_ERR_USAGE, "a limit must be a positive number");
    pthread_mutex_lock(&lock);
    int rc = SQLITE_OK;
    if (!installed && (rc = install_vfs()) == SQLITE_OK)
        installed = 1;
    if (rc == SQLITE_OK)
        apply(l);
    pthread_mutex_unlock(&lock);
    if (rc != SQLITE_OK)
        return tb_error_set(err, TB_ERR_DB, "cannot install the temporary-file limit: %s", sqlite3_errstr(rc));
    return TB_OK;
}

void limits_ensure(void)
{
    pthread_mutex_lock(&lock);
    if (!installed && install_vfs() == SQLITE_OK) {
        installed = 1;
        apply(NULL);
    }
    pthread_mutex_unlock(&lock);
}

void tb_limits_get(tb_limits *out)
{
    limits_ensure();
    pthread_mutex_lock(&lock);
    *out = cur;
    if (out->cpu_seconds <= 0)
        out->cpu_seconds = TB_DEFAULT_CPU_SECONDS;
    pthread_mutex_unlock(&lock);
}

double limits_cpu_seconds(int64_t db_bytes)
{
    limits_ensure();
    pthread_mutex_lock(&lock);
    double s = cur.cpu_seconds;
    pthread_mutex_unlock(&lock);
    if (s > 0)
        return s;
    return TB_DEFAULT_CPU_SECONDS + (db_bytes > 0 ? (double)db_bytes / (4 * MIB) : 0);
}

void limits_clear_hits(void)
{
    atomic_store(&temp_hit, 0);
    atomic_store(&temp_full, 0);
}

int limits_explain(int rc, char *buf, size_t n)
{
    const char *dir = temp_dir[0] ? temp_dir : "the temporary folder";
    if ((rc & 0xff) == SQLITE_FULL && atomic_load(&temp_hit) && temp_set) {
        snprintf(buf, n, "SQLite's temporary files reached their limit of %.0f MiB (--max-temp)",
                 (double)atomic_load(&temp_max) / MIB);
        return LIMIT_HIT;
    }
    /* the default limit is the room there is: past it, the folder is as good as full */
    if ((rc & 0xff) == SQLITE_FULL && atomic_load(&temp_hit)) {
        snprintf(buf, n, "%s: no room for SQLite's temporary files: they may take half the free space there "
                 "(%.0f MiB when the run started; set TMPDIR or SQLITE_TMPDIR to a folder with room, or --max-temp)",
                 dir, (double)atomic_load(&temp_max) / MIB);
        return LIMIT_DISK_FULL;
    }
    if ((rc & 0xff) == SQLITE_FULL && atomic_load(&temp_full)) {
        snprintf(buf, n, "%s: no space left for SQLite's temporary files (set TMPDIR or SQLITE_TMPDIR to a "
                 "folder with room)", dir);
        return LIMIT_DISK_FULL;
    }
    if ((rc & 0xff) == SQLITE_NOMEM && installed) {
        snprintf(buf, n, "out of memory: SQLite's heap reached its limit of %.0f MiB (--max-memory)",
                 (double)sqlite3_hard_heap_limit64(-1) / MIB);
        return LIMIT_HIT;
    }
    return 0;
}
