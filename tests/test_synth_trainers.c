/* Check suite for the trainers of `synth transformer --trainer` that reshape the step
 * itself: torchtitan (FSDP2 per block, graph.c rule 17; op-level and every-N-th-block
 * checkpointing, rule 18; the fp32 loss's backward), LitGPT (the chunked head and
 * loss) and Megatron-LM's Transformer Engine placeholders (rule 19). Each test builds a small llama whose every tensor divides by the shard count
 * and checks the bytes of the tags the rule writes, with the arithmetic in comments. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support/check_main.h"
#include "traces/synth/trainer.h"
#include "traces/synth/transformer.h"
#include "traces/trace.h"
#include "support/synth_file.h"

/* ---------------------------------------------------------------- helpers */

/* What one tag prefix did in a trace: its largest live sum, its allocations, their
 * bytes, and its live bytes when the mark `at` was written. */
typedef struct tag_scan {
    const char *prefix;
    const char *at; /* NULL: no mark */
    uint64_t peak, allocs, bytes, live_at;
    uint32_t streams; /* bit k: an allocation on stream k (k < 32) */
} tag_scan;

static bool has_prefix(const char *tag, const char *prefix)
{
    return tag && strncmp(tag, prefix, strlen(prefix)) == 0;
}

/* Generate c into a file, read it back and fill q[0..n). */
static void scan(const transformer_config *c, tag_scan *q, size_t n)
{
    synth_file f;
    synth_file_open(&f, c);
    sim_error err;
    sim_event_source src = trace_source(f.r);
    const uint64_t cap = 1 << 16;
    uint64_t *size = calloc(cap, sizeof *size);
    uint32_t *match = calloc(cap, sizeof *match); /* bit j: q[j]'s prefix */
    uint64_t live[8] = {0};
    ck_assert(n <= 8 && size && match);
    for (size_t j = 0; j < n; j++)
        q[j].peak = q[j].allocs = q[j].bytes = q[j].live_at = 0, q[j].streams = 0;
    sim_event ev;
    while (src.next(src.ctx, &ev, &err) == SIM_OK) {
        if (ev.op == SIM_OP_ALLOC) {
            ck_assert_uint_lt(ev.id, cap);
            size[ev.id] = ev.size;
            match[ev.id] = 0;
            for (size_t j = 0; j < n; j++)
                if (has_prefix(ev.tag, q[j].prefix)) {
                    match[ev.id] |= 1u << j;
                    live[j] += ev.size;
                    q[j].allocs++;
                    q[j].bytes += ev.size;
                    q[j].streams |= ev.stream < 32 ? 1u << ev.stream : 0;
                    q[j].peak = live[j] > q[j].peak ? live[j] : q[j].peak;
                }
        } else if (ev.op == SIM_OP_FREE) {
            for (size_t j = 0; j < n; j++)
                if (match[ev.id] & (1u << j))
                    live[j] -= size[ev.id];
        } else if (ev.op == SIM_OP_MARK) {
            for (size_t j = 0; j < n; j++)
                if (q[j].at && strcmp(ev.name, q[j].at) == 0)
                    q[j].live_at = live[j];
        }
    }
    synth_file_close(&f);
    free(size);
    free(match);
}

/* One prefix's scan. */
static tag_scan scan1(const transformer_config *c, const char *prefix, const char *at)
{
    tag_scan q = {.prefix = prefix, .at = at};
    scan(c, &q, 1);
    return q;
}

/* A small llama in bf16: 2 layers, h 512, 8 heads of 64, MLP 1024, vocabulary 1000,
 * 16 positions. Parameters: a block 4 x 512^2 (q, k, v, o) + 3 x 512 x 1024 (gate,
 * up, down) + 2 x 512 (norms) = 2,622,464; embeddings and lm_head 512,000 each, the
 * final norm 512; 6,269,440 in all, every one even. */
static transformer_config small_llama(void)
{
    transformer_config c;
    transformer_defaults(&c);
    ck_assert(transformer_preset("llama2-7b", &c));
    c.layers = 2;
    c.hidden = 512;
    c.heads = 8;
    c.kv_heads = 8;
    c.head_dim = 64;
    c.ffn = 1024;
    c.vocab = 1000;
    c.seq = 16;
    c.batch = 1;
    c.dtype = SYNTH_BF16;
    return c;
}

#define BLOCK_PARAMS 2622464u
#define MODEL_PARAMS 6269440u

/* What --trainer=torchtitan sets (cli/synth_llm.c from its table row), on dp ranks. */
static transformer_config titan(uint64_t dp)
{
    transformer_config c = small_llama();
    const trainer_traits *t = trainer_find("torchtitan");
    c.trainer = t->name;
    c.flash = t->flash;
    c.fused = t->fused_optimizer;
    c.loss_fp32 = t->loss_fp32;
    c.loss_bwd_input = t->loss_bwd_input;
    c.fsdp2 = t->fsdp2;
    c.zero = 3;
    c.reduce_bytes = 4;
    c.dp = dp;
    return c;
}

/* What --trainer=torchtitan-2024.12 adds: the root unit (embeddings, norm and lm_head) and
 * the last block kept after forward; FSDP's side streams (both torchtitan rows set them). */
static transformer_config titan2412(uint64_t dp)
{
    transformer_config c = titan(dp);
    const trainer_traits *t = trainer_find("torchtitan-2024.12");
    c.trainer = t->name;
    c.fused = t->fused_optimizer;
    c.fsdp_root = t->fsdp_root;
    c.fsdp_streams = t->fsdp_streams;
    return c;
}

GPUSIM_TCASE("trainers", 120, NULL, NULL);

/* ---------------------------------------------------------------- the table */

START_TEST(torchtitan_and_litgpt_should_be_rows_of_the_trainer_table_with_their_sources)
{
    const trainer_traits *t = trainer_find("torchtitan"), *l = trainer_find("litgpt");
    ck_assert_ptr_eq(t, trainer_get(TRAINER_TORCHTITAN));
    ck_assert_ptr_eq(l, trainer_get(TRAINER_LITGPT));
    /* torchtitan: FSDP2 with bf16 compute, the fused AdamW, SDPA, the fp32 loss, SelectiveAC */
    ck_assert(t->fsdp2 && t->bf16 && t->fused_optimizer && t->flash && t->loss_fp32 && t->loss_bwd_input);
    ck_assert(!t->mixed && !t->main_grads && !t->distributed_optimizer);
    ck_assert_str_eq(t->recompute, "op");
    ck_assert_ptr_nonnull(strstr(t->sources, "torchtitan/distributed/fsdp.py"));
    ck_assert_ptr_nonnull(strstr(t->sources, "activation_checkpoint.py"));
    ck_assert_ptr_nonnull(strstr(t->sources, "mixed_precision_reduce"));
    /* LitGPT: bf16-true, SDPA, the foreach AdamW, chunks of 128 */
    ck_assert(l->bf16 && l->flash && !l->fused_optimizer && !l->fsdp2 && !l->loss_fp32 && l->ce_chunked);
    ck_assert_uint_eq(l->lm_head_chunk, 128);
    ck_assert_ptr_null(l->recompute);
    ck_assert_ptr_nonnull(strstr(l->sources, "chunked_cross_entropy"));
    ck_assert_ptr_nonnull(strstr(l->sources, "lm_head_chunk_size=128"));
    ck_assert(l->lora_dropout && !t->lora_dropout);
    /* torchtitan of December 2024: the same with the root unit and the foreach AdamW; both
     * torchtitan rows put FSDP's buffers on its side streams */
    const trainer_traits *d = trainer_find("torchtitan-2024.12");
    ck_assert_ptr_eq(d, trainer_get(TRAINER_TORCHTITAN_2412));
    ck_assert(d->fsdp2 && d->bf16 && !d->fused_optimizer && d->flash && d->loss_fp32 && d->loss_bwd_input);
    ck_assert(d->fsdp_root && d->fsdp_streams && !t->fsdp_root && t->fsdp_streams);
    ck_assert_str_eq(d->recompute, "op");
    ck_assert_ptr_nonnull(strstr(d->sources, "9dec370"));
    ck_assert_ptr_nonnull(strstr(d->sources, "_root_post_backward_final_callback"));
    ck_assert_ptr_nonnull(strstr(t->sources, "129721"));
    ck_assert(!l->fsdp_root && !l->fsdp_streams);
    /* the others set none of it */
    for (size_t i = 0; i < TRAINER_TORCHTITAN; i++) {
        const trainer_traits *o = trainer_get(i);
        ck_assert(!o->fsdp2 && !o->bf16 && !o->recompute && !o->lm_head_chunk && !o->ce_chunked && !o->loss_bwd_input &&
                  !o->lora_dropout && !o->fsdp_root && !o->fsdp_streams);
    }
}
END_TEST

/* ---------------------------------------------------------------- torchtitan: FSDP2 */

START_TEST(fsdp2_should_keep_fp32_shards_and_gather_each_block_in_bf16)
{
    transformer_config c = titan(2);
    tag_scan q[] = {{.prefix = "weight_shard:"},
                    {.prefix = "weight:"},
                    {.prefix = "adam_m:", .at = "release"},
                    {.prefix = "fsdp_ag:L0."},
                    {.prefix = "unsharded:model.layers.0."}};
    scan(&c, q, 5);
    /* fp32 shards of half of every parameter: 6,269,440 / 2 x 4 B = 12,538,880 B; no full weight */
    ck_assert_uint_eq(q[0].bytes, (uint64_t)MODEL_PARAMS / 2 * 4);
    ck_assert_uint_eq(q[0].allocs, 2 + 9 * 2 + 1);
    ck_assert_uint_eq(q[1].allocs, 0);
    /* Adam's first moment on the shards in fp32, alive until the release */
    ck_assert_uint_eq(q[2].live_at, (uint64_t)MODEL_PARAMS / 2 * 4);
    /* block 0's all-gather: dp x its bf16 shards = 2,622,464 x 2 B = 5,244,928 B, once in
     * forward and once before its backward (prefetched); its unsharded parameters the same
     * bytes, copied out of it each time */
    ck_assert_uint_eq(q[3].allocs, 2);
    ck_assert_uint_eq(q[3].peak, (uint64_t)BLOCK_PARAMS * 2);
    ck_assert_uint_eq(q[4].allocs, 2 * 9);
    ck_assert_uint_eq(q[4].bytes, 2ull * BLOCK_PARAMS * 2);
}
END_TEST

START_TEST(fsdp2_should_keep_a_forward_all_gather_until_the_next_one_exists)
{
    transformer_config c = titan(2);
    /* forward keeps block 0's flat buffer until block 1's is allocated: 2 x 5,244,928 B
     * at once; backward frees each right after its copy-out, so never more than that */
    tag_scan q = scan1(&c, "fsdp_ag:", NULL);
    ck_assert_uint_eq(q.peak, 2ull * BLOCK_PARAMS * 2);
    /* forward gathers embeddings, L0, L1, head (4); backward L1, L0, embeddings (3): the
     * head's norm and lm_head stay unsharded from forward to their backward */
    ck_assert_uint_eq(q.allocs, 7);
    tag_scan h = scan1(&c, "unsharded:lm_head.weight", NULL);
    ck_assert_uint_eq(h.allocs, 1);
    ck_assert_uint_eq(h.bytes, 512000ull * 2);
    /* one shard: no all-gather buffer at all, the unsharded bf16 copies still made */
    c = titan(1);
    ck_assert_uint_eq(scan1(&c, "fsdp_ag:", NULL).allocs, 0);
    ck_assert_uint_eq(scan1(&c, "unsharded:model.layers.1.", NULL).bytes, 2ull * BLOCK_PARAMS * 2);
}
END_TEST

START_TEST(fsdp2_should_reduce_scatter_in_the_reduce_dtype_into_fp32_gradient_shards)
{
    transformer_config c = titan(2);
    tag_scan q[] = {{.prefix = "fsdp_rs:L1."},
                    {.prefix = "grad_shard:", .at = "optimizer 1"},
                    {.prefix = "grad:model.layers.1."},
                    {.prefix = "fsdp_rs:"}};
    scan(&c, q, 4);
    /* block 1's bf16 gradients (2,622,464 x 2 B) copied into an fp32 input: x 4 B = 10,489,856 B */
    ck_assert_uint_eq(q[0].bytes, (uint64_t)BLOCK_PARAMS * 4);
    ck_assert_uint_eq(q[2].bytes, (uint64_t)BLOCK_PARAMS * 2);
    /* one input in flight: the largest is a block's */
    ck_assert_uint_eq(q[3].peak, (uint64_t)BLOCK_PARAMS * 4);
    /* fp32 shards of every gradient at the optimizer: 6,269,440 / 2 x 4 B */
    ck_assert_uint_eq(q[1].live_at, (uint64_t)MODEL_PARAMS / 2 * 4);
    /* a bf16 reduce-scatter halves the input, the shards stay fp32 */
    c.reduce_bytes = 2;
    ck_assert_uint_eq(scan1(&c, "fsdp_rs:L1.", NULL).bytes, (uint64_t)BLOCK_PARAMS * 2);
    ck_assert_uint_eq(scan1(&c, "grad_shard:", "optimizer 1").live_at, (uint64_t)MODEL_PARAMS / 2 * 4);
}
END_TEST

START_TEST(the_december_2024_root_unit_should_hold_embeddings_and_head_through_backward)
{
    transformer_config c = titan2412(2);
    tag_scan q[] = {{.prefix = "fsdp_ag:embeddings."},
                    {.prefix = "fsdp_ag:L0."},
                    {.prefix = "fsdp_ag:L1."},
                    {.prefix = "unsharded:model.embed_tokens.weight", .at = "backward 1"},
                    {.prefix = "fsdp_rs:embeddings."},
                    {.prefix = "fsdp_rs:head."},
                    {.prefix = "unsharded:lm_head.weight", .at = "optimizer 1"},
                    {.prefix = "tmp:adam_denom"}};
    scan(&c, q, 8);
    /* one all-gather for the root before the embeddings run: dp x the bf16 shards of
     * embed_tokens, lm_head and the final norm = (512,000 + 512,000 + 512) x 2 B = 2,049,024 B,
     * and none in backward (the root is never resharded after forward) */
    ck_assert_uint_eq(q[0].allocs, 1);
    ck_assert_uint_eq(q[0].bytes, (512000ull + 512000 + 512) * 2);
    /* block 0 gathered in forward and again before its backward; block 1, the last, once */
    ck_assert_uint_eq(q[1].allocs, 2);
    ck_assert_uint_eq(q[2].allocs, 1);
    /* the embeddings stay gathered into backward: 512,000 x 2 B live at its first mark */
    ck_assert_uint_eq(q[3].live_at, 512000ull * 2);
    /* the root's gradients reduced once, at the end of backward, in fp32: 1,024,512 x 4 B;
     * the head has no reduce of its own */
    ck_assert_uint_eq(q[4].allocs, 1);
    ck_assert_uint_eq(q[4].bytes, (512000ull + 512000 + 512) * 4);
    ck_assert_uint_eq(q[5].allocs, 0);
    ck_assert_uint_eq(q[6].live_at, 0);
    /* AdamW foreach: one fp32 temporary per shard, 6,269,440 / 2 x 4 B in all */
    ck_assert_uint_eq(q[7].bytes, (uint64_t)MODEL_PARAMS / 2 * 4);
    /* the current row: embeddings their own unit, gathered again before their backward */
    c = titan(2);
    ck_assert_uint_eq(scan1(&c, "fsdp_ag:embeddings.", NULL).allocs, 2);
    ck_assert_uint_eq(scan1(&c, "fsdp_ag:embeddings.", NULL).bytes, 2 * 512000ull * 2);
    ck_assert_uint_eq(scan1(&c, "unsharded:model.embed_tokens.weight", "backward 1").live_at, 0);
}
END_TEST

START_TEST(fsdp2_side_streams_should_hold_the_all_gathers_and_one_reduce_output_per_unit)
{
    transformer_config c = titan(2);
    c.fsdp_streams = true;
    tag_scan q[] = {
        {.prefix = "fsdp_ag:"},    {.prefix = "fsdp_rs_out:L1."}, {.prefix = "fsdp_rs_out:", .at = "optimizer 1"},
        {.prefix = "grad_shard:"}, {.prefix = "fsdp_rs:"},        {.prefix = "unsharded:"}};
    scan(&c, q, 6);
    /* the flat all-gather buffers on the copy-in stream (1), the copies out on the default */
    ck_assert_uint_eq(q[0].streams, 1u << 1);
    ck_assert_uint_eq(q[5].streams, 1u << 0);
    /* block 1's reduce output on the reduce-scatter stream (2): its fp32 shard,
     * 2,622,464 / 2 x 4 B = 5,244,928 B, one allocation whose views are the gradient shards */
    ck_assert_uint_eq(q[1].allocs, 1);
    ck_assert_uint_eq(q[1].bytes, (uint64_t)BLOCK_PARAMS / 2 * 4);
    ck_assert_uint_eq(q[1].streams, 1u << 2);
    /* all units' outputs alive at the optimizer: 6,269,440 / 2 x 4 B, as the per-parameter
     * shards were; no per-parameter shard, and the reduce-scatter input on the default stream */
    ck_assert_uint_eq(q[2].live_at, (uint64_t)MODEL_PARAMS / 2 * 4);
    ck_assert_uint_eq(q[3].allocs, 0);
    ck_assert_uint_eq(q[4].streams, 1u << 0);
    /* off: everything on the default stream */
    c.fsdp_streams = false;
    ck_assert_uint_eq(scan1(&c, "fsdp_ag:", NULL).streams, 1u << 0);
}
END_TEST

START_TEST(fsdp2_with_pipeline_stages_should_not_reshard_after_forward)
{
    transformer_config c = titan(2);
    c.layers = 4;
    c.pp = 2;
    c.micro_batches = 1;
    /* torchtitan's "default" policy keeps every unit gathered from forward to backward
     * when pipelining: each block of stage 0 (ranks 0, 1) is gathered once per step */
    tag_scan q = scan1(&c, "fsdp_ag:L0.", NULL);
    ck_assert_uint_eq(q.allocs, 1);
    c.pp = 1;
    c.micro_batches = 0;
    ck_assert_uint_eq(scan1(&c, "fsdp_ag:L0.", NULL).allocs, 2);
}
END_TEST

START_TEST(fsdp2_should_be_refused_without_zero_3_or_with_fp32_masters)
{
    sim_error err;
    transformer_config c = titan(2);
    c.zero = 1;
    sim_error_clear(&err);
    ck_assert_int_eq(transformer_validate(&c, &err), SIM_EUSAGE);
    c = titan(2);
    c.precision = TRANSFORMER_MIXED;
    ck_assert_int_eq(transformer_validate(&c, &err), SIM_EUSAGE);
    c = titan(2);
    c.sac_op = true; /* the op policy is a checkpointing policy */
    ck_assert_int_eq(transformer_validate(&c, &err), SIM_EUSAGE);
}
END_TEST

/* ---------------------------------------------------------------- Megatron-LM: TE */

START_TEST(te_dummy_weight_gradients_should_be_one_per_fused_weight_shape_for_the_whole_run)
{
    transformer_config c = small_llama();
    c.precision = TRANSFORMER_MIXED;
    c.main_grads = true;
    c.te_dummy_wgrad = true;
    c.steps = 2;
    /* the small llama's fused TE weights, bf16: linear_qkv (512 + 2 x 512) x 512 = 786,432,
     * linear_proj 512 x 512 = 262,144, linear_fc1 2 x 1024 x 512 = 1,048,576, linear_fc2
     * 512 x 1024 = 524,288 elements: 2,621,440 x 2 B = 5,242,880 B, allocated once in the
     * first backward (two layers, two steps: still four) and alive at the release */
    tag_scan q[] = {{.prefix = "te_dummy_wgrad:", .at = "release"},
                    {.prefix = "te_dummy_wgrad:", .at = "backward 1"},
                    {.prefix = "te_dummy_wgrad:model.layers.1.mlp.down_proj", .at = "optimizer 1"}};
    scan(&c, q, 3);
    ck_assert_uint_eq(q[0].allocs, 4);
    ck_assert_uint_eq(q[0].bytes, 2621440ull * 2);
    ck_assert_uint_eq(q[0].live_at, 2621440ull * 2);
    ck_assert_uint_eq(q[1].live_at, 0); /* not before the first backward */
    /* the last layer's backward comes first: its down projection makes linear_fc2's */
    ck_assert_uint_eq(q[2].live_at, 524288ull * 2);
    /* the output layer is Megatron's own linear: a fresh placeholder of its shape, 1000 x 512
     * x 2 B = 1,024,000 B, in each step's head backward, freed at once */
    tag_scan t = scan1(&c, "tmp:wgrad_placeholder:lm_head.weight", NULL);
    ck_assert_uint_eq(t.allocs, 2);
    ck_assert_uint_eq(t.bytes, 2 * 1024000ull);
    ck_assert_uint_eq(t.peak, 1024000ull);
    /* tp 2: each rank's shards, half of each shape */
    c.tp = 2;
    c.sp = true;
    ck_assert_uint_eq(scan1(&c, "te_dummy_wgrad:", "release").live_at, 2621440ull);
    /* an MLP as wide as the attention (1024 -> 512): linear_fc2 is 512 x 512 like linear_proj,
     * one tensor for both: 786,432 + 262,144 + 524,288 elements, three tensors */
    c.tp = 1;
    c.sp = false;
    c.ffn = 512;
    tag_scan e = scan1(&c, "te_dummy_wgrad:", "release");
    ck_assert_uint_eq(e.allocs, 3);
    ck_assert_uint_eq(e.live_at, (786432ull + 262144 + 524288) * 2);
    /* off, or without the fp32 main-gradient buffer: none */
    c.te_dummy_wgrad = false;
    ck_assert_uint_eq(scan1(&c, "te_dummy_wgrad:", NULL).allocs, 0);
    ck_assert_uint_eq(scan1(&c, "tmp:wgrad_placeholder", NULL).allocs, 0);
    c.te_dummy_wgrad = true;
    c.main_grads = false;
    ck_assert_uint_eq(scan1(&c, "te_dummy_wgrad:", NULL).allocs, 0);
}
END_TEST

/* ---------------------------------------------------------------- torchtitan: checkpointing */

START_TEST(the_op_policy_should_keep_sdpa_and_every_other_matmul_through_forward)
{
    transformer_config c = small_llama();
    c.flash = true;
    c.checkpointing = true;
    const uint64_t full = scan1(&c, "act:L", "backward 1").live_at;
    c.sac_op = true;
    const uint64_t op = scan1(&c, "act:L", "backward 1").live_at;
    /* per block, beyond its output: q 16 x 512 x 2 = 16,384, v 16,384, the context
     * 16,384, the logsumexp 8 x 16 x 4 = 512, gate 16 x 1024 x 2 = 32,768 and down's
     * output 16,384: 98,816 B; two blocks 197,632 B */
    ck_assert_uint_eq(op - full, 2 * 98816u);
    /* recomputation makes only what forward dropped: q, v, gate, down once each */
    tag_scan q[] = {{.prefix = "act:L0.q"}, {.prefix = "act:L0.k"}, {.prefix = "act:L0.down"}};
    scan(&c, q, 3);
    ck_assert_uint_eq(q[0].allocs, 1 + 2); /* q; q_rot twice (forward, recompute) */
    ck_assert_uint_eq(q[1].allocs, 2 + 2); /* k and k_rot both recomputed */
    ck_assert_uint_eq(q[2].allocs, 1);
}
END_TEST

START_TEST(layer_checkpointing_every_second_block_should_keep_half_the_blocks_whole)
{
    transformer_config c = small_llama();
    c.layers = 4;
    const uint64_t none = scan1(&c, "act:", "backward 1").live_at;
    c.checkpointing = true;
    const uint64_t all = scan1(&c, "act:", "backward 1").live_at;
    c.ckpt_every = 2;
    const uint64_t half = scan1(&c, "act:", "backward 1").live_at;
    /* blocks 2 and 4 (L1, L3) keep their output only, L0 and L2 everything: with E the
     * embeddings and head, F a whole block and O an output, none = E + 4F, all = E + 4O,
     * every second = E + 2F + 2O = (none + all) / 2 */
    ck_assert_uint_lt(all, none);
    ck_assert_uint_eq(2 * half, none + all);
    /* L1 is recomputed in backward, L0 is not */
    tag_scan q[] = {{.prefix = "act:L1.silu"}, {.prefix = "act:L0.silu"}};
    scan(&c, q, 2);
    ck_assert_uint_eq(q[0].allocs, 2);
    ck_assert_uint_eq(q[1].allocs, 1);
}
END_TEST

START_TEST(the_fp32_loss_backward_should_hold_the_gradient_of_its_input_too)
{
    transformer_config c = titan(1);
    /* cross_entropy over logits.float(): 16 x 1000 x 4 = 64,000 B per tensor; its backward
     * holds the saved log-softmax, the gradient of it and the gradient of its input */
    tag_scan q[] = {{.prefix = "tmp:head.log_softmax_input_grad"},
                    {.prefix = "agrad:head.log_softmax"},
                    {.prefix = "act:head.log_softmax"}};
    scan(&c, q, 3);
    ck_assert_uint_eq(q[0].bytes, 64000u);
    ck_assert_uint_eq(q[1].bytes, 64000u);
    ck_assert_uint_eq(q[2].bytes, 64000u);
    c.loss_bwd_input = false;
    ck_assert_uint_eq(scan1(&c, "tmp:head.log_softmax_input_grad", NULL).allocs, 0);
}
END_TEST

/* ---------------------------------------------------------------- LitGPT */

/* What --trainer=litgpt sets, at 512 positions (four chunks of 128). */
static transformer_config litgpt(bool lora)
{
    transformer_config c = small_llama();
    const trainer_traits *l = trainer_find("litgpt");
    c.trainer = l->name;
    c.flash = l->flash;
    c.ce_chunked = l->ce_chunked;
    c.seq = 512;
    if (lora) {
        c.lora_rank = 8;
        c.lora_targets = LORA_Q | LORA_V;
        c.lm_head_chunk = l->lm_head_chunk;
        c.lora_dropout = l->lora_dropout;
    }
    return c;
}

START_TEST(litgpts_lora_head_should_run_backward_one_chunk_of_logits_at_a_time)
{
    transformer_config c = litgpt(true);
    tag_scan q[] = {{.prefix = "act:head.logits", .at = "backward 1"},
                    {.prefix = "act:head.log_softmax", .at = "backward 1"},
                    {.prefix = "agrad:head.log_softmax"},
                    {.prefix = "tmp:head.logits_chunk_grad"},
                    {.prefix = "tmp:head.logits"}};
    scan(&c, q, 5);
    /* the list of logits: 512 x 1000 x 2 B = 1,024,000 B, held by the loop into backward,
     * and the chunks' log-softmax in bf16, as many bytes */
    ck_assert_uint_eq(q[0].live_at, 1024000u);
    ck_assert_uint_eq(q[1].live_at, 1024000u);
    /* one chunk's gradients at a time: 128 x 1000 x 2 = 256,000 B each */
    ck_assert_uint_eq(q[2].peak, 256000u);
    ck_assert_uint_eq(q[3].peak, 256000u);
    /* the only tmp:head.logits* are the chunks' gradients: the logits are kept, not a temporary */
    ck_assert_uint_eq(q[4].allocs, q[3].allocs);
}
END_TEST

START_TEST(litgpts_full_finetuning_should_gather_the_chunks_gradients_for_the_whole_logits)
{
    transformer_config c = litgpt(false);
    tag_scan q[] = {{.prefix = "agrad:head.logits"},
                    {.prefix = "agrad:head.log_softmax"},
                    {.prefix = "tmp:head.logits_chunk_grad"},
                    {.prefix = "act:head.logits", .at = "backward 1"}};
    scan(&c, q, 4);
    /* the unchunked head: the chunks' gradients (1,024,000 B together) and their
     * concatenation for the logits (1,024,000 B) while the logits live */
    ck_assert_uint_eq(q[0].bytes, 1024000u);
    ck_assert_uint_eq(q[1].bytes, 1024000u);
    ck_assert_uint_eq(q[2].allocs, 0);
    ck_assert_uint_eq(q[3].live_at, 1024000u);
}
END_TEST

START_TEST(litgpts_lora_dropout_should_save_a_mask_and_an_output_per_adapted_input)
{
    transformer_config c = litgpt(true);
    /* q and v share the fused qkv projection's one dropout of the block's normed input:
     * a bool mask of 512 x 512 = 262,144 B and the bf16 output, 524,288 B, per block */
    tag_scan q[] = {{.prefix = "act:L0.lora_dropout_mask"}, {.prefix = "act:L0.lora_dropout", .at = "backward 1"},
                    {.prefix = "act:L1.lora_dropout_mask", .at = "backward 1"}};
    scan(&c, q, 3);
    ck_assert_uint_eq(q[0].allocs, 1);
    ck_assert_uint_eq(q[0].bytes, 262144u);
    ck_assert_uint_eq(q[1].live_at, 262144u + 524288u); /* the prefix holds the mask too */
    ck_assert_uint_eq(q[2].live_at, 262144u);
    /* every projection adapted: qkv, o (input 512 wide), gate and up (512), down (1024): 5 masks
     * of 512 x (512 + 512 + 512 + 512 + 1024) = 1,572,864 B */
    c.lora_targets = LORA_Q | LORA_K | LORA_V | LORA_O | LORA_GATE | LORA_UP | LORA_DOWN;
    tag_scan m = scan1(&c, "act:L0.lora_dropout_mask", NULL);
    ck_assert_uint_eq(m.allocs, 5);
    ck_assert_uint_eq(m.bytes, 512u * (512 + 512 + 512 + 512 + 1024));
    /* off: none */
    c.lora_dropout = false;
    ck_assert_uint_eq(scan1(&c, "act:L0.lora_dropout", NULL).allocs, 0);
}
END_TEST

START_TEST(the_rank_closed_form_should_follow_fsdp2_and_the_op_policy)
{
    transformer_config c = titan(2);
    transformer_rank_estimate r;
    transformer_estimate_rank(&c, &r);
    /* fp32 shards: 6,269,440 / 2 x 4 B = 12,538,880 B of weights and of gradients, Adam's two
     * moments twice that */
    ck_assert_uint_eq(r.optimizer.weights, (uint64_t)MODEL_PARAMS / 2 * 4);
    ck_assert_uint_eq(r.optimizer.grads, (uint64_t)MODEL_PARAMS / 2 * 4);
    ck_assert_uint_eq(r.optimizer.optimizer, 2ull * MODEL_PARAMS / 2 * 4);
    /* at 512 positions (activations outweigh the end of backward) the op policy keeps, per
     * block beyond full checkpointing, q 512 x 512 x 2 = 524,288, v 524,288, the context
     * 524,288, the logsumexp 8 x 512 x 4 = 16,384, gate 512 x 1024 x 2 = 1,048,576 and down's
     * output 524,288: 3,162,112 B; the block recomputed in backward brings back only the
     * rest, so two blocks hold (2 - 1) x 3,162,112 B more than full checkpointing */
    c.seq = 512;
    c.checkpointing = true;
    transformer_rank_estimate full, op;
    transformer_estimate_rank(&c, &full);
    c.sac_op = true;
    transformer_estimate_rank(&c, &op);
    ck_assert_uint_gt(full.fwd_bwd.activations, 0);
    ck_assert_uint_eq(op.fwd_bwd.activations - full.fwd_bwd.activations, 3162112u);
    /* the fp32 loss: three b·s·V·4 tensors in the head's backward, not two: 512 x 1000 x 4 B */
    c.loss_bwd_input = false;
    transformer_rank_estimate two;
    transformer_estimate_rank(&c, &two);
    ck_assert_uint_eq(op.fwd_bwd.activations - two.fwd_bwd.activations, 512u * 1000 * 4);
}
END_TEST
