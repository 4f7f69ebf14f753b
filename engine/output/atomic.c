/* SPDX-License-Identifier: MIT */
/*
 * atomic.c - output files that appear whole or not at all.
 *
 * Every output file is written to `FINAL.tmp-<pid>@<host>-XXXXXX` in the
 * final file's own directory (so that rename() never crosses a file
 * system; the name says whose it is, so that a later run removes it when a
 * SIGKILL left it: util/tempname.c) and renamed over
 * FINAL once every byte is known to be written. stdio keeps write errors to
 * itself until a flush, so a full disk shows up at fflush/fclose: those are
 * checked before the rename, and a failure removes the temporary instead.
 * Each temporary is registered with tb_temp_register so that the command's
 * signal handler can remove it if the run is interrupted.
 *
 * A path that is not a place for a file (`-` or /dev/stdout for the standard
 * output, /dev/null, anything under /dev/ or /proc/, a FIFO that a reader
 * has open) is written directly instead: a temporary beside /dev/stdout and
 * a rename over it would replace the device node, and the output is a
 * stream anyway. A FIFO that nobody reads is refused at once (opening it
 * would wait for a reader forever: a FIFO named tracebook_run.json in an
 * output folder would hang the run), and so is any other file that is
 * neither regular nor a device under /dev/ (a socket, a device node
 * elsewhere).
 *
 * The generic helpers of the sinks (sink_written, sink_destroy) live here
 * too: the list of written files is the afile's business.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/output.h"
#include "util/tempname.h"
#include "tracebook/error.h"
#include "tracebook/output.h"

#define AFILE_BUFSIZE (256u * 1024u)

static mode_t file_mode;
static pthread_once_t mode_once = PTHREAD_ONCE_INIT;

/*
 * mkstemp makes 0600 files; an output should get what open(O_CREAT, 0666)
 * would give. The umask can only be read by setting it, so read it once.
 */
static void read_umask(void)
{
    mode_t m = umask(022);
    umask(m);
    file_mode = 0666 & ~m;
}

static void release(afile *af)
{
    free(af->path);
    free(af->tmp);
    free(af->buf);
    memset(af, 0, sizeof *af);
}

/* The descriptor that path names (standard output, error), or -1. */
static int std_fd(const char *path)
{
    if (strcmp(path, "-") == 0 || strcmp(path, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(path, "/dev/stderr") == 0)
        return STDERR_FILENO;
    return -1;
}

/* What path is: 0 a file to replace (or none yet), 1 a stream or device
 * written in place, 2 a FIFO, -1 neither (a socket, a device node outside
 * /dev/): refused. */
static int place_of(const char *path)
{
    if (std_fd(path) >= 0)
        return 1;
    int special = strncmp(path, "/dev/", 5) == 0 || strncmp(path, "/proc/", 6) == 0;
    struct stat st;
    if (stat(path, &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return special;
    if (S_ISFIFO(st.st_mode))
        return 2;
    return special ? 1 : -1;
}

/* Opens a FIFO for writing when a reader has it open; never waits for one. */
static tb_status open_fifo(const char *final_path, afile *af, tb_error *err)
{
    int fd = open(final_path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENXIO)
        return tb_error_at(err, TB_ERR_IO, final_path, 0, 0, -1,
                           "cannot write: a FIFO that nothing reads (refusing to wait for a reader)");
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 || !(af->f = fdopen(fd, "wb"))) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return tb_error_at(err, TB_ERR_IO, final_path, 0, 0, -1, "cannot write: %s", strerror(e));
    }
    af->direct = 1;
    return TB_OK;
}

/* Opens a stream or device for writing in place (no temporary, no rename). */
static tb_status open_direct(const char *final_path, afile *af, tb_error *err)
{
    int sfd = std_fd(final_path);
    if (sfd >= 0) {
        if (sfd == STDOUT_FILENO)
            fflush(stdout); /* what the command printed so far comes first */
        int fd = dup(sfd);
        af->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
        if (!af->f && fd >= 0) {
            int e = errno;
            close(fd);
            errno = e;
        }
    } else {
        af->f = fopen(final_path, "wb");
    }
    if (!af->f)
        return tb_error_at(err, TB_ERR_IO, final_path, 0, 0, -1, "cannot write: %s", strerror(errno));
    af->direct = 1;
    return TB_OK;
}

tb_status afile_open(const char *final_path, afile *af, tb_error *err)
{
    memset(af, 0, sizeof *af);
    int fd = -1;
    size_t n = strlen(final_path);
    af->path = malloc(n + 1);
    af->tmp = malloc(n + 128);
    af->buf = malloc(AFILE_BUFSIZE);
    if (!af->path || !af->tmp || !af->buf) {
        tb_error_at(err, TB_ERR_NOMEM, final_path, 0, 0, -1, "out of memory");
        goto fail;
    }
    memcpy(af->path, final_path, n + 1);
    struct stat st;
    if (stat(final_path, &st) == 0 && S_ISDIR(st.st_mode)) {
        /* the rename would fail, but only after all the work */
        tb_error_at(err, TB_ERR_IO, final_path, 0, 0, -1, "cannot write: %s", strerror(EISDIR));
        free(af->tmp);
        af->tmp = NULL;
        goto fail;
    }
    int place = place_of(final_path);
    if (place < 0) {
        tb_error_at(err, TB_ERR_IO, final_path, 0, 0, -1,
                    "cannot write: neither a regular file nor a FIFO (refusing to write over it)");
        free(af->tmp);
        af->tmp = NULL;
        goto fail;
    }
    if (place > 0) {
        free(af->tmp);
        af->tmp = NULL;
        if ((place == 2 ? open_fifo : open_direct)(final_path, af, err) != TB_OK)
            goto fail;
        goto buffer;
    }
    tempname_sweep_beside(final_path);
    fd = tempname_template(af->tmp, n + 128, final_path) == 0 ? tempname_make(af->tmp, 0, &af->registered)
                                                              : (errno = ENAMETOOLONG, -1);
    if (fd < 0) {
        tb_error_at(err, TB_ERR_IO, final_path, 0, 0, -1, "cannot write: %s", strerror(errno));
        free(af->tmp);
        af->tmp = NULL; /* nothing to remove */
        goto fail;
    }
    /*
     * A full table only costs the clean-up after a signal; failing a large
     * split output for it would be worse.
     */
    pthread_once(&mode_once, read_umask);
    if (fchmod(fd, file_mode) != 0) {
        tb_error_at(err, TB_ERR_IO, final_path, 0, 0, -1, "cannot write: %s", strerror(errno));
        goto fail;
    }
    af->f = fdopen(fd, "wb");
    if (!af->f) {
        tb_error_at(err, TB_ERR_IO, final_path, 0, 0, -1, "cannot write: %s", strerror(errno));
        goto fail;
    }
    fd = -1; /* the FILE owns it */
buffer:
    if (setvbuf(af->f, af->buf, _IOFBF, AFILE_BUFSIZE) != 0) {
        free(af->buf); /* stdio keeps its own buffer */
        af->buf = NULL;
    }
    return TB_OK;

fail:
    if (fd >= 0)
        close(fd);
    afile_abort(af);
    return err ? err->code : TB_ERR_IO;
}

tb_status afile_close(afile *af, tb_error *err)
{
    if (!af->f)
        return TB_OK;
    FILE *f = af->f;
    af->f = NULL;
    int bad = ferror(f), saved = 0;
    if (fflush(f) != 0) {
        bad = 1;
        saved = errno;
    }
    if (fclose(f) != 0) {
        bad = 1;
        if (!saved)
            saved = errno;
    }
    free(af->buf);
    af->buf = NULL;
    if (bad)
        /* a write error kept by stdio since the row that failed: errno is long gone */
        return tb_error_at(err, TB_ERR_IO, af->path, 0, 0, -1, "cannot write: %s",
                           strerror(saved ? saved : EIO));
    return TB_OK;
}

tb_status afile_commit(afile *af, tb_error *err)
{
    if (af->direct) {
        tb_status st = afile_close(af, err);
        release(af);
        return st;
    }
    if (!af->tmp)
        return tb_error_at(err, TB_ERR_INTERNAL, af->path ? af->path : "", 0, 0, -1,
                           "commit of a file that is not open");
    if (afile_close(af, err) != TB_OK) {
        afile_abort(af);
        return err ? err->code : TB_ERR_IO;
    }
    if (rename(af->tmp, af->path) != 0) {
        tb_error_at(err, TB_ERR_IO, af->path, 0, 0, -1, "cannot write: %s", strerror(errno));
        afile_abort(af);
        return err ? err->code : TB_ERR_IO;
    }
    /* unregistered only now: a signal before the rename must still remove the temporary */
    if (af->registered)
        tb_temp_unregister(af->tmp);
    release(af);
    return TB_OK;
}

tb_status afile_retarget(afile *af, const char *final_path, tb_error *err)
{
    size_t n = strlen(final_path);
    char *p = malloc(n + 1);
    if (!p)
        return tb_error_at(err, TB_ERR_NOMEM, final_path, 0, 0, -1, "out of memory");
    memcpy(p, final_path, n + 1);
    free(af->path);
    af->path = p;
    return TB_OK;
}

void afile_abort(afile *af)
{
    if (!af)
        return;
    if (af->f)
        fclose(af->f);
    af->f = NULL;
    if (af->tmp) {
        unlink(af->tmp);
        if (af->registered)
            tb_temp_unregister(af->tmp);
    }
    release(af);
}

int file_copy_to(const char *path, FILE *f)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return FILE_COPY_OPEN;
    char buf[1 << 16];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, f) != n)
            rc = FILE_COPY_WRITE;
    if (!rc && ferror(in))
        rc = FILE_COPY_READ;
    int saved = errno;
    fclose(in);
    errno = saved;
    if (!rc && fflush(f) != 0)
        rc = FILE_COPY_WRITE;
    return rc;
}

tb_status spool_open(spool *sp, const char *stem, const char *file, tb_error *err)
{
    const char *base = getenv("TMPDIR");
    char at[4096];
    snprintf(at, sizeof at, "%.4000s/%s", base && *base ? base : "/tmp", stem);
    tempname_sweep_beside(at);
    if (tempname_template(sp->dir, sizeof sp->dir, at) != 0 || tempname_make(sp->dir, 1, NULL) != 0) {
        tb_status st = tb_error_at(err, TB_ERR_IO, sp->dir, 0, 0, -1, "cannot create a temporary directory: %s",
                                   strerror(errno));
        sp->dir[0] = 0;
        return st;
    }
    snprintf(sp->path, sizeof sp->path, "%s/%s", sp->dir, file);
    /* an interrupted run removes them (the file first, then the directory) */
    tb_temp_register(sp->path);
    return TB_OK;
}

tb_status spool_close(spool *sp, FILE *out, int ok, const char *what, tb_error *err)
{
    tb_status st = TB_OK;
    if (!sp->dir[0])
        return TB_OK;
    int rc = ok ? file_copy_to(sp->path, out) : 0;
    if (rc == FILE_COPY_OPEN)
        st = tb_error_at(err, TB_ERR_IO, sp->path, 0, 0, -1, "cannot read: %s", strerror(errno));
    else if (rc)
        st = tb_error_set(err, TB_ERR_IO, "writing %s: %s", what, strerror(errno));
    unlink(sp->path);
    rmdir(sp->dir);
    tb_temp_unregister(sp->path);
    tb_temp_unregister(sp->dir);
    sp->dir[0] = 0;
    return st;
}
