/* Check suite for strategies/torch_conf: PYTORCH_CUDA_ALLOC_CONF parsing. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "sim/units.h"
#include "strategies/torch_conf.h"
#include "support/check_main.h"

static sim_status parse(const char *text, torch_conf *c, sim_error *err)
{
    sim_error_clear(err);
    return torch_conf_parse(text, c, err);
}

/* text, which must parse. */
static torch_conf parsed(const char *text)
{
    torch_conf c;
    sim_error err;
    ck_assert_msg(parse(text, &c, &err) == SIM_OK, "'%s': %s", text ? text : "(null)", err.msg);
    return c;
}

static void expect_error(const char *text, const char *needle)
{
    torch_conf c;
    sim_error err;
    sim_status st = parse(text, &c, &err);
    ck_assert_msg(st == SIM_EUSAGE, "'%s' should be refused", text);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s': message '%s' lacks '%s'", text, err.msg, needle);
}

GPUSIM_TCASE("parse", 0, NULL, NULL);

START_TEST(conf_should_give_pytorch_defaults_for_an_empty_string)
{
    torch_conf c = parsed(NULL);
    ck_assert_uint_eq(c.max_split_size_bytes, TORCH_CONF_NO_MAX_SPLIT);
    ck_assert_uint_eq(c.max_non_split_rounding_bytes, 20 * MiB);
    ck_assert_uint_eq(c.large_segment_size_bytes, 20 * MiB);
    ck_assert(test_same_double(c.garbage_collection_threshold, 0.0));
    ck_assert(!c.expandable_segments);
    for (unsigned k = 0; k < TORCH_CONF_ROUNDUP_INTERVALS; k++)
        ck_assert_uint_eq(c.roundup_power2_divisions[k], 0);
    c = parsed("");
}
END_TEST

START_TEST(conf_should_read_every_native_key)
{
    torch_conf c = parsed("max_split_size_mb:128, max_non_split_rounding_mb:64,garbage_collection_threshold:0.6,"
                          "expandable_segments:True,roundup_power2_divisions:4,backend:native");
    ck_assert_uint_eq(c.max_split_size_bytes, 128 * MiB);
    ck_assert_uint_eq(c.max_non_split_rounding_bytes, 64 * MiB);
    ck_assert(c.garbage_collection_threshold > 0.59 && c.garbage_collection_threshold < 0.61);
    ck_assert(c.expandable_segments);
    for (unsigned k = 0; k < TORCH_CONF_ROUNDUP_INTERVALS; k++)
        ck_assert_uint_eq(c.roundup_power2_divisions[k], 4);
}
END_TEST

START_TEST(conf_should_fill_the_roundup_table_from_the_list_form)
{
    /* [64:8,256:4,>:1]: 64 → index log2(64) = 6, and the first key fills 0..5 too;
     * 256 → index 8; index 7 (128 MiB) keeps 0; '>' fills 9..15 */
    torch_conf c = parsed("roundup_power2_divisions:[64:8,256:4,>:1]");
    const uint32_t want[TORCH_CONF_ROUNDUP_INTERVALS] = {8, 8, 8, 8, 8, 8, 8, 0, 4, 1, 1, 1, 1, 1, 1, 1};
    for (unsigned k = 0; k < TORCH_CONF_ROUNDUP_INTERVALS; k++)
        ck_assert_msg(c.roundup_power2_divisions[k] == want[k], "index %u: %u, want %u", k,
                      c.roundup_power2_divisions[k], want[k]);
    /* 3 MiB: floor(log2) = 21 → index 1; 300 MiB: 28 → 8; 1 TiB: 40 → clamped 15 */
    ck_assert_uint_eq(torch_conf_divisions(&c, 3 * MiB), 8);
    ck_assert_uint_eq(torch_conf_divisions(&c, 300 * MiB), 4);
    ck_assert_uint_eq(torch_conf_divisions(&c, 1 * TiB), 1);
    ck_assert_uint_eq(torch_conf_divisions(&c, 512), 8); /* below 1 MiB: index 0 */
}
END_TEST

START_TEST(conf_should_read_large_segment_size_first)
{
    torch_conf c;
    sim_error err;
    /* the minimum of max_non_split_rounding_mb is large_segment_size_mb, whatever
     * the order of the keys; its default follows large_segment_size_mb */
    ck_assert_int_eq(parse("large_segment_size_mb:40", &c, &err), SIM_OK);
    ck_assert_uint_eq(c.large_segment_size_bytes, 40 * MiB);
    ck_assert_uint_eq(c.max_non_split_rounding_bytes, 40 * MiB);
    expect_error("max_non_split_rounding_mb:30,large_segment_size_mb:40", "must be >= 40");
    ck_assert_int_eq(parse("max_non_split_rounding_mb:40,large_segment_size_mb:40", &c, &err), SIM_OK);
}
END_TEST

START_TEST(conf_should_accept_and_note_the_harmless_keys)
{
    torch_conf c = parsed("release_lock_on_cudamalloc:True,pinned_use_cuda_host_register:False,"
                          "pinned_num_register_threads:8,pinned_use_background_threads:True");
    ck_assert(c.release_lock_on_cudamalloc);
    ck_assert_ptr_nonnull(strstr(c.ignored, "pinned_num_register_threads"));
    ck_assert_ptr_nonnull(strstr(c.ignored, "release_lock_on_cudamalloc"));
}
END_TEST

START_TEST(conf_should_mark_the_cudamallocasync_backend_and_let_the_last_backend_win)
{
    torch_conf c = parsed("backend:cudaMallocAsync");
    ck_assert(c.backend_async);
    c = parsed("backend:cudaMallocAsync,backend:native");
    ck_assert(!c.backend_async);
    c = parsed("");
    ck_assert(!c.backend_async);
}
END_TEST

START_TEST(conf_should_refuse_what_pytorch_refuses)
{
    expect_error("max_split_size_mb:19", "must be >= 20");
    expect_error("max_split_size_mb:19", "never split");
    expect_error("max_non_split_rounding_mb:19", "must be >= 20");
    expect_error("large_segment_size_mb:10", "must be >= 11");
    expect_error("garbage_collection_threshold:1.0", "(0.0, 1.0)");
    expect_error("garbage_collection_threshold:0", "(0.0, 1.0)");
    expect_error("roundup_power2_divisions:3", "power of 2");
    expect_error("roundup_power2_divisions:0", "power of 2");
    expect_error("roundup_power2_divisions:[64:3]", "power of 2");
    expect_error("roundup_power2_divisions:[65:4]", "power of 2");
    expect_error("roundup_power2_divisions:[64:4", "closing");
    expect_error("expandable_segments:true", "True/False");
    expect_error("backend:other", "unknown allocator backend");
    expect_error("max_split_size_mb", "expected ':'");
    expect_error("max_split_size_mb:", "has no value");
    expect_error("max_split_size_mb:20abc", "non-negative integer");
    expect_error("max_split_size_mb:20;expandable_segments:True", "non-negative integer");
    expect_error("max_split_size_mb:20 expandable_segments:True", "non-negative integer");
    expect_error("expandable_segments:True:False", "expected ','");
    expect_error("foo:1", "unrecognized key 'foo'");
    expect_error("pinned_num_register_threads:3", "power of 2");
    expect_error(",", "expected a key");
}
END_TEST

START_TEST(conf_should_leave_defaults_after_an_error)
{
    torch_conf c;
    sim_error err;
    ck_assert_int_eq(parse("expandable_segments:True,max_split_size_mb:1", &c, &err), SIM_EUSAGE);
    ck_assert(!c.expandable_segments);
    ck_assert_uint_eq(c.max_split_size_bytes, TORCH_CONF_NO_MAX_SPLIT);
}
END_TEST

START_TEST(conf_should_let_a_later_key_override_an_earlier_one)
{
    torch_conf c = parsed("expandable_segments:True,expandable_segments:False");
    ck_assert(!c.expandable_segments);
}
END_TEST

START_TEST(conf_should_format_the_roundup_table)
{
    char buf[256];
    torch_conf c = parsed("roundup_power2_divisions:[2:4,>:2]");
    /* 2 → index 1 (fills index 0 too); '>' fills 2..15 */
    ck_assert_str_eq(torch_conf_format_divisions(&c, buf, sizeof buf),
                     "[1:4,2:4,4:2,8:2,16:2,32:2,64:2,128:2,256:2,512:2,1024:2,2048:2,4096:2,8192:2,16384:2,32768:2]");
}
END_TEST

/* ==== Per release (torch_version.h) ==== */

GPUSIM_TCASE("versions", 0, NULL, NULL);

static torch_rules release(const char *v)
{
    torch_rules r;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_msg(torch_version_parse(v, &r, &err) == SIM_OK, "%s: %s", v, err.msg);
    return r;
}

static sim_status parse_as(const char *v, const char *text, torch_conf *c, sim_error *err)
{
    torch_rules r = release(v);
    sim_error_clear(err);
    return torch_conf_parse_for(text, &r, c, err);
}

START_TEST(version_should_read_releases_full_versions_and_main)
{
    char buf[16];
    torch_rules r = release("2.6");
    ck_assert_str_eq(torch_version_format(&r, buf, sizeof buf), "2.6");
    r = release("2.6.0+cu124");
    ck_assert_str_eq(torch_version_format(&r, buf, sizeof buf), "2.6");
    r = release("2.11");
    ck_assert_str_eq(torch_version_format(&r, buf, sizeof buf), "2.11");
    r = release("2.14.1+cu130");
    ck_assert_str_eq(torch_version_format(&r, buf, sizeof buf), "2.14");
    /* the default is 2.14, the newest release checked against its wheel */
    r = release(NULL);
    ck_assert_str_eq(torch_version_format(&r, buf, sizeof buf), "2.14");
    r = release("main");
    ck_assert_uint_eq(r.minor, TORCH_VERSION_MAIN);
    ck_assert_str_eq(torch_version_format(&r, buf, sizeof buf), "main");
    static const char *const BAD[] = {"2.0", "2.15", "1.13", "3.0", "2.", "2.6x", "26", "2.06", "2.6.", ""};
    for (size_t i = 0; i + 1 < sizeof BAD / sizeof BAD[0]; i++) {
        sim_error err;
        sim_error_clear(&err);
        ck_assert_msg(torch_version_parse(BAD[i], &r, &err) == SIM_EUSAGE, "'%s' should be refused", BAD[i]);
        ck_assert(strstr(err.msg, "2.1 to 2.14") != NULL);
    }
}
END_TEST

START_TEST(version_should_start_the_roundup_gt_fill_at_the_last_key_before_2_10)
{
    /* [256:1,512:2,1024:4,>:8]: 1024 MiB is entry 10. 2.9 fills '>' from entry
     * 10 on, so a 1100 MiB request (entry 10) has 8 divisions: steps of 128 MiB,
     * 1152 MiB; 2.10 and main keep entry 10 at 4 (256 MiB steps, 1280 MiB) */
    torch_conf c;
    sim_error err;
    const char *list = "roundup_power2_divisions:[256:1,512:2,1024:4,>:8]";
    ck_assert_int_eq(parse_as("2.9", list, &c, &err), SIM_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[9], 2);
    ck_assert_uint_eq(c.roundup_power2_divisions[10], 8);
    ck_assert_uint_eq(c.roundup_power2_divisions[15], 8);
    ck_assert_int_eq(parse_as("2.10", list, &c, &err), SIM_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[10], 4);
    ck_assert_uint_eq(c.roundup_power2_divisions[11], 8);
    /* a leading '>' sets entry 0 too before 2.10 */
    ck_assert_int_eq(parse_as("2.6", "roundup_power2_divisions:[>:2]", &c, &err), SIM_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[0], 2);
    ck_assert_int_eq(parse_as("main", "roundup_power2_divisions:[>:2]", &c, &err), SIM_OK);
    ck_assert_uint_eq(c.roundup_power2_divisions[0], 0);
    ck_assert_uint_eq(c.roundup_power2_divisions[1], 2);
}
END_TEST

START_TEST(version_should_know_only_the_keys_of_its_release)
{
    torch_conf c;
    sim_error err;
    /* expandable_segments from 2.1 on */
    ck_assert_int_eq(parse_as("2.1", "expandable_segments:True", &c, &err), SIM_OK);
    /* max_non_split_rounding_mb from 2.6 */
    ck_assert_int_eq(parse_as("2.5", "max_non_split_rounding_mb:64", &c, &err), SIM_EUSAGE);
    ck_assert(strstr(err.msg, "PyTorch 2.5 does not have it") != NULL);
    ck_assert_int_eq(parse_as("2.6", "max_non_split_rounding_mb:64", &c, &err), SIM_OK);
    ck_assert_uint_eq(c.max_non_split_rounding_bytes, 64 * MiB);
    /* per_process_memory_fraction from 2.10, a real in [0, 1] */
    ck_assert_int_eq(parse_as("2.9", "per_process_memory_fraction:0.5", &c, &err), SIM_EUSAGE);
    ck_assert_int_eq(parse_as("2.10", "per_process_memory_fraction:0.5", &c, &err), SIM_OK);
    ck_assert(test_same_double(c.per_process_memory_fraction, 0.5));
    ck_assert_int_eq(parse_as("main", "per_process_memory_fraction:1.5", &c, &err), SIM_EUSAGE);
    ck_assert(strstr(err.msg, "[0.0, 1.0]") != NULL);
    /* large_segment_size_mb from 2.11 */
    ck_assert_int_eq(parse_as("2.10", "large_segment_size_mb:40", &c, &err), SIM_EUSAGE);
    ck_assert_int_eq(parse_as("2.11", "large_segment_size_mb:40", &c, &err), SIM_OK);
    ck_assert_uint_eq(c.large_segment_size_bytes, 40 * MiB);
    /* 2.6 has neither of the newer pinned/graph keys, nor has 2.8 (the 2.7.1 wheel
     * refuses both); graph_capture_record_stream_reuse from 2.9,
     * pinned_reserve_segment_size_mb from 2.10 (the wheels' headers) */
    ck_assert_int_eq(parse_as("2.6", "graph_capture_record_stream_reuse:True", &c, &err), SIM_EUSAGE);
    ck_assert_int_eq(parse_as("2.6", "pinned_reserve_segment_size_mb:8", &c, &err), SIM_EUSAGE);
    ck_assert_int_eq(parse_as("2.8", "graph_capture_record_stream_reuse:True", &c, &err), SIM_EUSAGE);
    ck_assert_int_eq(parse_as("2.9", "graph_capture_record_stream_reuse:True", &c, &err), SIM_OK);
    ck_assert_int_eq(parse_as("2.9", "pinned_reserve_segment_size_mb:8", &c, &err), SIM_EUSAGE);
    ck_assert_int_eq(parse_as("2.10", "pinned_reserve_segment_size_mb:8", &c, &err), SIM_OK);
}
END_TEST

START_TEST(version_should_require_more_than_20_mib_before_2_9)
{
    torch_conf c;
    sim_error err;
    /* 2.6 parseMaxSplitSize: the value must exceed kLargeBuffer / 1 MiB = 20 */
    ck_assert_int_eq(parse_as("2.6", "max_split_size_mb:20", &c, &err), SIM_EUSAGE);
    ck_assert(strstr(err.msg, ">= 21") != NULL);
    ck_assert_int_eq(parse_as("2.6", "max_split_size_mb:21", &c, &err), SIM_OK);
    ck_assert_int_eq(parse_as("2.6", "max_non_split_rounding_mb:20", &c, &err), SIM_EUSAGE);
    ck_assert_int_eq(parse_as("2.9", "max_split_size_mb:20", &c, &err), SIM_OK);
    ck_assert_uint_eq(c.max_split_size_bytes, 20 * MiB);
}
END_TEST

START_TEST(version_should_place_the_rules_measured_on_the_wheels)
{
    /* measured on the shipped wheels (check-releases.sh): 2.9.1 advises
     * PYTORCH_CUDA_ALLOC_CONF, 2.10.0 PYTORCH_ALLOC_CONF, 2.11.0
     * PYTORCH_CUDA_ALLOC_CONF again with the docs.pytorch.org
     * link; 2.9.1 caps at a fraction of 1.0, 2.10.0 does not; 2.13.0 still advises
     * expandable segments when they are on, 2.14.1 does not */
    ck_assert(!release("2.9").oom_advises_pytorch_alloc_conf);
    ck_assert(release("2.10").oom_advises_pytorch_alloc_conf);
    ck_assert(!release("2.10").oom_links_cuda_alloc_conf_section);
    ck_assert(release("2.11").oom_links_cuda_alloc_conf_section);
    ck_assert(!release("2.9").fraction_one_is_no_limit);
    ck_assert(release("2.10").fraction_one_is_no_limit);
    ck_assert(!release("2.13").oom_advice_only_without_expandable);
    ck_assert(release("2.14").oom_advice_only_without_expandable);
    ck_assert(release("main").oom_advice_only_without_expandable);
    ck_assert(release(NULL).oom_advice_only_without_expandable);
}
END_TEST
