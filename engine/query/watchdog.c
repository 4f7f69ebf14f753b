/* SPDX-License-Identifier: MIT */
/*
 * watchdog.c - the CPU time limit of a report (watchdog.h).
 *
 * The VM step budget counts opcodes; a single opcode can take long (a
 * function making 100 MB strings, a sort's merge), so steps do not bound
 * time. This timer does: a POSIX timer on CLOCK_PROCESS_CPUTIME_ID whose
 * expiry, on a thread of its own, marks the watched connection and calls
 * sqlite3_interrupt() on it. The mark is kept under a mutex with the
 * connection, so an expiry racing a disarm never touches a connection
 * that is no longer watched.
 */
#define _POSIX_C_SOURCE 200809L
#include "query/watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sqlite3 *watched;
static int fired;
static int have_timer;
static timer_t timer;
static double limit_s;

static void expired(union sigval v)
{
    (void)v;
    pthread_mutex_lock(&lock);
    if (watched) {
        fired = 1;
        sqlite3_interrupt(watched);
    }
    pthread_mutex_unlock(&lock);
}

tb_status watchdog_arm(sqlite3 *db, double seconds, tb_error *err)
{
    pthread_mutex_lock(&lock);
    int rc = 0;
    if (!have_timer) {
        struct sigevent ev;
        memset(&ev, 0, sizeof ev);
        ev.sigev_notify = SIGEV_THREAD;
        ev.sigev_notify_function = expired;
        rc = timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &timer);
        have_timer = rc == 0;
    }
    if (rc == 0) {
        watched = db;
        fired = 0;
        limit_s = seconds;
        struct timespec now;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
        double whole = (double)(time_t)seconds;
        struct itimerspec at = {.it_value = {.tv_sec = now.tv_sec + (time_t)seconds,
                                             .tv_nsec = now.tv_nsec + (long)((seconds - whole) * 1e9)}};
        if (at.it_value.tv_nsec >= 1000000000L) {
            at.it_value.tv_sec++;
            at.it_value.tv_nsec -= 1000000000L;
        }
        rc = timer_settime(timer, TIMER_ABSTIME, &at, NULL);
    }
    int e = errno;
    pthread_mutex_unlock(&lock);
    if (rc)
        return tb_error_set(err, TB_ERR_INTERNAL, "cannot start the CPU time limit: %s", strerror(e));
    return TB_OK;
}

void watchdog_disarm(sqlite3 *db)
{
    pthread_mutex_lock(&lock);
    if (watched == db) {
        struct itimerspec off = {{0, 0}, {0, 0}};
        if (have_timer)
            timer_settime(timer, 0, &off, NULL);
        watched = NULL;
        fired = 0;
    }
    pthread_mutex_unlock(&lock);
}

int watchdog_fired(sqlite3 *db)
{
    pthread_mutex_lock(&lock);
    int f = fired && watched == db;
    pthread_mutex_unlock(&lock);
    return f;
}

double watchdog_seconds(void)
{
    pthread_mutex_lock(&lock);
    double s = limit_s;
    pthread_mutex_unlock(&lock);
    return s;
}
