/*
 * QTest for the dma32-demo PCI device, part of dma32-demo-test
 *
 * The fuzzer's guard regions (RAM canaries).
 *
 * Copyright (c) 2026 The dma32-demo authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "dma32-demo-test.h"

/*
 * Guard regions around and between the fuzzer's RAM targets: before,
 * inside and after BUF_A and BUF_B, inside and after the 16 MiB above
 * 4 GiB, and below the window at the 2 GiB edge.  Each holds a seeded
 * pattern that no transfer may change: the fuzzer keeps every transfer it
 * writes and every ring it programs clear of them (guards_clear), and
 * aims a share of its transfers to end right before a guard or to start
 * right after one (guards_aim), where a transfer one byte too long or one
 * byte early lands in a guard.
 */
static const uint64_t guard_base[NR_GUARDS] = {
    BUF_A - GUARD_SIZE, BUF_A + 8 * MiB_, BUF_A + 16 * MiB_,
    BUF_B - GUARD_SIZE, BUF_B + 8 * MiB_, BUF_B + 16 * MiB_,
    HIGH + 8 * MiB_, HIGH + 16 * MiB_,
    2 * GiB_ - 64 * KiB_ - GUARD_SIZE,
};

uint64_t guard_addr(unsigned i)
{
    return guard_base[i];
}

void guards_fill(Guards *g, QTestState *qts, uint64_t mask, guint32 seed)
{
    GRand *r = g_rand_new_with_seed(seed);
    unsigned i, j;

    g->qts = qts;
    g->mask = mask;
    for (i = 0; i < NR_GUARDS; i++) {
        for (j = 0; j < GUARD_SIZE; j++) {
            g->pat[i][j] = g_rand_int(r);
        }
        qtest_memwrite(qts, guard_base[i], g->pat[i], GUARD_SIZE);
    }
    g_rand_free(r);
}

/*
 * Keep [*addr, *addr + *len) clear of the guards as the device sees it:
 * with @mask narrower than 64 bits (overflow=truncate) the upper address
 * bits are dropped and the range wraps to 0 at the mask.  A range that
 * starts before a guard is cut to end right before it, one that starts in
 * a guard moves to start right after it.  True if anything changed.
 */
bool guards_clear(const Guards *g, uint64_t *addr, uint32_t *len)
{
    bool changed = false;
    unsigned round, i;

    for (round = 0; round < 2 * NR_GUARDS && *len; round++) {
        uint64_t a = *addr & g->mask;
        uint64_t room = g->mask - a;        /* bytes after the first one */
        uint64_t first = room >= *len - 1 ? *len : room + 1;
        uint64_t wrapped = *len - first;
        bool moved = false;

        for (i = 0; i < NR_GUARDS && !moved; i++) {
            uint64_t gs = guard_base[i], ge = gs + GUARD_SIZE;

            if (a < ge && gs <= a + (first - 1)) {
                if (a < gs) {
                    *len = gs - a;
                } else {
                    *addr += ge - a;
                }
                moved = true;
            } else if (gs < wrapped) {
                *len = first + gs;
                moved = true;
            }
        }
        if (!moved) {
            break;
        }
        changed = true;
    }
    return changed;
}

/* An address for @len bytes that end right before a guard or start after */
uint64_t guards_aim(GRand *r, uint32_t len)
{
    uint64_t gs = guard_base[g_rand_int_range(r, 0, NR_GUARDS)];

    return g_rand_int_range(r, 0, 2) ? gs - len : gs + GUARD_SIZE;
}

/* The first guard whose pattern changed, or -1 */
int guards_check(const Guards *g)
{
    uint8_t buf[GUARD_SIZE];
    unsigned i;

    for (i = 0; i < NR_GUARDS; i++) {
        qtest_memread(g->qts, guard_base[i], buf, GUARD_SIZE);
        if (memcmp(buf, g->pat[i], GUARD_SIZE)) {
            return i;
        }
    }
    return -1;
}
