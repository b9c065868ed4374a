/* ideal.h — the lower bound: exactly the live requested bytes, no rounding, no
 * caching, no fragmentation. Out of memory only when the live requested bytes
 * would exceed what the device has left (capacity − contexts − other processes). */
#ifndef GPUSIM_IDEAL_H
#define GPUSIM_IDEAL_H

#include "sim/strategy.h"

const strategy_ops *ideal_strategy(void);

#endif
