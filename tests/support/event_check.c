/* One assertion for two events that must be the same (event_check.h). */
#include "event_check.h"

#include <check.h>
#include <stddef.h>

static void same_str(const char *got, const char *want)
{
    ck_assert_int_eq(got == NULL, want == NULL);
    if (want != NULL)
        ck_assert_str_eq(got, want);
}

void event_check_same(const sim_event *got, const sim_event *want)
{
    ck_assert_int_eq(got->op, want->op);
    ck_assert_uint_eq(got->id, want->id);
    ck_assert_uint_eq(got->size, want->size);
    ck_assert_uint_eq(got->t, want->t);
    ck_assert_uint_eq(got->ready_t, want->ready_t);
    ck_assert_uint_eq(got->stream, want->stream);
    ck_assert_int_eq(got->has_share, want->has_share);
    ck_assert_uint_eq(got->share, want->share);
    ck_assert_uint_eq(got->pool, want->pool);
    ck_assert_uint_eq(got->pool_flags, want->pool_flags);
    ck_assert_uint_eq(got->line, want->line);
    ck_assert_uint_eq(got->index, want->index);
    same_str(got->tag, want->tag);
    same_str(got->name, want->name);
    same_str(got->proc, want->proc);
}
