/* Check suite for cli/jobdir: a directory of per-rank traces named by its job.json (synth
 * --ranks, record --ranks), expanded into the traces' paths in rank order, and each way
 * a job.json can be wrong, named by its line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/jobdir.h"
#include "support/check_main.h"

/* a new directory with the files a.jsonl and b.jsonl and the given job.json */
static char *job_dir(const char *job)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/gpusim-jobdir-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *names[] = {"a.jsonl", "b.jsonl", "job.json"};
    for (int i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(i == 2 ? job : "{\"format\":\"gpusim-trace\",\"version\":1}\n", f);
        fclose(f);
    }
    return dir;
}

static void remove_dir(const char *dir)
{
    const char *names[] = {"a.jsonl", "b.jsonl", "job.json"};
    for (int i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* jobdir_traces on job must fail with st and a message containing part, at line */
static void rejects(const char *job, sim_status st, uint64_t line, const char *part)
{
    char *dir = job_dir(job);
    char *paths[4] = {0};
    uint32_t n = 99;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(jobdir_traces(dir, paths, 4, &n, &err), st);
    ck_assert_uint_eq(n, 0);
    ck_assert_msg(strstr(err.msg, part) != NULL, "message '%s' lacks '%s'", err.msg, part);
    ck_assert_uint_eq(err.line, line);
    ck_assert_msg(strstr(err.file, "job.json") != NULL, "the error names %s", err.file);
    for (int i = 0; i < 4; i++)
        ck_assert_ptr_null(paths[i]);
    remove_dir(dir);
}

START_TEST(a_job_directory_is_its_traces_in_rank_order)
{
    char *dir =
        job_dir("{\"format\":\"gpusim-job\",\"version\":1,\"name\":\"j\",\"ranks\":2,\"traces\":["
                "{\"rank\":0,\"file\":\"b.jsonl\",\"peak_live_bytes\":1},{\"rank\":1,\"file\":\"a.jsonl\"}]}\n");
    ck_assert(jobdir_is_job(dir));
    char *paths[4] = {0};
    uint32_t n = 0;
    sim_error err;
    ck_assert_int_eq(jobdir_traces(dir, paths, 4, &n, &err), SIM_OK);
    ck_assert_uint_eq(n, 2);
    char want[128];
    snprintf(want, sizeof want, "%s/b.jsonl", dir);
    ck_assert_str_eq(paths[0], want); /* the order job.json gives, not the names' */
    snprintf(want, sizeof want, "%s/a.jsonl", dir);
    ck_assert_str_eq(paths[1], want);
    free(paths[0]);
    free(paths[1]);
    remove_dir(dir);
}
END_TEST

START_TEST(a_directory_without_job_json_is_not_a_job)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/tmp/gpusim-jobdir-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert(!jobdir_is_job(dir));
    rmdir(dir);
}
END_TEST

START_TEST(ranks_out_of_order_names_outside_and_missing_files_are_errors_at_their_line)
{
    rejects("{\"format\":\"gpusim-job\",\"version\":1,\"traces\":[\n{\"rank\":0,\"file\":\"a.jsonl\"},\n"
            "{\"rank\":2,\"file\":\"b.jsonl\"}]}",
            SIM_ETRACE, 3, "traces[1]: expected \"rank\": 1");
    rejects("{\"format\":\"gpusim-job\",\"version\":1,\"traces\":[\n{\"rank\":0,\"file\":\"../a.jsonl\"}]}", SIM_ETRACE,
            2, "expected \"file\": the name of a trace in the directory");
    rejects("{\"format\":\"gpusim-job\",\"version\":1,\"traces\":[\n{\"rank\":0,\"file\":\"a.jsonl\"},\n"
            "{\"rank\":1,\"file\":\"c.jsonl\"}]}",
            SIM_ETRACE, 3, "rank 1's trace");
    rejects("{\"format\":\"gpusim-job\",\"version\":1,\"traces\":[\n7]}", SIM_ETRACE, 2,
            "traces[0]: expected an object, found a number");
}
END_TEST

START_TEST(another_format_or_version_or_no_traces_is_an_error)
{
    rejects("{\"format\":\"gpusim-trace\",\"version\":1,\"traces\":[]}", SIM_ETRACE, 1,
            "expected \"format\": \"gpusim-job\"");
    rejects("{\"format\":\"gpusim-job\",\n\"version\":2,\"traces\":[]}", SIM_ETRACE, 2, "expected \"version\": 1");
    rejects("{\"format\":\"gpusim-job\",\"version\":1,\"traces\":[]}", SIM_ETRACE, 1, "expected \"traces\"");
    rejects("[1", SIM_ETRACE, 0, "not JSON");
}
END_TEST

START_TEST(more_traces_than_the_caller_takes_is_a_usage_error)
{
    /* 2 traces, room for 1 */
    char *dir = job_dir("{\"format\":\"gpusim-job\",\"version\":1,\"traces\":[{\"rank\":0,\"file\":\"a.jsonl\"},"
                        "{\"rank\":1,\"file\":\"b.jsonl\"}]}");
    char *paths[1] = {0};
    uint32_t n = 0;
    sim_error err;
    ck_assert_int_eq(jobdir_traces(dir, paths, 1, &n, &err), SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "2 traces: at most 1") != NULL, "%s", err.msg);
    ck_assert_uint_eq(n, 0);
    remove_dir(dir);
}
END_TEST
