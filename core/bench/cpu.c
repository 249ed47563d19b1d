/*
 * CPU family: the machine's raw integer speed, the stand-in for the MIPS ratings that
 * Ousterhout (1990) divided every result by ("MIPS-relative speed").
 *
 * cpu.integer runs a fixed, deterministic integer workload: a linear congruential
 * generator, shifts and xors, a branch that depends on the data, and a read-modify-write
 * of a 64-entry table that stays in L1.  Each iteration depends on the previous one (no
 * vectorisation, no hoisting), the table and the accumulator are consumed, so the
 * compiler cannot delete it.  It performs OPS_PER_ITER integer operations as written in
 * C; the rate is reported in millions of those operations per second.  That is not a
 * 1990 VAX-MIPS rating (those were the author's estimates) but it measures the same
 * thing between two of today's machines: how fast plain integer code runs, with no
 * system call and no memory traffic beyond L1.
 */
#include <stdint.h>
#include <string.h>

#include "../harness.h"

/* Counted in loop_integer below: mul, add (LCG); shift, xor (mix); shift, and, load,
 * add, store (table); and, compare/branch, add or sub (data-dependent branch). */
#define OPS_PER_ITER 12

struct int_state {
    uint64_t table[64];
};

static uint64_t loop_integer(void *arg, uint64_t n)
{
    struct int_state *st = arg;
    uint64_t x = 88172645463325252ULL, y = 0, z = 0;
    for (uint64_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        y ^= x >> 29;
        st->table[(x >> 58) & 63] += y;
        if (y & 1)
            z += x;
        else
            z -= y;
    }
    uint64_t acc = z ^ y;
    for (int k = 0; k < 64; k++)
        acc += st->table[k];
    return acc;
}

static int run_integer(struct om_ctx *ctx)
{
    struct int_state st;
    memset(&st, 0, sizeof st);
    om_note(ctx, "ops_per_iteration", "%d", OPS_PER_ITER);
    struct om_measure m = {.metric = "rate", .rate = OPS_PER_ITER * 1e3}; /* Mops/s */
    return om_measure_batches(ctx, loop_integer, &st, &m);
}

const struct om_bench om_family_cpu[] = {
    {"cpu.integer",
     "raw integer speed: a fixed LCG/xor/shift/table/branch loop, the stand-in for MIPS",
     "O90 T1 (MIPS ratings); osmeter", "quick,full,o90", {0.24, 0.067, 0.012}, run_integer,
     {OM_BATCH_PARAMS},
     {{"rate", "Mops/s", "higher", OM_POINT, NULL,
       "millions of C-level integer operations per second (12 per iteration)"}}},
    {0},
};
