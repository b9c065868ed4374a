/* plan_reference.h — brute-force references of the offline planners (strategies/
 * plan_xla.h, plan_tflite.h) for the differential tests: the same rules, written
 * without the overlap index, so that every placement scans every placed buffer
 * (quadratic; fine for the few hundred buffers of a test round). Also the plain
 * checks that a plan's buffers which share a time share no byte. */
#ifndef GPUSIM_TEST_PLAN_REFERENCE_H
#define GPUSIM_TEST_PLAN_REFERENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "strategies/plan.h"
#include "strategies/plan_xla.h"

/* XLA's heap under order (BEST: the better of spatial and temporal, spatial on a
 * tie), alignment align and heap limit limit (0: none): the offsets into off[n],
 * the winning order's name into *won; returns the heap's size (the heaps' sum). */
uint64_t plan_ref_xla(const plan_buffer *b, uint32_t n, plan_xla_order order, uint64_t align, uint64_t limit,
                      uint64_t *off, const char **won);

/* XLA with shares, one order (temporal or spatial): root[i] is the group of buffer
 * i (a buffer that shares nothing is its own root); limit UINT64_MAX for none. The
 * offsets into off[n]; returns the heap's size. */
uint64_t plan_ref_xla_shared(const plan_buffer *b, uint32_t n, const uint32_t *root, bool temporal, uint64_t align,
                             uint64_t limit, uint64_t *off);

/* TFLite's arena (gpu false) or the GPU delegate's greedy-by-size planner (gpu
 * true): the offsets into off[n]; returns the heap's size. */
uint64_t plan_ref_tflite(const plan_buffer *b, uint32_t n, uint64_t align, bool gpu, uint64_t *off);

/* Fails the running Check test unless every buffer lies below heap and no two
 * buffers that share a time share a byte. */
void plan_ref_check_disjoint(const plan_buffer *b, uint32_t n, const uint64_t *off, uint64_t heap);

/* The same with groups: buffers of different groups (root[]) that share a time
 * share no byte, and a group's members all sit at its root's offset. */
void plan_ref_check_disjoint_groups(const plan_buffer *b, uint32_t n, const uint32_t *root, const uint64_t *off,
                                    uint64_t heap);

#endif
