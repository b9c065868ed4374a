/* Check suite for sim/units: size parsing and printing, rounding helpers. */
#include <check.h>

#include "sim/units.h"
#include "support/check_main.h"

static uint64_t parse_ok(const char *s)
{
    uint64_t v = 0;
    sim_error err;
    ck_assert_msg(units_parse_size(s, &v, &err) == SIM_OK, "'%s' rejected: %s", s, err.msg);
    return v;
}

static void parse_bad(const char *s, const char *msg_part)
{
    uint64_t v = 0;
    sim_error err;
    sim_error_clear(&err);
    ck_assert_int_eq(units_parse_size(s, &v, &err), SIM_EUSAGE);
    ck_assert_msg(strstr(err.msg, msg_part) != NULL, "'%s': message '%s' lacks '%s'", s, err.msg, msg_part);
}

START_TEST(sizes_should_accept_bytes_and_binary_and_decimal_units)
{
    ck_assert_uint_eq(parse_ok("123"), 123);
    ck_assert_uint_eq(parse_ok("123B"), 123);
    ck_assert_uint_eq(parse_ok("4096MiB"), 4096ull << 20);
    ck_assert_uint_eq(parse_ok("16GiB"), 16ull << 30);
    ck_assert_uint_eq(parse_ok("2KiB"), 2048);
    ck_assert_uint_eq(parse_ok("1TiB"), 1ull << 40);
    ck_assert_uint_eq(parse_ok("16GB"), 16000000000ull);
    ck_assert_uint_eq(parse_ok("5MB"), 5000000);
    ck_assert_uint_eq(parse_ok("3KB"), 3000);
    ck_assert_uint_eq(parse_ok("1 GiB"), 1ull << 30);
}
END_TEST

START_TEST(sizes_should_accept_exact_fractions_only)
{
    ck_assert_uint_eq(parse_ok("1.5GiB"), 3ull << 29);
    ck_assert_uint_eq(parse_ok("0.5KiB"), 512);
    ck_assert_uint_eq(parse_ok("2.25MB"), 2250000);
    parse_bad("1.5", "not a whole number of bytes");
    parse_bad("0.3KiB", "not a whole number of bytes"); /* 307.2 bytes */
}
END_TEST

START_TEST(sizes_should_reject_garbage_and_overflow)
{
    parse_bad("", "empty size");
    parse_bad("MiB", "is not a size");
    parse_bad("-5", "is not a size");
    parse_bad("12parsecs", "unknown unit");
    parse_bad("12 M", "unknown unit");
    parse_bad("99999999999999999999", "too large");
    parse_bad("20000000TiB", "too large");
}
END_TEST

START_TEST(sizes_should_print_in_the_largest_fitting_unit)
{
    char b[32];
    ck_assert_str_eq(units_format_size(512, b, sizeof b), "512 B");
    ck_assert_str_eq(units_format_size(1536, b, sizeof b), "1.50 KiB");
    ck_assert_str_eq(units_format_size(12ull << 20, b, sizeof b), "12.00 MiB");
    ck_assert_str_eq(units_format_size(3ull << 29, b, sizeof b), "1.50 GiB");
}
END_TEST

/* PyTorch's format_size: each unit up to and including the next power, two decimals
 * (1025 B = 1.0009 KiB prints 1.00 KiB; 1.5 GiB + 1 B prints 1.50 GiB). */
START_TEST(c10_sizes_should_switch_units_only_above_each_power)
{
    static const struct {
        uint64_t bytes;
        const char *want;
    } T[] = {{0, "0 bytes"},         {1024, "1024 bytes"},    {1025, "1.00 KiB"},   {MiB, "1024.00 KiB"},
             {MiB + 1, "1.00 MiB"},  {20 * MiB, "20.00 MiB"}, {GiB, "1024.00 MiB"}, {GiB + GiB / 2 + 1, "1.50 GiB"},
             {80 * GiB, "80.00 GiB"}};
    for (size_t i = 0; i < sizeof T / sizeof T[0]; i++) {
        char buf[32];
        ck_assert_str_eq(units_format_c10(T[i].bytes, buf, sizeof buf), T[i].want);
    }
}
END_TEST

START_TEST(rounding_should_saturate_instead_of_overflowing)
{
    ck_assert_uint_eq(units_round_up(0, 256), 0);
    ck_assert_uint_eq(units_round_up(1, 256), 256);
    ck_assert_uint_eq(units_round_up(256, 256), 256);
    ck_assert_uint_eq(units_round_up(257, 512), 512);
    ck_assert_uint_eq(units_round_up(UINT64_MAX - 3, 256), UINT64_MAX - 255);
    ck_assert_uint_eq(units_round_down(1000, 256), 768);
    ck_assert(units_is_pow2(4096));
    ck_assert(!units_is_pow2(0));
    ck_assert(!units_is_pow2(96));
    ck_assert_uint_eq(units_log2(1), 0);
    ck_assert_uint_eq(units_log2(1ull << 20), 20);
    ck_assert_uint_eq(units_log2((1ull << 21) - 1), 20);
}
END_TEST

START_TEST(reals_and_integers_should_be_range_checked)
{
    double d;
    uint64_t u;
    sim_error err;
    ck_assert_int_eq(units_parse_real("0.75", 0.0, 1.0, &d, &err), SIM_OK);
    ck_assert(d > 0.74 && d < 0.76);
    ck_assert_int_eq(units_parse_real("1.5", 0.0, 1.0, &d, &err), SIM_EUSAGE);
    ck_assert_int_eq(units_parse_real("abc", 0.0, 1.0, &d, &err), SIM_EUSAGE);
    ck_assert_int_eq(units_parse_real("nan", 0.0, 1.0, &d, &err), SIM_EUSAGE);
    ck_assert_int_eq(units_parse_u64("18446744073709551615", &u, &err), SIM_OK);
    ck_assert_uint_eq(u, UINT64_MAX);
    ck_assert_int_eq(units_parse_u64("18446744073709551616", &u, &err), SIM_EUSAGE);
    ck_assert_int_eq(units_parse_u64("12a", &u, &err), SIM_EUSAGE);
}
END_TEST

START_TEST(errors_should_name_file_line_and_event)
{
    sim_error err;
    char buf[256];
    sim_error_set(&err, SIM_ETRACE, "t.jsonl", 812, 0, "free of id %d that is not allocated", 77);
    sim_error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "t.jsonl:812: free of id 77 that is not allocated");
    sim_error_set(&err, SIM_ETRACE, "t.json", 0, 12, "bad");
    sim_error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "t.json: event 12: bad");
    ck_assert_int_eq(sim_status_exit_code(SIM_ETRACE), 3);
    ck_assert_int_eq(sim_status_exit_code(SIM_EIO), 2);
    ck_assert_int_eq(sim_status_exit_code(SIM_EUSAGE), 2);
    ck_assert_str_eq(sim_strerror(SIM_ETRACE), "invalid trace");
}
END_TEST
