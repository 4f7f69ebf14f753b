/* SPDX-License-Identifier: MIT */
/*
 * tempname.c - temporary names that carry their owner, and the clean-up of
 * those a killed run left.
 *
 * Outputs are written under temporary names and renamed when complete, and
 * tempfiles.c removes the temporaries when a run is interrupted by a signal
 * it can catch. A SIGKILL (the OOM killer, a scheduler's hard limit) leaves
 * them behind: a 129 MB half-loaded DB in the cache, say. So every
 * temporary name says who made it, `NAME.tmp-<pid>@<host>-XXXXXX`, and
 * before a run makes a temporary in a folder it removes the ones there
 * whose process no longer runs on this host. The host is part of the name
 * because folders are shared between machines: a pid means nothing on
 * another host, and another host's temporaries are never touched.
 */
#define _XOPEN_SOURCE 700
#include "util/tempname.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracebook/error.h"

/* This host's name, made safe for a file name ('/' and '@' and '-' would break the pattern). */
static void host_name(char *out, size_t n)
{
    if (gethostname(out, n) != 0 || !out[0])
        snprintf(out, n, "localhost");
    out[n - 1] = 0;
    for (char *p = out; *p; p++)
        if (*p == '/' || *p == '@' || *p == '-' || *p == ' ')
            *p = '_';
}

int tempname_make(char *tmpl, int dir, int *registered)
{
    sigset_t hold, was;
    sigemptyset(&hold);
    sigaddset(&hold, SIGINT);
    sigaddset(&hold, SIGTERM);
    sigaddset(&hold, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &hold, &was);
    int fd = dir ? (mkdtemp(tmpl) ? 0 : -1) : mkstemp(tmpl);
    int e = errno, reg = fd >= 0 && tb_temp_register(tmpl) == 0;
    pthread_sigmask(SIG_SETMASK, &was, NULL);
    if (registered)
        *registered = reg;
    errno = e;
    return fd;
}

int tempname_template(char *out, size_t n, const char *path)
{
    char host[64];
    host_name(host, sizeof host);
    int w = snprintf(out, n, "%s.tmp-%ld@%s-XXXXXX", path, (long)getpid(), host);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* The pid of name when it is a temporary of this host (`*.tmp-<pid>@<host>-XXXXXX`), else 0. */
static long owner_pid(const char *name, const char *host)
{
    const char *t = NULL;
    for (const char *p = strstr(name, ".tmp-"); p; p = strstr(p + 1, ".tmp-"))
        t = p;
    if (!t)
        return 0;
    t += 5;
    char *end;
    errno = 0;
    long pid = strtol(t, &end, 10);
    if (errno || end == t || *end != '@' || pid <= 0)
        return 0;
    size_t hl = strlen(host);
    if (strncmp(end + 1, host, hl) != 0 || end[1 + hl] != '-' || strlen(end + 2 + hl) != 6)
        return 0;
    return pid;
}

/* Removes a directory a temporary name made, with the files in it (one level: that is all they hold). */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
                continue;
            char p[PATH_MAX];
            if (snprintf(p, sizeof p, "%s/%s", path, de->d_name) < (int)sizeof p)
                unlink(p);
        }
        closedir(d);
    }
    rmdir(path);
}

static pthread_mutex_t swept_mu = PTHREAD_MUTEX_INITIALIZER;
static char **swept;
static size_t n_swept;

/* 1 the first time dir is asked about in this process. */
static int first_time(const char *dir)
{
    char real[PATH_MAX];
    const char *key = realpath(dir, real) ? real : dir;
    int first = 1;
    pthread_mutex_lock(&swept_mu);
    for (size_t i = 0; i < n_swept && first; i++)
        first = strcmp(swept[i], key) != 0;
    if (first && n_swept < 4096) {
        char **nv = realloc(swept, (n_swept + 1) * sizeof *nv);
        if (nv) {
            swept = nv;
            if ((swept[n_swept] = strdup(key)) != NULL)
                n_swept++;
        }
    }
    pthread_mutex_unlock(&swept_mu);
    return first;
}

void tempname_sweep(const char *dir)
{
    if (!first_time(dir))
        return;
    char host[64];
    host_name(host, sizeof host);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        long pid = owner_pid(de->d_name, host);
        if (pid <= 0 || pid == (long)getpid())
            continue;
        /* only a process that is gone: one that runs (or that we may not signal) keeps its files */
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        char p[PATH_MAX];
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p)
            continue;
        struct stat st;
        if (lstat(p, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            remove_tree(p);
        else if (S_ISREG(st.st_mode))
            unlink(p);
    }
    closedir(d);
}

void tempname_sweep_beside(const char *path)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        return;
    tempname_sweep(dir);
}

int tb_temp_folder(const char *path, char *out, size_t n)
{
    tempname_sweep_beside(path);
    if (tempname_template(out, n, path) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return tempname_make(out, 1, NULL) == 0 ? 0 : -1;
}
