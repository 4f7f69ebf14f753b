/* SPDX-License-Identifier: MIT */
/*
 * specnode.h - a small positioned document tree for report specs (private to the engine).
 *
 * A spec is YAML or JSON. Both are parsed by libyaml's event parser (JSON is
 * YAML flow syntax) into this tree, so every value keeps the line and column
 * it came from and spec.c can say exactly where a problem is. JSON text is
 * first validated with jansson, so a JSON syntax error reads like a JSON
 * error (jansson's message, line and column), not like a YAML one.
 *
 * Nodes are mappings (ordered key/value pairs, each key with its own
 * position), sequences and scalars. Scalars are typed by the YAML 1.2 core
 * schema: a plain scalar is null (`null`, `Null`, `NULL`, `~`, empty), a
 * bool (`true`/`True`/`TRUE`, `false`/...), an int (decimal with an
 * optional sign, `0o17`, `0x1F`), a real (`1.5`, `.5`, `1e3`, `.inf`,
 * `-.Inf`, `.nan`) or else a string; quoted and block (`|`, `>`) scalars
 * are always strings, as is a plain scalar tagged `!!str` or `!`. `yes`,
 * `no`, `on` and `off` are strings (YAML 1.1 booleans are not honoured).
 *
 * Not supported, each with a clear error at its position: anchors and
 * aliases (`&a`, `*a`; a spec reuses reports through `use:` instead), tags
 * other than `!!str` and `!`, non-scalar mapping keys, more than one
 * document, nesting deeper than 64 levels. Duplicate keys are kept in the
 * tree (specnode_get returns the last, as Python's json does, which msprof
 * reads its files with); specnode_find_dup finds them so that tracebook
 * specs can reject them.
 */
#ifndef TB_REPORT_SPECNODE_H
#define TB_REPORT_SPECNODE_H

#include <stddef.h>
#include <stdint.h>

#include "tracebook/error.h"

typedef enum specnode_kind { SPECNODE_SCALAR, SPECNODE_SEQ, SPECNODE_MAP } specnode_kind;

/* A scalar's resolved type (YAML 1.2 core schema). */
typedef enum specnode_type {
    SPECNODE_NULL,
    SPECNODE_BOOL,
    SPECNODE_INT,
    SPECNODE_REAL,
    SPECNODE_STR
} specnode_type;

/* How a scalar was written (libyaml's scalar style); JSON strings are double-quoted. */
typedef enum specnode_style {
    SPECNODE_PLAIN,
    SPECNODE_SINGLE_QUOTED,
    SPECNODE_DOUBLE_QUOTED,
    SPECNODE_LITERAL,        /* a `|` block */
    SPECNODE_FOLDED          /* a `>` block */
} specnode_style;

typedef struct specnode specnode;

/* One key/value pair of a mapping. */
typedef struct specnode_pair {
    char *key;          /* the key's text, NUL-terminated */
    long line, column;  /* the key's position, 1-based */
    specnode *value;
} specnode_pair;

struct specnode {
    specnode_kind kind;
    long line, column;       /* where the node starts, 1-based */

    /* SPECNODE_SCALAR */
    char *text;              /* the scalar's value, NUL-terminated (may hold NULs: see len) */
    size_t len;
    specnode_type type;
    specnode_style style;
    int64_t i;               /* SPECNODE_INT, and SPECNODE_BOOL (0/1) */
    double d;                /* SPECNODE_REAL */
    long text_line;          /* where the value's text starts: past a tag, after an opening */
    long text_column;        /* quote, or a block scalar's first content line at its indentation */
    /*
     * 1 when the text is the file's text, line k (0-based) of it on line
     * text_line + k, every line from text_column on: a literal block scalar
     * (checked line by line, so an explicit indentation indicator such as
     * `|2` is counted in) or a plain scalar on one line. 0 for every other
     * style, where quoting, escapes or folding change the text.
     */
    int verbatim;

    /* SPECNODE_SEQ: items; SPECNODE_MAP: pairs (in document order) */
    specnode **items;
    specnode_pair *pairs;
    size_t n;
};

/*
 * Parses text (len bytes, an optional UTF-8 BOM first) as JSON when json is
 * set, else as YAML. name is used in error messages. On success *out is new
 * (free with specnode_free), or NULL when the text holds no document (blank
 * or only comments). Returns TB_OK, TB_ERR_PARSE (err says where and why)
 * or TB_ERR_NOMEM.
 */
tb_status specnode_parse(const char *name, const char *text, size_t len, int json, specnode **out,
                         tb_error *err);

/* Frees a tree (NULL is fine). */
void specnode_free(specnode *n);

/* Returns the last pair of map with key key, or NULL (also when map is not a mapping). Borrowed. */
const specnode_pair *specnode_get(const specnode *map, const char *key);

/*
 * Finds the first duplicate key anywhere under n (depth-first, document
 * order). Returns 1 and sets *dup (the repeated key) and *first (its first
 * occurrence), both borrowed; 0 when keys are unique.
 */
int specnode_find_dup(const specnode *n, const specnode_pair **dup, const specnode_pair **first);

/*
 * Describes n for "expected X, got Y" messages: "a mapping", "a list",
 * "an empty value", or the scalar's text in quotes (cut with "..." past 40
 * bytes). Writes into buf (cap bytes) and returns buf.
 */
const char *specnode_describe(const specnode *n, char *buf, size_t cap);

#endif
