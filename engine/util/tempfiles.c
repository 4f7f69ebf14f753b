/* SPDX-License-Identifier: MIT */
/*
 * tempfiles.c - temporary outputs to remove if the process is interrupted.
 *
 * Outputs are written under temporary names and renamed when complete; a
 * Ctrl-C or a job scheduler's SIGTERM in the middle must not leave the
 * temporary file behind. The engine registers each temporary path here, and
 * tb_temp_cleanup() (async-signal-safe: only unlink on a fixed table) lets
 * the command's signal handler remove them. A registered directory is
 * removed after the files (it must be empty by then). Ranks load on
 * several threads, so registering takes a lock; the cleanup takes none (a
 * slot's path is complete before the slot is marked used).
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tracebook/error.h"

#define TB_MAX_TEMPS 256
#define TB_TEMP_PATH 4096

static char temps[TB_MAX_TEMPS][TB_TEMP_PATH];
static volatile sig_atomic_t used[TB_MAX_TEMPS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

int tb_temp_register(const char *path)
{
    if (strlen(path) >= TB_TEMP_PATH)
        return -1;
    int rc = -1;
    pthread_mutex_lock(&mu);
    for (int i = 0; i < TB_MAX_TEMPS; i++) {
        if (!used[i]) {
            memcpy(temps[i], path, strlen(path) + 1);
            atomic_signal_fence(memory_order_seq_cst); /* the path is in place before the slot counts */
            used[i] = 1;
            rc = 0;
            break;
        }
    }
    pthread_mutex_unlock(&mu);
    return rc;
}

void tb_temp_unregister(const char *path)
{
    pthread_mutex_lock(&mu);
    for (int i = 0; i < TB_MAX_TEMPS; i++)
        if (used[i] && strcmp(temps[i], path) == 0)
            used[i] = 0;
    pthread_mutex_unlock(&mu);
}

void tb_temp_cleanup(void)
{
    /* files first, then the (now empty) directories among them */
    for (int i = 0; i < TB_MAX_TEMPS; i++)
        if (used[i])
            unlink(temps[i]);
    for (int i = 0; i < TB_MAX_TEMPS; i++) {
        if (used[i]) {
            rmdir(temps[i]);
            used[i] = 0;
        }
    }
}
