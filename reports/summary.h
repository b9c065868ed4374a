/* summary.h — the framework's own view of an allocator's statistics at one moment
 * (answers/moment.h), in the framework's layout, so that a user can lay a real
 * printout next to the predicted one (`gpusim replay --summary`): PyTorch's
 * memory_summary() and memory_stats(), TensorFlow's get_memory_info, XLA's
 * memory_stats() and BFC's "Stats:" block, else gpusim's own names. */

/* By strategy:
 *  - torch, and async as PyTorch's backend:cudaMallocAsync: torch.cuda.memory_summary()
 *    line for line (torch/cuda/memory.py: memory_summary, pytorch/pytorch commit
 *    00b65a04a2d3), and memory_stats() as a flat dict sorted by key. Under the async
 *    backend PyTorch fills only allocated_bytes.all and active_bytes.all (from
 *    UsedMemCurrent/High) and reserved_bytes.all (ReservedMemCurrent/High); every other
 *    statistic reads 0 (c10/cuda/CUDAMallocAsyncAllocator.cpp: getDeviceStats).
 *  - the BFC strategies: TensorFlow's tf.config.experimental.get_memory_info
 *    ({'current': bytes_in_use, 'peak': peak_bytes_in_use}), XLA's memory_stats(), and
 *    the "Stats:" block BFC logs at an OOM (AllocatorStats::DebugString, xla/tsl
 *    framework/allocator.cc), after its "ran out of memory" warning at the OOM moment.
 *  - any other strategy: its statistics under gpusim's names.
 * The view follows the strategy's family (moment.ops->family, sim/strategy.h). */
#ifndef GPUSIM_SUMMARY_H
#define GPUSIM_SUMMARY_H

#include <stdint.h>

#include "answers/moment.h"
#include "sim/buf.h"

/* The text view; device_id is the device ID PyTorch prints (0 on one GPU). */
void report_summary_text(const moment *m, uint32_t device_id, sim_buf *out);
/* The memory_stats()-shaped JSON object (TF: get_memory_info's dict and XLA's
 * memory_stats() under "get_memory_info" and "memory_stats"), ending in a newline. */
void report_summary_json(const moment *m, sim_buf *out);

#endif
