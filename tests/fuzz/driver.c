/* SPDX-License-Identifier: MIT */
/*
 * driver.c - a main() for the fuzz harnesses when they are built without
 * libFuzzer (gcc, the normal test suite): feeds every file of each folder
 * or file named on the command line to LLVMFuzzerTestOneInput once, in name
 * order, and exits 0 when none of them stopped the process. So the corpora,
 * every past finding among them, run in every build, sanitized or not.
 * usage: fuzz_TARGET CORPUS_DIR_OR_FILE...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Runs one file; returns 0, or -1 when it cannot be read. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        free(buf);
        return -1;
    }
    /* an exact-size copy, so that ASan sees a read past the end */
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    if (n)
        memcpy(exact, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int main(int argc, char **argv)
{
    size_t ran = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "fuzz driver: cannot read '%s'\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (run_file(argv[i]) != 0) {
                fprintf(stderr, "fuzz driver: cannot read '%s'\n", argv[i]);
                return 1;
            }
            ran++;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            fprintf(stderr, "fuzz driver: cannot read '%s'\n", argv[i]);
            return 1;
        }
        char **names = NULL;
        size_t n = 0;
        for (struct dirent *de; (de = readdir(d));) {
            if (de->d_name[0] == '.')
                continue;
            char **nn = realloc(names, (n + 1) * sizeof *names);
            if (!nn || !(nn[n] = strdup(de->d_name)))
                return 1;
            names = nn;
            n++;
        }
        closedir(d);
        qsort(names, n, sizeof *names, by_name);
        for (size_t j = 0; j < n; j++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[i], names[j]);
            if (run_file(path) != 0) {
                fprintf(stderr, "fuzz driver: cannot read '%s'\n", path);
                return 1;
            }
            ran++;
            free(names[j]);
        }
        free(names);
    }
    if (!ran) {
        fprintf(stderr, "fuzz driver: no input\n");
        return 1;
    }
    printf("fuzz driver: %zu inputs, no crash\n", ran);
    return 0;
}
