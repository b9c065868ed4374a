/* plan_index.h — which already placed buffers are live at the same time as a
 * given one: the question every offline planner asks once per buffer. */

/* All intervals are known before planning starts, so the index is static: the
 * buffers sorted by start, and over that order a segment tree holding, per node,
 * the latest end among the *committed* (placed) buffers below it. A query for
 * [s, e] looks only at the prefix of buffers that start at or before e and
 * descends into nodes whose latest end is at or after s, so it costs
 * O((k + 1) log n) for k hits; commit is O(log n). The naive alternative, a scan
 * over every placed buffer, is quadratic over a plan. A placed buffer's chunk is
 * kept beside its leaf, in start order, so that the hits of one query, which are
 * close in time, are read from neighbouring memory.
 * Resident buffers, those live from their start to the last start of any buffer
 * or later (weights, a mid-run snapshot's start blocks), meet every query that
 * ends after they start: the earliest of them (as many as pays) stay out of the
 * tree, and once placed are kept merged in offset order, so that a query meeting
 * them all costs their runs (often one: they are placed side by side) instead of
 * a hit each; placing one costs O(r) for r resident buffers, and keeping the
 * union of everything placed costs a binary search and a move of the runs after
 * it per commit. */
#ifndef GPUSIM_PLAN_INDEX_H
#define GPUSIM_PLAN_INDEX_H

#include <stdint.h>

#include "plan.h"
#include "sim/status.h"

typedef struct plan_index plan_index;

/* Builds the index over b[0 .. n) (borrowed; must outlive the index); none is
 * committed. NULL when the host is out of memory. */
plan_index *plan_index_new(const plan_buffer *b, uint32_t n);
void plan_index_free(plan_index *x);
/* Marks buffer i placed at offset off; it is a hit of later queries, reported
 * with seq (the planners' placement number). */
void plan_index_commit(plan_index *x, uint32_t i, uint64_t off, uint32_t seq);
/* Every offset the planner commits is a multiple of align (before any commit):
 * resident runs then also merge across a gap that ends at or before the end
 * before it rounded up to align, where no aligned buffer can start. Default 1. */
void plan_index_set_alignment(plan_index *x, uint64_t align);
/* Forgets every commit (a new heap); cost proportional to the commits. */
void plan_index_reset(plan_index *x);
/* The committed buffers whose interval shares a time with [start, end], as
 * chunks (offset, size, seq) sorted by offset then seq (plan_sort_chunks): *out
 * points into the index's own array (valid until the next query or commit),
 * *n_out is their number. SIM_ENOMEM when the host is out of memory. */
sim_status plan_index_query_all(plan_index *x, int64_t start, int64_t end, plan_chunk **out, uint32_t *n_out);
/* The same for placing a buffer of a positive size, with the resident buffers
 * (below) merged: when [start, end] meets every one of them, those placed come
 * as runs, one chunk per set of them that touch or overlap in space, or leave
 * only a gap smaller than the alignment (plan_index_set_alignment) between them
 * (its first member's offset and seq, up to the set's furthest end). When it
 * meets every committed buffer (a resident buffer's own query), the answer is
 * the union of all of them merged the same way, kept up to date at each commit:
 * its runs, with no hit gathered or sorted. A planner that walks
 * the chunks in this order and places into the gaps between what they cover
 * (XLA's heap, TFLite's arena and GPU greedy) finds the same gaps for a
 * positive size: the gaps inside a run are empty, and no size fits in them.
 * A zero-byte buffer (TFLite GPU places those) needs plan_index_query_all. */
sim_status plan_index_query(plan_index *x, int64_t start, int64_t end, plan_chunk **out, uint32_t *n_out);

#endif
