/* cnn.h — synthetic trace of ResNet training steps (or inference passes) at
 * tensor level, in PyTorch eager (torchvision) order: weights and BatchNorm
 * buffers, per-block saved activations, gradients in reverse, optimizer states on
 * the first step. The step engine is graph.h; the per-block model is in cnn.c and
 * traces/synth/README.md. */
#ifndef GPUSIM_SYNTH_CNN_H
#define GPUSIM_SYNTH_CNN_H

#include <stdbool.h>
#include <stdint.h>

#include "graph.h"
#include "synth.h"

typedef struct cnn_config {
    uint32_t depth;            /* 18, 34, 50, 101 or 152 (torchvision ResNets) */
    uint64_t batch, image, classes;
    synth_dtype dtype;
    synth_optimizer optimizer;
    uint64_t steps;
    bool inference, checkpointing, keep_live;
    uint64_t seed;
} cnn_config;

/* resnet50, batch 32, 224×224, 1000 classes, fp32, SGD with momentum, 1 step. */
void cnn_defaults(cnn_config *c);
/* resnet18, resnet34, resnet50, resnet101, resnet152; false if unknown. */
bool cnn_preset(const char *name, cnn_config *c);
const char *cnn_preset_names(void);
sim_status cnn_validate(const cnn_config *c, sim_error *err);
/* Parameter tensors (state_dict order, buffers excluded); heap array or NULL. */
graph_param *cnn_params(const cnn_config *c, uint32_t *n);
/* The closed-form parameter count (see cnn.c). */
uint64_t cnn_param_count(const cnn_config *c);
sim_status cnn_generate(const cnn_config *c, synth_out *o, sim_error *err);

#endif
