// Decode helpers shared by the Leech GEMV templates: f16x2 arithmetic and the
// tensor-core step through PTX (no toolkit headers), and the class-table
// lookup that turns 3-bit levels into scaled f16 weights.
//
// Class-table entry (layouts/leech_vram/ctab.h), 16 bytes:
//   x: bytes |v0| |v1| |v2| |v3|   y: bytes |v4| 0 0 0x64
//   z: half2 (s, s)                w: half2 (-1024 s, -1024 s)
// PRMT with selector nibbles (la, 7, lb, 7) builds the half2
// (1024 + |v_la|, 1024 + |v_lb|) in one instruction; HFMA2 with (z, w)
// turns it into (|v_la| s, |v_lb| s), rounded once.
#pragma once
#include "lr_common.cuh"

LR_DEV u32 lr_hfma2(u32 a, u32 b, u32 c)
{
    u32 d;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

LR_DEV u32 lr_prmt(u32 a, u32 b, u32 sel)
{
    u32 d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}

LR_DEV u32 lr_pack_h2(float lo, float hi) { return (u32)lr_f2h(lo) | (u32)lr_f2h(hi) << 16; }

// D += A B, m16n8k16, f16 inputs, f32 accumulation.
LR_DEV void lr_mma16816(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// A register the compiler cannot fold back into an immediate: LOP3 takes one
// immediate, so (w & 0x0707) | 0x7070 costs two instructions with literals
// and one with both masks in registers.
LR_DEV u32 lr_opaque(u32 v)
{
    u32 r;
    asm volatile("mov.b32 %0, %1;" : "=r"(r) : "r"(v));
    return r;
}

LR_DEV u32 lr_and_or(u32 a, u32 m, u32 o)
{
    u32 d;
    asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(d) : "r"(a), "r"(m), "r"(o)); // (a & m) | o
    return d;
}

// One pair of weights from a 32-bit fragment word: 3-bit levels at bits LB
// and LB + 8, signs at bits 15 - SH and 31 - SH (SH = the left shift that
// brings them to 15 and 31). e = the block's class-table entry; m0707 and
// m7070 hold 0x0707 and 0x7070 (see lr_opaque).
template <int LB, int SH>
LR_DEV u32 lr_leech_pair(u32 w, uint4 e, u32 m0707, u32 m7070)
{
    const u32 sel = lr_and_or(w >> LB, m0707, m7070);
    const u32 h = lr_prmt(e.x, e.y, sel);
    const u32 v = lr_hfma2(h, e.z, e.w);
    return v ^ ((w << SH) & 0x80008000u);
}
