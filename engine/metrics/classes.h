/* SPDX-License-Identifier: MIT */
/*
 * classes.h - name rules for the classes of device work (metrics.md,
 * "Classes of device work"), shared by the computed tables.
 *
 * A class_rule is a list of name patterns from a spec option (the
 * `metrics:` section, parsed into a metrics_patterns when the spec loads),
 * with built-in defaults when the option is absent: which communication ops
 * are receive ops, which compute-task names are left out of compute, ... The
 * option holds a string or a list of strings; an empty list matches nothing.
 *
 * A pattern is a glob by default: fnmatch(3) without flags, matching the
 * WHOLE name ('*' matches any characters, '/' included; '?', '[...]').
 * With the prefix "re:" it is a POSIX extended regular expression
 * (regcomp REG_EXTENDED | REG_NOSUB) SEARCHED anywhere in the name: anchor
 * it with ^ and $ to match the whole name. "re:^nccl|ncclKernel" and
 * "nccl*" are both valid patterns. A name matches a rule when it matches
 * any of its patterns.
 *
 * Names in the unified DB are string ids (STRING_IDS), so a metric matches
 * every string once (class_rule_ids) and then tests ids in O(log n), rather
 * than matching text for each of a million tasks.
 */
#ifndef TB_METRICS_CLASSES_H
#define TB_METRICS_CLASSES_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "metrics/options.h"
#include "tracebook/error.h"

typedef struct class_rule class_rule;

/*
 * 0 when text is a valid pattern; else -1 with the reason in why (cap
 * bytes): a regular expression that does not compile. The spec loader
 * checks every pattern with it, so that class_rule_create does not fail on
 * a spec that loaded.
 */
int class_pattern_check(const char *text, char *why, size_t cap);

/*
 * The rule of the pattern option p (path names it in errors, e.g.
 * "classes.receive"), or, when p is not set, of defaults (a NULL-terminated
 * list of patterns, may be NULL for "matches nothing"). Returns new in *out
 * (free with class_rule_destroy). A regular expression that does not
 * compile is TB_ERR_USAGE naming the option ("metrics.classes.receive: ...").
 */
tb_status class_rule_create(const metrics_patterns *p, const char *path, const char *const *defaults,
                            class_rule **out, tb_error *err);

/* 1 when name matches one of r's patterns, else 0 (NULL name: 0). */
int class_rule_match(const class_rule *r, const char *name);

/* Frees r; accepts NULL. */
void class_rule_destroy(class_rule *r);

/* A sorted set of string ids (caller memory: zero it, or CLASS_IDS_INIT). */
typedef struct class_ids {
    int64_t *v; /* owned, sorted ascending, no duplicates */
    size_t n;
} class_ids;

#define CLASS_IDS_INIT {NULL, 0}

/*
 * Fills out with the ids of the STRING_IDS rows (read unqualified on db)
 * whose value matches r. out must be empty. SQLite errors are TB_ERR_DB.
 * O(strings x patterns).
 */
tb_status class_rule_ids(const class_rule *r, sqlite3 *db, class_ids *out, tb_error *err);

/* 1 when id is in s, else 0. O(log n). */
int class_ids_has(const class_ids *s, int64_t id);

/* Frees the set and makes it empty; accepts NULL. */
void class_ids_finish(class_ids *s);

#endif
