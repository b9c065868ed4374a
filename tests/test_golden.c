/* Golden traces: runs the gpusim binary on the cases of tests/golden/NAME.test and
 * compares chosen keys of its JSON output with values worked out by hand (the
 * arithmetic is in each file's comments). Format, in the spirit of jq's tests:
 * groups separated by blank lines; '#' lines are comments;
 *   replay ARGS...            the command (paths relative to tests/golden/)
 *   key.path=value ...        expected values in the --format=json output
 *   %%FAIL N message text     instead: expect exit status N and this text on stderr
 * A group must start with its command; one that does not fails. The test fails with
 * the group's line number, the key, the expected and the actual value. */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/check_main.h"
#include "traces/json.h"

static const char *source_dir(void)
{
    const char *s = getenv("GPUSIM_SOURCE_DIR");
    return s ? s : ".";
}

static const char *binary(void)
{
    const char *s = getenv("GPUSIM_BINARY");
    return s ? s : "./gpusim";
}

/* Run a command, capture stdout and stderr (into files), return exit status. */
static int run_cmd(const char *cmd, char **out, char **errout)
{
    char full[16384];
    char outf[] = "/tmp/gpusim-golden-out-XXXXXX";
    char errf[] = "/tmp/gpusim-golden-err-XXXXXX";
    int fo = mkstemp(outf), fe = mkstemp(errf);
    ck_assert(fo >= 0 && fe >= 0);
    snprintf(full, sizeof full, "%s >%s 2>%s", cmd, outf, errf);
    int rc = system(full);
    char *files[2] = {outf, errf};
    char **dst[2] = {out, errout};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(files[i], "rb");
        ck_assert_ptr_nonnull(f);
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        *dst[i] = calloc(1, (size_t)n + 1);
        if (n > 0)
            ck_assert_uint_eq(fread(*dst[i], 1, (size_t)n, f), (size_t)n);
        fclose(f);
        unlink(files[i]);
    }
    close(fo);
    close(fe);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* Find a dotted path in the DOM. */
static const json_value *lookup(const json_value *v, const char *path)
{
    char key[256];
    while (*path && v) {
        /* statistics carry dotted names (allocated_bytes.all.peak): try the rest whole */
        const json_value *whole = v->type == JSON_OBJECT ? json_get(v, path) : NULL;
        if (whole)
            return whole;
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        if (v->type == JSON_ARRAY) {
            unsigned long idx = strtoul(key, NULL, 10);
            v = idx < v->len ? &v->u.items[idx] : NULL;
        } else {
            v = json_get(v, key);
        }
        path = dot ? dot + 1 : path + n;
    }
    return v;
}

static void value_text(const json_value *v, char *buf, size_t cap)
{
    switch (v->type) {
    case JSON_NULL: snprintf(buf, cap, "null"); break;
    case JSON_TRUE: snprintf(buf, cap, "true"); break;
    case JSON_FALSE: snprintf(buf, cap, "false"); break;
    case JSON_NUMBER: snprintf(buf, cap, "%.*s", (int)v->len, v->u.num); break;
    case JSON_STRING: snprintf(buf, cap, "%s", v->u.str); break;
    case JSON_ARRAY:
    case JSON_OBJECT:
    default: snprintf(buf, cap, "<%s>", json_type_name(v->type)); break;
    }
}

static int check_group(const char *file, int line, const char *cmdline, char **expects, int n_expect,
                       int fail_code, const char *fail_text)
{
    char cmd[12288];
    snprintf(cmd, sizeof cmd, "cd %s/tests/golden && %s %s%s", source_dir(), binary(), cmdline,
             fail_code < 0 ? " --format=json --paranoid" : "");
    char *out = NULL, *err = NULL;
    int rc = run_cmd(cmd, &out, &err);
    int failures = 0;
    if (fail_code >= 0) {
        if (rc != fail_code || strstr(err, fail_text) == NULL) {
            fprintf(stderr, "%s:%d: expected exit %d and '%s', got exit %d and: %s\n", file, line, fail_code,
                    fail_text, rc, err);
            failures++;
        }
        free(out);
        free(err);
        return failures;
    }
    if (rc != 0) {
        fprintf(stderr, "%s:%d: '%s' exited %d: %s\n", file, line, cmdline, rc, err);
        free(out);
        free(err);
        return 1;
    }
    json_parser *p = json_parser_new();
    char perr[256];
    const json_value *root = json_parse(p, out, strlen(out), 1, perr, sizeof perr);
    if (root == NULL) {
        fprintf(stderr, "%s:%d: output is not JSON (%s)\n", file, line, perr);
        failures++;
    }
    for (int i = 0; root && i < n_expect; i++) {
        char *eq = strchr(expects[i], '=');
        if (eq == NULL) {
            fprintf(stderr, "%s:%d: bad expectation '%s'\n", file, line, expects[i]);
            failures++;
            continue;
        }
        *eq = '\0';
        const json_value *v = lookup(root, expects[i]);
        char got[256] = "<missing>";
        if (v)
            value_text(v, got, sizeof got);
        if (strcmp(got, eq + 1) != 0) {
            fprintf(stderr, "%s:%d: %s: %s expected %s, got %s\n", file, line, cmdline, expects[i], eq + 1, got);
            failures++;
        }
        *eq = '=';
    }
    json_parser_free(p);
    free(out);
    free(err);
    return failures;
}

static bool is_command(const char *line)
{
    return strncmp(line, "replay ", 7) == 0 || strncmp(line, "convert ", 8) == 0;
}

/* Runs every group of one .test file; returns the failures and adds the groups to *cases.
 * A group must start with its command: a group whose first line is anything else (a
 * misspelled command word, or expectations with no command) fails instead of being
 * skipped, and so does a second command inside a group. */
static int run_file(const char *path, int *cases)
{
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char line[4096];
    int lineno = 0, failures = 0;
    char cmdline[4096] = "";
    int cmd_line = 0;
    char *expects[128];
    int n_expect = 0;
    int fail_code = -1;
    char fail_text[1024] = "";
    bool in_group = false, bad_group = false;
    for (;;) {
        char *got = fgets(line, sizeof line, f);
        if (got)
            lineno++;
        size_t n = got ? strlen(line) : 0;
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (got && line[0] == '#')
            continue;
        if (!got || n == 0) {
            if (cmdline[0] && !bad_group)
                failures += check_group(path, cmd_line, cmdline, expects, n_expect, fail_code, fail_text);
            if (in_group)
                (*cases)++;
            for (int i = 0; i < n_expect; i++)
                free(expects[i]);
            n_expect = 0;
            cmdline[0] = '\0';
            fail_code = -1;
            in_group = bad_group = false;
            if (!got)
                break;
            continue;
        }
        bool first = !in_group;
        in_group = true;
        if (bad_group)
            continue;
        if (first && !is_command(line)) {
            fprintf(stderr, "%s:%d: a group starts with its command ('replay ...' or 'convert ...'), not '%s'\n",
                    path, lineno, line);
            failures++;
            bad_group = true;
        } else if (first) {
            snprintf(cmdline, sizeof cmdline, "%s", line);
            cmd_line = lineno;
        } else if (is_command(line)) {
            fprintf(stderr, "%s:%d: a second command in the group of line %d (separate groups by a blank line)\n",
                    path, lineno, cmd_line);
            failures++;
            bad_group = true;
        } else if (strncmp(line, "%%FAIL ", 7) == 0) {
            char *rest = line + 7;
            fail_code = (int)strtol(rest, &rest, 10);
            while (*rest == ' ')
                rest++;
            snprintf(fail_text, sizeof fail_text, "%s", rest);
        } else {
            /* expectations: space-separated key=value */
            char *save = NULL;
            for (char *tok = strtok_r(line, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
                if (n_expect < 128)
                    expects[n_expect++] = strdup(tok);
        }
    }
    fclose(f);
    return failures;
}

GPUSIM_TCASE("golden", 300, NULL, NULL);

START_TEST(golden_traces_should_give_the_numbers_worked_out_by_hand)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/tests/golden", source_dir());
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "no %s", dir);
    struct dirent *e;
    int failures = 0, cases = 0, files = 0;
    char *names[256];
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".test") == 0 && n < 256)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    for (int i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        failures += run_file(path, &cases);
        files++;
        free(names[i]);
    }
    printf("golden: %d case(s) in %d file(s), %d failure(s)\n", cases, files, failures);
    ck_assert_int_gt(cases, 0);
    ck_assert_int_eq(failures, 0);
}
END_TEST

/* A file of groups that must not pass: the parser's own test. */
START_TEST(a_group_with_an_unknown_command_word_should_fail_not_be_skipped)
{
    char path[] = "/tmp/gpusim-golden-bad-XXXXXX";
    int fd = mkstemp(path);
    ck_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    /* one good group (600 as in core.test), a misspelled command, expectations with no
     * command, and two commands in one group: 4 cases, 3 failures */
    fputs("# fixture\n"
          "replay deferred_tie.json --strategy=ideal\n"
          "result.peak_requested_bytes=600\n"
          "\n"
          "replya deferred_tie.json --strategy=ideal\n"
          "result.peak_reserved_bytes=1\n"
          "\n"
          "result.peak_reserved_bytes=1\n"
          "\n"
          "replay deferred_tie.json --strategy=ideal\n"
          "replay deferred_tie.json --strategy=raw\n"
          "result.peak_requested_bytes=600\n",
          f);
    fclose(f);
    int cases = 0;
    int failures = run_file(path, &cases);
    unlink(path);
    ck_assert_int_eq(cases, 4);
    ck_assert_int_eq(failures, 3);
}
END_TEST
