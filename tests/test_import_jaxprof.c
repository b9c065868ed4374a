/* Check suite for --from=jax-memory (traces/import_jaxprof.h): the device memory
 * profiles of three real JAX programs on XLA:CPU (tests/data/import/jax, made by its
 * make.py), each a start state of live buffers; then hand-built, cut and mutated
 * profiles.
 *
 * The expected numbers are the arrays each program keeps alive (make.py asserts that
 * the profile's buffers, per device, are exactly their shards, count and nbytes):
 *   mlp_adam: params of a 128-256-256-10 MLP, float32, weights and biases:
 *       128*256*4 + 256*4 + 256*256*4 + 256*4 + 256*10*4 + 10*4
 *     = 131072 + 1024 + 262144 + 1024 + 10240 + 40 = 405544 B in 6 arrays;
 *     with Adam's mu and nu (zeros_like each) 3 * 405544 = 1216632 B, and the int32
 *     step count 4 B: 19 buffers, 1216636 B.
 *   transformer_acts (d 64, 4 heads, seq 32, batch 4, float32):
 *     weights wq wk wv wo 4 * 64*64*4 = 65536, w1 and w2 2 * 64*256*4 = 131072;
 *     x and the output 2 * 4*32*64*4 = 65536; held activations y q k v x1 5 * 32768
 *     = 163840, the attention a 4*4*32*32*4 = 65536, the MLP's u 4*32*256*4 = 131072:
 *     65536 + 131072 + 65536 + 163840 + 65536 + 131072 = 622592 B in 4+2+2+7 = 15 buffers.
 *   sharded4 (4 CPU devices): a 512x128 float32 batch split 4 ways (65536 B a shard), a
 *     128x128 float32 weight replicated (65536 B on each), int32 labels of 512 split
 *     (512 B a shard): 3 buffers, 131584 B on every device; and a 1000-float array on
 *     device 2 alone (4000 B): device 2 holds 4 buffers, 135584 B, and is the default. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine.h"
#include "sim/units.h"
#include "strategies/ideal.h"
#include "support/check_main.h"
#include "support/import_data.h"
#include "support/seed.h"
#include "support/slurp.h"
#include "traces/input.h"

static char g_path[1024];

static const char *data(const char *name)
{
    return import_data_path(g_path, sizeof g_path, "jax", name);
}

static trace_input *open_file(const char *name, int64_t which)
{
    size_t n;
    char *bytes = test_slurp(data(name), &n);
    trace_input *in;
    sim_error err;
    ck_assert_msg(import_open_mem("memory.prof", bytes, n, NULL, which, &in, &err) == SIM_OK, "%s: %s", name, err.msg);
    free(bytes);
    return in;
}

/* Every event an allocation at t = 0 tagged "buffer cpu:DEV": their bytes. */
static uint64_t live_bytes(trace_input *in, const char *device_tag)
{
    uint64_t bytes = 0;
    for (uint64_t k = 0; k < input_event_count(in); k++) {
        const sim_event *e = input_event_at(in, k);
        ck_assert_int_eq(e->op, SIM_OP_ALLOC);
        ck_assert_uint_eq(e->t, 0);
        ck_assert_msg(e->tag != NULL && strncmp(e->tag, device_tag, strlen(device_tag)) == 0, "tag %s", e->tag);
        bytes += e->size;
    }
    return bytes;
}

static sim_run *replay_ideal(trace_input *in)
{
    engine_config cfg = {.device = {.name = "test", .capacity_bytes = 1024 * GiB}, .ops = ideal_strategy()};
    sim_event_source src = input_source(in);
    sim_run *run = NULL;
    sim_error err;
    ck_assert_msg(engine_run(&cfg, &src, 1, &run, &err) == SIM_OK, "%s", err.msg);
    return run;
}

static const struct profile {
    const char *file, *tag;
    uint64_t buffers, bytes;
} PROFILES[] = {
    {"mlp_adam.prof", "buffer cpu:0 ", 19, 1216636},
    {"transformer_acts.prof", "buffer cpu:0 ", 15, 622592},
    {"sharded4.prof", "buffer cpu:2 ", 4, 135584}, /* the device with most live bytes */
};

GPUSIM_TCASE("recorded profiles", 60, NULL, NULL);

START_TEST(each_recorded_profile_should_import_its_live_buffers_as_allocations_at_the_start)
{
    const struct profile *p = &PROFILES[_i];
    trace_input *in = open_file(p->file, -1);
    ck_assert_str_eq(input_format_name(input_get_format(in)), "jax-memory");
    ck_assert_uint_eq(input_event_count(in), p->buffers);
    ck_assert_uint_eq(live_bytes(in, p->tag), p->bytes);
    ck_assert(import_has_warning(in, "is one moment"));
    ck_assert(import_has_warning(in, "executables (0 B of generated code")); /* XLA:CPU code is no device memory */
    input_close(in);
}
END_TEST
GPUSIM_LOOP(each_recorded_profile_should_import_its_live_buffers_as_allocations_at_the_start, 0, 3);

START_TEST(a_replay_under_ideal_should_peak_at_exactly_the_profiles_live_bytes)
{
    const struct profile *p = &PROFILES[_i];
    trace_input *in = open_file(p->file, -1);
    sim_run *run = replay_ideal(in);
    ck_assert_uint_eq(run->total.peak_requested_bytes, p->bytes);
    ck_assert_uint_eq(run->total.final_requested_bytes, p->bytes); /* nothing is freed */
    sim_run_free(run);
    input_close(in);
}
END_TEST
GPUSIM_LOOP(a_replay_under_ideal_should_peak_at_exactly_the_profiles_live_bytes, 0, 3);

START_TEST(device_should_pick_one_device_of_the_sharded_profile)
{
    /* devices 0, 1, 3: batch shard 65536 + weight 65536 + labels shard 512 = 131584 B */
    static const uint64_t buffers[4] = {3, 3, 4, 3}, bytes[4] = {131584, 131584, 135584, 131584};
    for (int dev = 0; dev < 4; dev++) {
        trace_input *in = open_file("sharded4.prof", dev);
        char tag[32];
        snprintf(tag, sizeof tag, "buffer cpu:%d ", dev);
        ck_assert_uint_eq(input_event_count(in), buffers[dev]);
        ck_assert_uint_eq(live_bytes(in, tag), bytes[dev]);
        ck_assert(!import_has_warning(in, "--device=N picks another")); /* asked for: no warning */
        input_close(in);
    }
    trace_input *in = open_file("sharded4.prof", -1);
    ck_assert(import_has_warning(in, "buffers on 4 devices: 0 (3 buffers, 131584 B), 1 (3 buffers, 131584 B), 2 (4 buffers, "
                              "135584 B), 3 (3 buffers, 131584 B); device 2 imported"));
    input_close(in);
    size_t n;
    char *all = test_slurp(data("sharded4.prof"), &n);
    sim_error err;
    ck_assert_int_eq(import_open_mem("memory.prof", all, n, NULL, 4, &in, &err), SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, "--device=4: no live buffer on that device (the profile has: 0 (3 buffers") != NULL,
                  "%s", err.msg);
    ck_assert_ptr_null(in);
    free(all);
}
END_TEST

START_TEST(the_tags_should_name_the_programs_frames_not_jaxs)
{
    trace_input *in = open_file("mlp_adam.prof", -1);
    bool step_count = false;
    for (uint64_t k = 0; k < input_event_count(in); k++) {
        const char *tag = input_event_at(in, k)->tag;
        ck_assert_msg(strstr(tag, "mlp_adam:") != NULL, "%s", tag); /* the function that made it */
        ck_assert_msg(strstr(tag, "full") == NULL && strstr(tag, "zeros") == NULL, "%s", tag); /* jnp's own */
        step_count |= input_event_at(in, k)->size == 4;
    }
    ck_assert(step_count);
    input_close(in);
}
END_TEST

/* ---------------------------------------------------------------- hand-built profiles */

typedef struct pbuf {
    unsigned char b[512];
    size_t n;
} pbuf;

static void put_varint(pbuf *p, uint64_t v)
{
    do {
        p->b[p->n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void put_field(pbuf *p, unsigned num, const pbuf *sub)
{
    put_varint(p, (uint64_t)num << 3 | 2);
    put_varint(p, sub->n);
    memcpy(p->b + p->n, sub->b, sub->n);
    p->n += sub->n;
}

static void put_pair(pbuf *p, unsigned num, uint64_t a, uint64_t b)
{
    pbuf sub = {.n = 0};
    put_varint(&sub, 0x08);
    put_varint(&sub, a);
    put_varint(&sub, 0x10);
    put_varint(&sub, b);
    put_field(p, num, &sub);
}

static const char *const STRINGS[] = {"", "space", "bytes", "allocations", "count", "kind", "buffer", "device",
                                      "cuda:1"};

/* A profile of one sample: count buffers, bytes in all, kind buffer on "cuda:1".
 * types: 2 (allocations/count, space/bytes) or 1 (allocations/count only); values:
 * how many of (count, bytes) the sample has; device_str: the label's string index. */
static pbuf build(int types, int values, uint64_t count, uint64_t bytes, uint64_t device_str)
{
    pbuf p = {.n = 0}, sample = {.n = 0}, vals = {.n = 0};
    put_pair(&p, 1, 3, 4);
    if (types == 2)
        put_pair(&p, 1, 1, 2);
    put_varint(&vals, count);
    if (values == 2)
        put_varint(&vals, bytes);
    put_field(&sample, 2, &vals);
    put_pair(&sample, 3, 5, 6);
    put_pair(&sample, 3, 7, device_str);
    put_field(&p, 2, &sample);
    for (size_t i = 0; i < sizeof STRINGS / sizeof STRINGS[0]; i++) {
        pbuf s = {.n = strlen(STRINGS[i])};
        memcpy(s.b, STRINGS[i], s.n);
        put_field(&p, 6, &s);
    }
    return p;
}

GPUSIM_TCASE("bad input", 120, NULL, NULL);

START_TEST(a_sample_of_several_buffers_should_become_that_many_allocations)
{
    pbuf p = build(2, 2, 3, 3000, 8); /* 3 buffers, 3000 B: 1000 B each */
    trace_input *in;
    sim_error err;
    ck_assert_msg(import_open_mem("memory.prof", p.b, p.n, NULL, -1, &in, &err) == SIM_OK, "%s",
                  err.msg); /* found without --from */
    ck_assert_str_eq(input_format_name(input_get_format(in)), "jax-memory");
    ck_assert_uint_eq(input_event_count(in), 3);
    ck_assert_uint_eq(live_bytes(in, "buffer cuda:1"), 3000);
    ck_assert_uint_eq(input_event_at(in, 2)->size, 1000);
    input_close(in);
    ck_assert_int_eq(import_open_mem("memory.prof", p.b, p.n, NULL, 1, &in, &err), SIM_OK); /* "cuda:1" is device 1 */
    input_close(in);
}
END_TEST

START_TEST(a_profile_that_is_not_what_it_claims_should_say_why)
{
    pbuf uneven = build(2, 2, 3, 3001, 8), no_space = build(1, 1, 3, 0, 8), bad_str = build(2, 2, 1, 8, 99),
         short_sample = build(2, 1, 1, 0, 8);
    static const char json[] = "{\"a\": 1}";
    const struct {
        const pbuf *p;
        const char *from, *msg;
    } T[] = {
        {&uneven, NULL, "a sample of 3 buffers and 3001 bytes: not a whole number of bytes per buffer"},
        {&no_space, NULL, "no sample type space/bytes among its 1 sample types"},
        {&bad_str, NULL, "label value: string index 99 beyond the string table (9 strings)"},
        {&short_sample, NULL, "a sample with 1 values where the profile has 2 sample types"},
        {NULL, "jax-memory", "--from=jax-memory reads the gzipped pprof"},
    };
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        trace_input *in;
        sim_error err;
        const void *b = T[i].p ? (const void *)T[i].p->b : json;
        size_t n = T[i].p ? T[i].p->n : strlen(json);
        sim_status st = import_open_mem("memory.prof", b, n, T[i].from, -1, &in, &err);
        ck_assert_msg(st == SIM_ETRACE, "case %zu: status %d (%s)", i, st, err.msg);
        ck_assert_msg(strstr(err.msg, T[i].msg) != NULL, "case %zu: '%s' not in '%s'", i, T[i].msg, err.msg);
        ck_assert_ptr_null(in);
    }
}
END_TEST

/* Every prefix of the gzip is a truncated gzip; a prefix of the inflated profile may
 * still be a profile (fields end anywhere), or fail: never anything else. */
START_TEST(every_prefix_of_a_profile_should_fail_cleanly_or_import)
{
    size_t n;
    char *gz = test_slurp(data("sharded4.prof"), &n);
    for (size_t len = 0; len < n; len++) {
        trace_input *in;
        sim_error err;
        sim_status st = import_open_mem("memory.prof", gz, len, len % 2 ? "jax-memory" : NULL, -1, &in, &err);
        EXPECT_MSG(st == SIM_ETRACE && in == NULL, "gzip prefix %zu: status %d (%s)", len, st, err.msg);
    }
    pbuf p = build(2, 2, 3, 3000, 8);
    for (size_t len = 0; len < p.n; len++) {
        trace_input *in;
        sim_error err;
        sim_status st = import_open_mem("memory.prof", p.b, len, "jax-memory", -1, &in, &err);
        EXPECT_MSG((st == SIM_ETRACE && in == NULL) || st == SIM_OK, "prefix %zu: status %d (%s)", len, st, err.msg);
        input_close(in);
    }
    free(gz);
}
END_TEST

/* Deterministic byte mutations of a hand-built profile: any status is fine, a crash
 * (or a sanitizer report in the sanitizer build) is not. */
START_TEST(mutated_profiles_should_never_crash)
{
    uint64_t x = 88172645463325252u; /* a fixed seed: the same mutations every run */
    pbuf orig = build(2, 2, 3, 3000, 8);
    for (int round = 0; round < 3000; round++) {
        pbuf p = orig;
        for (int k = 0; k < 1 + round % 4; k++) {
            uint64_t r = test_rand(&x);
            p.b[(size_t)(r % p.n)] = (unsigned char)(r >> 24);
        }
        trace_input *in;
        sim_error err;
        if (import_open_mem("memory.prof", p.b, p.n, round % 2 ? "jax-memory" : NULL, round % 3 - 1, &in, &err) ==
            SIM_OK) {
            engine_config cfg = {.device = {.name = "test", .capacity_bytes = 1024 * GiB}, .ops = ideal_strategy()};
            sim_event_source src = input_source(in);
            sim_run *run = NULL;
            if (engine_run(&cfg, &src, 1, &run, &err) == SIM_OK)
                sim_run_free(run);
        } else {
            EXPECT(in == NULL);
        }
        input_close(in);
    }
}
END_TEST
