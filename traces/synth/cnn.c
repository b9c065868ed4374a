/* ResNet training/inference trace generator (torchvision ResNet v1.5: the stride
 * of a downsampling bottleneck sits on its 3×3 conv).
 *
 * Memory model (on top of graph.c's step rules; e = bytes per element, B batch,
 * C channels, h×w the feature map):
 *  - Weights per conv (no bias) and per BatchNorm (weight, bias); BatchNorm buffers
 *    running_mean and running_var (C·e) and num_batches_tracked (8 bytes).
 *  - Stem segment: the input images [B,3,S,S] and labels [B] int64, conv1 output,
 *    BN saved mean/invstd (2·C fp32), BN output (ReLU in place keeps it), max-pool
 *    output and its int64 indices.
 *  - Each block: per conv its output (saved by the BN), the BN statistics and the
 *    BN output (saved by the next conv and the in-place ReLU); the last BN's output
 *    and the downsample branch's BN output are temporaries that die when the
 *    residual sum exists. torchvision adds in place (out += identity); we write the
 *    sum as a new buffer that replaces the last BN's output, which costs one
 *    feature map for an instant.
 *  - Head: average-pool output [B,C], fc output [B,classes], log-softmax, loss.
 *  - cuDNN workspaces are not modelled (they depend on the algorithm cuDNN picks).
 *
 * Parameter count, ResNet-50 (conv weights k·k·in·out, BN 2·C):
 *   stem 9,408 + 128; layer1 215,808; layer2 1,219,584; layer3 7,098,368;
 *   layer4 14,964,736; fc 2048·1000 + 1000 = 2,049,000  → 25,557,032.
 *   e.g. layer1 block 1: 64·64 + 128 + 9·64·64 + 128 + 64·256 + 512
 *   + downsample 64·256 + 512 = 75,008; blocks 2-3: 70,400 each. */
#include "cnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/grow.h"

#define CNN_MAX_BLOCKS 64

void cnn_defaults(cnn_config *c)
{
    memset(c, 0, sizeof *c);
    c->depth = 50;
    c->batch = 32;
    c->image = 224;
    c->classes = 1000;
    c->dtype = SYNTH_FP32;
    c->optimizer = SYNTH_MOMENTUM;
    c->steps = 1;
    c->seed = 1;
}

bool cnn_preset(const char *name, cnn_config *c)
{
    static const struct {
        const char *name;
        uint32_t depth;
    } P[] = {{"resnet18", 18}, {"resnet34", 34}, {"resnet50", 50}, {"resnet101", 101}, {"resnet152", 152}};
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++)
        if (strcmp(name, P[i].name) == 0) {
            c->depth = P[i].depth;
            return true;
        }
    return false;
}

const char *cnn_preset_names(void)
{
    return "resnet18, resnet34, resnet50, resnet101, resnet152";
}

sim_status cnn_validate(const cnn_config *c, sim_error *err)
{
    if (c->depth != 18 && c->depth != 34 && c->depth != 50 && c->depth != 101 && c->depth != 152)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "unknown ResNet depth %u", c->depth);
    if (c->batch == 0 || c->batch > (1u << 20))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--batch must be between 1 and 1048576");
    if (c->image < 32 || c->image > 16384)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--image must be between 32 and 16384 pixels");
    if (c->classes == 0 || c->classes > (1u << 24))
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--classes must be between 1 and 16777216");
    if (c->steps == 0)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "--steps must be at least 1");
    if ((double)c->batch * 64.0 * (double)c->image * (double)c->image * 8.0 > 9.0e15)
        return sim_error_set(err, SIM_EUSAGE, NULL, 0, 0, "a tensor of this shape would exceed 2^53 bytes");
    return SIM_OK;
}

/* ---------------------------------------------------------------- network */

typedef struct block {
    uint64_t in_c, width, out_c, stride, hw_in, hw_out;
    bool down;
    uint32_t p0;          /* first parameter of the block */
    char label[32];
} block;

typedef struct net {
    const cnn_config *c;
    uint64_t e;
    bool bottleneck;
    uint32_t n_blocks;
    block b[CNN_MAX_BLOCKS];
    uint64_t stem_hw, pool_hw, final_c;
    uint32_t fc_p0;
    graph_param *params, *buffers;
    uint32_t n_params, n_buffers, cap_params, cap_buffers;
    bool oom;
} net;

static void push(net *n, bool buffer, const char *prefix, const char *what, uint64_t numel, uint32_t elem_bytes)
{
    graph_param **arr = buffer ? &n->buffers : &n->params;
    uint32_t *len = buffer ? &n->n_buffers : &n->n_params, *cap = buffer ? &n->cap_buffers : &n->cap_params;
    if (n->oom)
        return;
    if (!SIM_GROW(*arr, *len + 1, *cap)) {
        n->oom = true;
        return;
    }
    graph_param *p = &(*arr)[(*len)++];
    *p = (graph_param){0};
    snprintf(p->name, sizeof p->name, "%s%s", prefix, what);
    p->numel = numel;
    p->elem_bytes = elem_bytes;
}

static void conv(net *n, const char *prefix, const char *name, uint64_t k, uint64_t in, uint64_t out)
{
    char w[40];
    snprintf(w, sizeof w, "%s.weight", name);
    push(n, false, prefix, w, k * k * in * out, 0);
}

static void bn(net *n, const char *prefix, const char *name, uint64_t ch)
{
    static const char *const P[] = {"weight", "bias"};
    static const char *const B[] = {"running_mean", "running_var"};
    char w[48];
    for (int i = 0; i < 2; i++) {
        snprintf(w, sizeof w, "%s.%s", name, P[i]);
        push(n, false, prefix, w, ch, 0);
    }
    for (int i = 0; i < 2; i++) {
        snprintf(w, sizeof w, "%s.%s", name, B[i]);
        push(n, true, prefix, w, ch, 0);
    }
    snprintf(w, sizeof w, "%s.num_batches_tracked", name);
    push(n, true, prefix, w, 1, 8);
}

static uint64_t out_hw(uint64_t hw, uint64_t stride)
{
    return (hw - 1) / stride + 1;
}

static bool net_build(net *n, const cnn_config *c)
{
    memset(n, 0, sizeof *n);
    n->c = c;
    n->e = synth_dtype_bytes(c->dtype);
    static const uint32_t BLOCKS[5][4] = {{2, 2, 2, 2}, {3, 4, 6, 3}, {3, 4, 6, 3}, {3, 4, 23, 3}, {3, 8, 36, 3}};
    uint32_t row = c->depth == 18 ? 0 : c->depth == 34 ? 1 : c->depth == 50 ? 2 : c->depth == 101 ? 3 : 4;
    n->bottleneck = c->depth >= 50;
    const uint64_t expansion = n->bottleneck ? 4 : 1;
    conv(n, "", "conv1", 7, 3, 64);
    bn(n, "", "bn1", 64);
    n->stem_hw = out_hw(c->image, 2);
    n->pool_hw = out_hw(n->stem_hw, 2);
    uint64_t in_c = 64, hw = n->pool_hw;
    for (uint32_t s = 0; s < 4; s++) {
        const uint64_t width = 64u << s;
        for (uint32_t k = 0; k < BLOCKS[row][s]; k++) {
            block *b = &n->b[n->n_blocks++];
            b->in_c = in_c;
            b->width = width;
            b->out_c = width * expansion;
            b->stride = (s > 0 && k == 0) ? 2 : 1;
            b->hw_in = hw;
            b->hw_out = out_hw(hw, b->stride);
            b->down = b->stride != 1 || in_c != b->out_c;
            b->p0 = n->n_params;
            snprintf(b->label, sizeof b->label, "layer%u.%u", s + 1, k);
            char prefix[40];
            snprintf(prefix, sizeof prefix, "%s.", b->label);
            if (n->bottleneck) {
                conv(n, prefix, "conv1", 1, in_c, width);
                bn(n, prefix, "bn1", width);
                conv(n, prefix, "conv2", 3, width, width);
                bn(n, prefix, "bn2", width);
                conv(n, prefix, "conv3", 1, width, b->out_c);
                bn(n, prefix, "bn3", b->out_c);
            } else {
                conv(n, prefix, "conv1", 3, in_c, width);
                bn(n, prefix, "bn1", width);
                conv(n, prefix, "conv2", 3, width, width);
                bn(n, prefix, "bn2", width);
            }
            if (b->down) {
                conv(n, prefix, "downsample.0", 1, in_c, b->out_c);
                bn(n, prefix, "downsample.1", b->out_c);
            }
            in_c = b->out_c;
            hw = b->hw_out;
        }
    }
    n->final_c = in_c;
    n->fc_p0 = n->n_params;
    push(n, false, "", "fc.weight", in_c * n->c->classes, 0);
    push(n, false, "", "fc.bias", n->c->classes, 0);
    return !n->oom;
}

static void net_release(net *n)
{
    free(n->params);
    free(n->buffers);
}

graph_param *cnn_params(const cnn_config *c, uint32_t *count)
{
    net n;
    if (!net_build(&n, c)) {
        net_release(&n);
        return NULL;
    }
    free(n.buffers);
    *count = n.n_params;
    return n.params;
}

uint64_t cnn_param_count(const cnn_config *c)
{
    /* stem conv 7·7·3·64 + BN 2·64; per block as below; fc in·classes + classes */
    uint64_t total = 7 * 7 * 3 * 64 + 2 * 64;
    static const uint32_t BLOCKS[5][4] = {{2, 2, 2, 2}, {3, 4, 6, 3}, {3, 4, 6, 3}, {3, 4, 23, 3}, {3, 8, 36, 3}};
    uint32_t row = c->depth == 18 ? 0 : c->depth == 34 ? 1 : c->depth == 50 ? 2 : c->depth == 101 ? 3 : 4;
    const bool bottleneck = c->depth >= 50;
    uint64_t in = 64;
    for (uint32_t s = 0; s < 4; s++) {
        const uint64_t w = 64u << s, out = bottleneck ? 4 * w : w;
        for (uint32_t k = 0; k < BLOCKS[row][s]; k++) {
            if (bottleneck)
                total += in * w + 2 * w + 9 * w * w + 2 * w + w * out + 2 * out;
            else
                total += 9 * in * w + 2 * w + 9 * w * w + 2 * w;
            if ((s > 0 && k == 0) || in != out)
                total += in * out + 2 * out;
            in = out;
        }
    }
    return total + in * c->classes + c->classes;
}

/* ---------------------------------------------------------------- segments */

#define K(name, bytes, grad, p0, pn) graph_seg_add(s, name, bytes, true, grad, p0, pn)

static void build_segment(const void *ctx, uint32_t i, graph_seg *s)
{
    const net *n = ctx;
    const cnn_config *c = n->c;
    const uint64_t e = n->e, B = c->batch;
    s->n = 0;
    if (i == 0) {
        snprintf(s->label, sizeof s->label, "stem");
        const uint64_t h1 = n->stem_hw * n->stem_hw, h2 = n->pool_hw * n->pool_hw;
        K("images", B * 3 * c->image * c->image * e, false, 0, 0);
        K("labels", B * 8, false, 0, 0);
        K("conv1", B * 64 * h1 * e, true, 0, 1);
        K("bn1_stats", 2 * 64 * 4, false, 0, 0);
        K("bn1", B * 64 * h1 * e, true, 1, 2);
        K("maxpool", B * 64 * h2 * e, true, 0, 0);
        K("maxpool_indices", B * 64 * h2 * 8, false, 0, 0);
        return;
    }
    if (i == n->n_blocks + 1) {
        snprintf(s->label, sizeof s->label, "head");
        K("avgpool", B * n->final_c * e, true, 0, 0);
        K("fc", B * c->classes * e, true, n->fc_p0, 2);
        K("log_softmax", B * c->classes * e, true, 0, 0);
        K("loss", e, false, 0, 0);
        return;
    }
    const block *b = &n->b[i - 1];
    snprintf(s->label, sizeof s->label, "%s", b->label);
    const uint64_t fin = B * b->hw_in * b->hw_in * e, fout = B * b->hw_out * b->hw_out * e;
    const uint64_t w = b->width, o = b->out_c;
    /* params per conv+bn unit: conv.weight, bn.weight, bn.bias */
    uint32_t p = b->p0, last_bn;
    if (n->bottleneck) {
        K("conv1", w * fin, true, p, 1);
        K("bn1_stats", 2 * w * 4, false, 0, 0);
        K("bn1", w * fin, true, p + 1, 2);
        K("conv2", w * fout, true, p + 3, 1);
        K("bn2_stats", 2 * w * 4, false, 0, 0);
        K("bn2", w * fout, true, p + 4, 2);
        K("conv3", o * fout, true, p + 6, 1);
        K("bn3_stats", 2 * o * 4, false, 0, 0);
        last_bn = graph_seg_add(s, "bn3", o * fout, false, false, 0, 0);
        p += 9;
    } else {
        K("conv1", w * fout, true, p, 1);
        K("bn1_stats", 2 * w * 4, false, 0, 0);
        K("bn1", w * fout, true, p + 1, 2);
        K("conv2", o * fout, true, p + 3, 1);
        K("bn2_stats", 2 * o * 4, false, 0, 0);
        last_bn = graph_seg_add(s, "bn2", o * fout, false, false, 0, 0);
        p += 6;
    }
    uint32_t ds_bn = GRAPH_SEG_MAX;
    if (b->down) {
        /* downsample.0.weight, downsample.1.weight, .bias: contiguous at p */
        K("downsample_conv", o * fout, true, p, 3);
        K("downsample_bn_stats", 2 * o * 4, false, 0, 0);
        ds_bn = graph_seg_add(s, "downsample_bn", o * fout, false, false, 0, 0);
    }
    /* the last BN's gradients appear at the residual sum, its output */
    uint32_t sum = K("residual", o * fout, true, n->bottleneck ? b->p0 + 7 : b->p0 + 4, 2);
    s->e[last_bn].until = sum;
    if (ds_bn < GRAPH_SEG_MAX)
        s->e[ds_bn].until = sum;
}

#undef K

sim_status cnn_generate(const cnn_config *c, synth_out *o, sim_error *err)
{
    sim_status st = cnn_validate(c, err);
    if (st != SIM_OK)
        return st;
    net *n = malloc(sizeof *n);
    if (n == NULL || !net_build(n, c)) {
        if (n)
            net_release(n);
        free(n);
        return sim_error_set(err, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    graph_model m = {
        .params = n->params,
        .n_params = n->n_params,
        .buffers = n->buffers,
        .n_buffers = n->n_buffers,
        .n_segments = n->n_blocks + 2,
        .build = build_segment,
        .ctx = n,
        .elem_bytes = n->e,
        .optimizer = c->optimizer,
        .steps = c->steps,
        .inference = c->inference,
        .checkpointing = c->checkpointing,
        .keep_live = c->keep_live,
        .seed = c->seed,
    };
    st = graph_generate(&m, o, err);
    net_release(n);
    free(n);
    return st;
}
