// Leech Planes14S GEMV, batch 1: y = W x over layouts/leech_vram/p14s.h (LR_C3: its 3-bit form, p14s_c3.h).
// Tensor cores do the multiply-adds (mma.m16n8k16, W as A decoded in
// registers, x as B, f32 accumulation). Per two pairs of weights: one LOP3
// builds the PRMT selectors (8, cA, 8, cB) of both (PRMT reads the low 16
// bits; the second pair's is sel >> 16), and per pair one PRMT picks the
// two signed f16 high bytes from the class-table entry's pool: about 0.85
// ALU-pipe instructions per weight, the resource that limits Planes14. The block scales are not applied per
// weight: B's eight columns are the eight block slots of the super-chunk
// (lane (g, q) supplies its x in column g only where g is its block, zeros
// elsewhere), so C[row][slot] is the row's unscaled dot over one block, and
// one FFMA per (row, block) applies the entry's f32 scale once per segment.
// Measured: 276 -> 245 instructions per segment and lane (the 48 HMUL2 of
// per-pair scaling gone), and exact v s products instead of f16(v s); then
// 245 -> 221 with the shared selectors (one LOP3 per two pairs instead of
// one per pair): 14B layer 85.1 -> 82.7 us on the H200.
// The layout permutes k inside a 192-column super-chunk so lane q owns
// blocks 2q and 2q+1: a lane reads 4 class-table entries per segment, and
// its B fragment is 8 consecutive columns of x (f16, natural order, shared
// memory). A CTA takes batches of LR_RG row groups of 16 rows (batch
// blockIdx.x, then every gridDim.x-th: a grid smaller than the batch count
// is persistent and stages the class table and x once for many batches);
// its warps split the super-chunks and reduce through shared memory; then
// all rows of the batch at once (templates/gemv_rows_epilogue.cuh) add
// their exceptions (values the pool cannot hold exactly), the row scale and
// the dense f16 tail.
// LR_BAL (the most row groups a CTA gets; one CTA per SM, the host plans
// the grid): the balanced split, below at its loop; LR_SPLIT: over
// segments, a row group shared by two CTAs (LR_LATE, LR_LATEW: the grid's
// last CTAs a smaller share, split_start); LR_ILV: the CTA's segments
// dealt round-robin to its warps instead of in contiguous runs. (Nsight
// Compute at a791320 has the split drawing less from DRAM than warp groups
// with every SM busy and balanced. Not the cure, measured and removed: a
// dynamic hand-out of batches, 02db962; each CTA starting its walk at its
// own point of its range, f851ed0, 14B down 20.26 us against 20.24, gate|up
// 34.15 against 33.62; the segments stored in the warp groups' walk order
// so the grid reads one window at a time, 433b397, down 20.24 against
// 20.01, o 9.12 against 9.27, loads-only down 15.92 against 15.53;
// bench/results/h200_tune_leech_p14s.csv. A pure stream over one
// contiguous range per SM does run 6% below a grid-stride one,
// h200_stream_ranges.csv.) Measured
// (c352ca4, 324c9dc): both together 14B gate|up 33.64 us against 34.34
// with whole row groups, gate 20.49 against 21.25; down still 21.10
// against 20.52 with warp groups (its loads-only control 17.4 against
// 15.9: lost on the memory side, cause not found). Measured (ba009a8,
// dd97e2e, b411ff0): gate|up 34.09 us against 35.42 in groups, 32B gate|up
// 48.80 against 52.19; slower on down, q|k|v and o (whole row groups per
// CTA still decide there). LR_EPF works with it (no faster: 34.62 / 34.53).
// Specialization: LR_ROWS, LR_COLS, LR_THREADS, LR_RG, LR_NTAB,
// LR_PREFETCH (0 = load a segment when needed, 1 or 2: the segments that
// many steps ahead are in flight in registers while this one decodes),
// LR_NACC (accumulator chains), LR_MINB (CTAs per SM the registers must
// allow), LR_SHR (1 = the right shifts of the code words as IMAD.HI on the
// FMA pipe instead of SHF on the ALU pipe), LR_XW (1 = x staged per warp at
// the first visit of each super-chunk, its loads issued with the segment's:
// no CTA-wide prologue pass over all of x and no barrier on it), LR_EPF (1 =
// the row epilogue's scale, exception range and tail term loaded, and its
// exception lists prefetched into L2, before the main loop (lr_rows_ahead),
// so a CTA does not end on three dependent memory latencies; needs one
// thread per row of a batch (of a group's, with warp groups), else off).
// LR_GROUPS (1 = one row-group batch per CTA at a time): the CTA's warps
// form that many independent groups of LR_THREADS / 32 / LR_GROUPS warps,
// each working its own batches (batch blockIdx.x * LR_GROUPS + group, then
// every gridDim.x * LR_GROUPS-th) with its own reduction buffer and named
// barrier; the class table and x are staged once per CTA for all of them
// (x in the prologue: no xw; with LR_EPF each group fetches its batch's row
// end ahead into its own words, eleventh session). Measured (14B sweeps at a65ca43):
// gate|up 35.42 us against 36.62, down 20.67 against 22.07. Eight
// interleaved copies of the class table, lane l reading copy l % 8 (no bank
// conflicts in the table's LDS.128, 40 of a segment's ~70 shared-memory
// wavefronts before; 77 KB, so only with one such CTA per SM), were slower
// (gate|up 36.16 against 35.42: the conflicts cost wavefronts, not time)
// and were removed after 0d79cb3; rebuilt for the 3-bit form by mistake
// (`trep`, 0cf61f0, thirtieth session) they were slower again: conflicts
// 1.58 -> 0.22 million on the 14B gate|up, its short-scoreboard stalls
// turned into long-scoreboard ones (waits for the next segment), gate|up
// 27.68 -> 27.81 us, layer + PDL 60.4 -> 63.1, engine 342.8 -> 338.5 tok/s.
// So were the ping-pong segment registers
// (the loop unrolled by two, the next segment alternating between two
// register sets instead of 14 moves: 2.05 -> 1.92 instructions per weight
// but gate|up 35.51 us against 35.40, gate 25.01 / 24.74, down 21.12 /
// 20.69 at 6b172ee), after 5ecfd2a.
// LR_LOADONLY = 1 is a benchmark control, not a GEMV: the same loads,
// geometry, staging and reduction, but no decode, no mma and no row
// epilogue; y[row] = the number of set bits in its row group's segments
// (exact in f32). Its time is what this access pattern costs without the
// decode (kernels/gemv_leech_p14s.c, arm leech_p14s_loads).
// LR_DECODEONLY = 1 is the other control: the whole GEMV, but every row
// group reads row group 0's segments (SC * 1792 bytes, L2-resident after the
// first CTAs), so the weight stream costs no DRAM time; with a layout whose
// row groups all hold row group 0's codes it computes that layout's GEMV
// exactly (arm leech_p14s_decode). Its time is the decode's without the
// stream; beside leech_p14s_loads it tells how far the two overlap (its
// main loop: 2.10 instructions per weight against the GEMV's 2.19, the row
// group's address gone; 80 registers against 79, gate|up spec;
// bench/results/sass_instr_per_weight.csv).
// LR_DECODEONLY = 2, the third control (3-bit form only): the weights at
// shared-memory latency. Each warp loads its first segment once and keeps a
// copy in shared memory at byte LR_SEGSM (1,344 bytes per warp); every
// later step reads that copy with the same four loads as a global segment
// (ld.volatile.shared, so none is hoisted), so the loop runs the GEMV's
// decode with LDS in place of LDG and without the segment's address
// arithmetic (144 loop instructions against 169 for the decode-only
// control on the 14B gate|up). Over a layout whose segments all
// hold the same codes it computes that layout's GEMV exactly (arm
// leech_p14s3_smem). Beside leech_p14s3_decode (the weights from L2) it
// says how much of the decode's time is waiting for its loads: what a
// pipeline that delivered every segment into shared memory could win.
// LR_SWIGLU = 1: the rows are gate/up pairs (lr_p14s.pair: row 2i gate,
// 2i + 1 up) and the end writes y[i] = silu(gate) up (rows / 2 values), so
// the engine needs no op_silu_mul launch; with the split, the two CTAs of a
// shared row group exchange a pair's two partials in one 128-bit atomic
// (kernels/gemv_leech_p14s_swiglu.c has the host side). Measured in the 14B
// engine at 4a77d52: 290.1 / 290.9 tok/s against 289.0 with op_silu_mul
// (gate|up 1274 us per token inside the graph against 1228 + 41).
// LR_XROT = B > 0: the input's incoherence rotation x' = (Q_odd kron H_m) D x
// (docs/rotation.md) runs in the prologue instead of as a launch of its own:
// every CTA reads the unrotated x (L2), rotates all of it into shared memory
// at byte B (f32, then Q_odd's table) with the single-CTA algorithm of
// rotate_block.cuh (its loads batched: up to eight float4 per thread in
// flight), packs the f16 B operand from it, and the row ends read x' there
// (exceptions, tail). Extra arguments: the rotation's sign bits and table
// (kernels/gemv_leech_p14s_rot.c has the host side). With LR_EARLY the
// first segments and the class table are in flight while it rotates.
// LR_SIDE = 1-4: that many more warps (the block's last) make the row end's
// values (row scales, tail terms, exception sums: lr_rows_side) while the
// others run the main loop, so the end loads nothing but shared memory
// (the end's dependent loads cost the 14B layer 12%, class-uniform blocks,
// leech_p14s_noepi); docs/layouts.md has the measurements and the barrier
// scheme. Tuned 14B at b9e084d+side5: o 9.26 -> 7.74 us, down 20.03 ->
// 18.23, q|k|v 11.00 -> 10.28; engine 291 -> 303 tok/s.
// Under programmatic dependent launch the kernel waits for its predecessor
// before anything (LR_EARLY = 1: after loading its first segments and the
// class table, which no kernel writes) and lets its dependents launch when
// it exits.
// Measured on the H200, verified, slower or no faster, and removed at
// the commit after 59d8311 (docs/layouts.md has the numbers; the CSVs keep
// the runs):
// a per-warp cp.async ring of 3-8 segment stages in shared memory (14B
// gate|up 38.7 us in registers against 51.5-75.6), an L2 prefetch of the
// segment 2-8 steps ahead (43-46 against 39.4), a batch's super-chunks
// split over 2-4 CTAs (in a cluster: down 25.7 -> 31.3; through global
// scratch: 24.1 -> 26.2), the B fragments read from an f16 copy of x in
// global memory (gate|up 39.7 against 36.7), an L2 prefetch of the first
// segments before the PDL wait (226.7 -> 209.6-226.2 tok/s, 14B engine),
// first loads before that wait with the trigger after the main loop (103
// against 89 us per fused 14B layer; back as LR_EARLY without it), and
// dependents launched after the main loop (239 -> 236 tok/s). Also removed
// (eb43a30, verified): the balanced split's segments through a per-warp
// cp.async ring of 3-4 slots in shared memory instead of one segment ahead
// in registers (3-bit form, 14B gate|up 29.89 -> 31.56 / 33.20 us, down
// 16.18 -> 17.76 / 19.17, q|k|v 9.70 -> 11.95 / 12.87; engine 314.9 -> 294.1
// tok/s). Also removed (3ff7999, verified bit-identical): one bulk L2
// prefetch per CTA and step of the round-robin walk's segments 1-8 steps
// ahead (3-bit form, 14B layer 63.46 -> 65.53 / 64.51 us at 1 / 2 steps, its
// loads-only control slower too; engine 316.5 -> 312.5 / 301.7 tok/s at 2 /
// 4). Also removed (96d58a4, verified bit-identical): the round-robin walk
// two segments ahead in three register buffers taking turns (3-bit form,
// 14B gate|up 27.1-28.8 -> 32.4-33.4 us at 512-768 threads, down 16.0-16.6
// -> 19.1-20.7, q|k|v 9.4-9.6 -> 11.0-11.6). Also removed (af28064,
// verified): two round-robin walks per warp, one segment of each decoded
// per step with the next two in flight (two independent decode chains in
// one instruction stream; 14B on ball-drawn blocks, the best thread count
// of each: gate|up 30.52 us at 384 threads against 27.50 at 512 with one
// walk, down 18.30 against 16.29, q|k|v 10.70 against 9.62; above 384
// threads it spills). A warp's two chains did what two warps' did: at 384
// threads it matched one walk at 384.
// Also removed (557923a, verified bit-identical): the round-robin walk's
// partials stored per lane when a warp leaves a row group, summed over the
// four lanes in the CTA's row sums instead of by two SHFL + FADD pairs
// (loop 167 -> 161 instructions, 4x the partials' shared memory): 14B
// layer 65.61 us against 62.32, engine 324.4 against 337.5 tok/s.
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 swiglu=1 side=4 i8=1
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 xw=1 early=1 side=1 i8=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 groups=3 pro=1 early=1 side=4 i8=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 i8=1 decodeonly=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=2 i8=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 swiglu=1 side=4 i8=1 c3=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=640 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 swiglu=1 side=4 i8=1 c3=1 late=4 latew=70
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 xw=1 early=1 side=1 i8=1 c3=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 groups=3 pro=1 early=1 side=4 i8=1 c3=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 i8=1 c3=1 loadonly=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=633 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 i8=1 c3=1 loadonly=2
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=633 prefetch=1 shr=1 bal=4 split=1 ilv=1 early=1 i8=1 c3=1 loadonly=3
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=633 prefetch=1 shr=1 bal=4 split=1 ilv=1 early=1 side=2 i8=1 c3=1 late=8 latew=70 trig=1
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=672 rg=1 ntab=633 prefetch=1 shr=1 bal=3 pro=1 early=1 i8=1 c3=1 loadonly=2
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 side=4 i8=1 c3=1 decodeonly=2 segsm=65536
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 side=1 i8=1 c3=1 decodeonly=2 segsm=65536
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=2 i8=1 c3=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=0
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=256 rg=1 ntab=1205 prefetch=1 minb=3
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 xw=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=2 xw=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xw=1 loadonly=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=256 rg=1 ntab=603 prefetch=1 nacc=2 shr=1 xw=1 epf=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=256 rg=1 ntab=603 prefetch=1 shr=1 xw=1 minb=3
// @spec gemv_leech_p14s rows=77 cols=1001 threads=32 rg=3 ntab=603 prefetch=0 epf=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=3 ntab=603 prefetch=2 epf=1 loadonly=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 xw=1 decodeonly=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=6
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3
// @spec gemv_leech_p14s rows=77 cols=1001 threads=192 rg=2 ntab=603 prefetch=2 groups=3 loadonly=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=512 rg=2 ntab=603 prefetch=1 shr=1 groups=4
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=640 rg=2 ntab=603 prefetch=0 shr=1 groups=5
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=17
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 bal=3
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 early=1 noepi=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 swiglu=1 side=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 early=1 side=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 early=1 side=1 l2w=96
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=4 split=1 ilv=1 early=1 i8=1 c3=1 res=1 l2w=4096 l2wp=40
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 swiglu=1 side=1 l2w=160
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 xw=1 early=1 side=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=3 ntab=603 prefetch=2 side=1
// the rotated residual's ends (norm: eps 1e-6 as f32 bits; res: y += W x)
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 swiglu=1 side=1 norm=897988541
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 swiglu=1 side=4 i8=1 norm=897988541
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 early=1 side=1 norm=897988541
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=3 split=1 early=1 pro=1 trig=1 i8=1 norm=897988541
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 early=1 side=1 res=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 bal=3 split=1 early=1 trig=1 i8=1 res=1
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 early=1 res=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=3 ntab=603 prefetch=2 norm=897988541
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 xw=1 early=1 side=1 norm=897988541
// @spec gemv_leech_p14s rows=4096 cols=4096 threads=256 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xw=1 early=1 side=2 res=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=3 ntab=603 prefetch=2 epf=1 res=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=704 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 early=1 swiglu=1 side=2
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=672 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 early=1 side=3
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=672 rg=1 ntab=633 prefetch=1 shr=1 groups=3 pro=1 early=1 side=1 i8=1 c3=1 res=1 trige=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 early=1 side=4
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=4 loadonly=1
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=4 decodeonly=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=96 rg=1 ntab=603 prefetch=1 bal=2
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=4 epf=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 bal=4 split=1
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=4 split=1 epf=1
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=5 split=1 loadonly=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 bal=4 split=1 ilv=1
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=512 rg=1 ntab=603 prefetch=1 shr=1 bal=3 ilv=1 epf=1 loadonly=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 groups=3 pro=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 pro=1
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xw=1 epf=1 pro=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=32 rg=3 ntab=603 prefetch=0 pro=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 groups=3 epf=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=192 rg=2 ntab=603 prefetch=2 groups=3 epf=1 pro=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 groups=3 epf=1 pro=1 early=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 pro=1 early=1
// @spec gemv_leech_p14s rows=77 cols=1001 threads=64 rg=2 ntab=603 prefetch=2 xw=1 early=1
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xw=1 early=1
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 groups=3 epf=1 pro=1 early=2
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 pro=1 early=2
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xw=1 early=2
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 ilv=1 pro=1 early=1 swiglu=1
// @spec gemv_leech_p14s rows=34816 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 bal=18 split=1 epf=1 swiglu=1
// @spec gemv_leech_p14s rows=78 cols=1001 threads=192 rg=2 ntab=603 prefetch=2 groups=3 epf=1 swiglu=1
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xw=1 early=1 swiglu=1
// @spec gemv_leech_p14s rows=5120 cols=5120 threads=768 rg=1 ntab=603 prefetch=1 shr=1 groups=3 pro=1 early=1 xrot=23152
// @spec gemv_leech_p14s rows=5120 cols=17408 threads=768 rg=1 ntab=1205 prefetch=1 shr=1 groups=3 pro=1 early=1 xrot=47728
// @spec gemv_leech_p14s rows=77 cols=320 threads=128 rg=1 ntab=603 prefetch=1 nacc=3 shr=1 xrot=12992
// @spec gemv_leech_p14s rows=7168 cols=5120 threads=128 rg=1 ntab=603 prefetch=1 shr=1 xw=1 early=1 side=1 i8=1 timeline=1
#include "gemv_leech.cuh"
#include "gemv_rows_epilogue.cuh"
#include "gemv_leech_i8.cuh" // x's power-of-two scale per super-chunk (LR_I8)

#ifndef LR_PREFETCH
#define LR_PREFETCH 1
#endif
#ifndef LR_NACC
#define LR_NACC 1
#endif
#ifndef LR_MINB
#define LR_MINB 1
#endif
#ifndef LR_SHR
#define LR_SHR 0
#endif
#ifndef LR_XW
#define LR_XW 0
#endif
#ifndef LR_LOADONLY
#define LR_LOADONLY 0
#endif
// LR_LOADONLY 2 and 3, the prologue's share of the loads-only control: 2
// skips x's staging, 3 the class table's too (neither is read by the
// control; its popcounts still verify)
#if LR_LOADONLY > 1 && (LR_LOADONLY > 3 || !LR_I8 || LR_XW || LR_XROT || LR_EARLY == 2)
#error "LR_LOADONLY 2 / 3: the int8 mode with x staged in the prologue (no xw, xrot, early 2)"
#endif
#define NO_X_STAGE (LR_LOADONLY >= 2)
#define NO_TAB_STAGE (LR_LOADONLY == 3)
#ifndef LR_EPF
#define LR_EPF 0
#endif
#ifndef LR_DECODEONLY
#define LR_DECODEONLY 0
#endif
#if LR_DECODEONLY == 2 && (LR_PREFETCH != 1 || LR_RG != 1 || !LR_C3 || !defined(LR_SEGSM))
#error "LR_DECODEONLY 2: the 3-bit form, one segment ahead (prefetch 1), one row group per batch, LR_SEGSM set"
#endif
#ifndef LR_GROUPS
#define LR_GROUPS 1
#endif
#ifndef LR_BAL
#define LR_BAL 0
#endif
#ifndef LR_SPLIT
#define LR_SPLIT 0
#endif
// LR_TRIG (with LR_BAL): the dependents launched after the main loop, not at
// exit (the engine's q|k|v and down: 14B graph ~30 us shorter per token,
// gate|up slower, docs/engine.md)
#ifndef LR_TRIG
#define LR_TRIG 0
#endif
#ifndef LR_TRIGE
#define LR_TRIGE 0
#endif
// LR_LATE, LR_LATEW (with LR_SPLIT): split_start
#ifndef LR_LATE
#define LR_LATE 0
#endif
#ifndef LR_LATEW
#define LR_LATEW 100
#endif
#ifndef LR_ILV
#define LR_ILV 0
#endif
#ifndef LR_PRO
#define LR_PRO 0
#endif
#ifndef LR_EARLY
#define LR_EARLY 0
#endif
// experiment (branch xrep): x and the class table read from one of several
// identical copies, chosen by CTA, so that the whole grid's reads of them at
// its start do not all land on the same L2 lines. x's copies are 32,768
// floats apart, the table's al256(ntab * 16) bytes.
#ifndef LR_XREP
#define LR_XREP 1
#endif
#ifndef LR_GTREP
#define LR_GTREP 1
#endif
// LR_L2W (lr_leech_ends.l2w, with LR_EARLY): before the PDL wait warp 0 asks
// L2 for up to LR_L2W KB of the CTA's share past the first segments the
// warps load themselves (with bal: the CTA's segments; else its first
// batches), while the small op before this GEMV runs and the DRAM idles
#ifndef LR_L2W
#define LR_L2W 0
#endif
// LR_L2WP (lr_leech_ends.l2wp, with LR_L2W): and at most this % of the share
#ifndef LR_L2WP
#define LR_L2WP 100
#endif
#if LR_L2WP < 1 || LR_L2WP > 100
#error "LR_L2WP: a percentage of the CTA's share, 1-100"
#endif
#if LR_L2W && !LR_EARLY
#error "LR_L2W: the share asked into L2 before the PDL wait (early)"
#endif
#ifndef LR_XROT
#define LR_XROT 0
#endif
#ifndef LR_I8
#define LR_I8 0
#endif
#if LR_I8 && LR_XROT
#error "LR_I8: x quantized in the prologue or per warp (no xrot)"
#endif
// LR_C3: the 3-bit form (layouts/leech_vram/p14s_c3.h), read in the int8 mode
#ifndef LR_C3
#define LR_C3 0
#endif
#if LR_C3 && !LR_I8
#error "LR_C3: the 3-bit form is read in the int8 mode (LR_I8)"
#endif
#if LR_XROT && (LR_XW || LR_LOADONLY || LR_DECODEONLY || LR_XROT % 16)
#error "LR_XROT: x staged in the prologue (no xw), a GEMV, a 16-byte aligned offset"
#endif
#ifndef LR_SWIGLU
#define LR_SWIGLU 0
#endif
#ifndef LR_SIDE
#define LR_SIDE 0
#endif
#if LR_SIDE < 0 || LR_SIDE > 4 || (LR_SIDE && (LR_XROT || LR_LOADONLY || LR_EPF || LR_GROUPS > 6 || LR_THREADS + 32 * LR_SIDE > 1024))
#error "LR_SIDE: 1-4 side warps, a GEMV without xrot or epf, at most 6 groups (side barriers 8..13), 1024 threads in all"
#endif
#if LR_SWIGLU && (LR_LOADONLY || LR_DECODEONLY || LR_ROWS % 2)
#error "LR_SWIGLU: a GEMV (no control) over an even number of interleaved gate/up rows"
#endif
#if (LR_NORM || LR_RES) && (LR_LOADONLY || LR_DECODEONLY || LR_XROT)
#error "LR_NORM, LR_RES: the ends of a GEMV (no control), without xrot"
#endif
#if LR_RES && LR_SWIGLU
#error "LR_RES: the residual add is the end of a plain GEMV (o, down), not of SwiGLU"
#endif
#if (LR_SPLIT || LR_ILV) && !LR_BAL
#error "LR_SPLIT and LR_ILV are modes of the balanced split (LR_BAL)"
#endif
#if LR_LATE && !LR_SPLIT
#error "LR_LATE weighs the split over segments (LR_SPLIT)"
#endif
#if LR_BAL && (LR_GROUPS > 1 || LR_RG != 1 || LR_PREFETCH != 1 || LR_XW)
#error "LR_BAL: one row group per segment, one segment ahead, x staged in the prologue"
#endif
#if LR_EARLY < 0 || LR_EARLY > 2
#error "LR_EARLY: 0 (wait first), 1 (first segments and table loop before the wait), 2 (the table by cp.async)"
#endif
#if LR_GROUPS < 1 || LR_GROUPS > 15 || LR_THREADS % (32 * LR_GROUPS)
#error "LR_GROUPS: 1..15 groups of whole warps (named barriers 1..15)"
#endif
#if LR_GROUPS > 1 && LR_XW
#error "warp groups stage x in the prologue"
#endif
#if LR_PREFETCH < 0 || LR_PREFETCH > 2
#error "LR_PREFETCH: 0, 1 or 2 segments in flight ahead"
#endif
// warps and threads of one group (the whole CTA when LR_GROUPS is 1)
#define WARPS (LR_THREADS / 32 / LR_GROUPS)
#define GT (WARPS * 32)
#define NBLK (LR_COLS / 24)
#define TAIL (LR_COLS % 24)
#define RGN ((LR_ROWS + 15) / 16)
#define SC ((NBLK + 7) / 8)
#define SEG (LR_C3 ? 1344 : 1792)
#define NRGB ((RGN + LR_RG - 1) / LR_RG)
// the row epilogue's loads fetched ahead (one row per thread needed)
// (rows of a batch, or of a CTA with LR_BAL)
#define ANR ((LR_BAL ? LR_BAL : LR_RG) * 16)
// (with warp groups: one per thread of the group, each group its own words)
#define EPF (LR_EPF && !LR_LOADONLY && GT >= ANR)

// Shared memory: class table | x as f16, natural order, SC * 192 columns
// (zero past the blocks) | reduction (per warp, row group, 16 rows),
// double-buffered so one barrier per batch suffices.
#define TAB_BYTES (LR_NTAB * 16)
// (LR_I8: x's int8 digits, the same 384 bytes per super-chunk, then its
// f32 scales, 16-byte padded)
#define XS_BYTES (SC * 384 + (LR_I8 ? (SC * 4 + 15) / 16 * 16 : 0))
#if LR_BAL
// a warp's run of at most BTW segments touches at most KMAX row groups: one
// 16-row partial each, then the CTA's row sums (kernels/gemv_leech_p14s.c
// sizes the same)
#define BTW ((LR_BAL * SC + WARPS - 1) / WARPS)
// (LR_ILV: a warp's segments interleave with the others' over all the
// CTA's row groups: a partial slot for each)
#define KMAX (LR_ILV ? LR_BAL : (BTW + SC - 2) / SC + 1)
// (+ with LR_SPLIT one flag per row: the rows another CTA finishes)
#define RED_BYTES ((WARPS * KMAX + LR_BAL) * 16 * 4 + LR_SPLIT * LR_BAL * 16)
#else
#define RED_BYTES (LR_GROUPS * 2 * WARPS * LR_RG * 16 * 4)
#endif
// 48 zero bytes (64 reserved): the B fragment of lanes outside their block slot
#define ZB_BYTES 64
// LR_SIDE (1-4 side warps, the CTA's last): after the zero bytes, their
// row values (3 x SIDE_NR floats: the CTA's rows, with groups every
// group's first batch; each side warp makes a contiguous share) and a
// scratch of SIDE_PCAP exception products per side warp
// (kernels/gemv_leech_p14s.c sizes the same). The other warps' CTA-wide
// barriers are bar.sync 15 over LR_THREADS threads, so that the side warps
// need not join them, and a group reads its values after bar.sync 8 +
// group (its threads and the side warps' bar.arrive).
#define SIDE_NR ((LR_BAL ? LR_BAL : LR_GROUPS * LR_RG) * 16)
#define SIDE_PCAP 1024
#define SIDE_OFF (TAB_BYTES + XS_BYTES + RED_BYTES + ZB_BYTES)
#if LR_SIDE
#define CTA_SYNC() asm volatile("bar.sync 15, %0;" ::"n"(LR_THREADS) : "memory")
#else
#define CTA_SYNC() __syncthreads()
#endif

#if LR_NORM
// The rotated residual's norm (gemv_rows_epilogue.cuh): one sum of x^2 per
// warp of the threads that make it (the side warps, else every warp in the
// prologue, before its first CTA-wide barrier), summed in warp order where
// a row ends, after a barrier that follows their writes.
#define NORM_SLOTS (LR_SIDE ? LR_SIDE : LR_THREADS / 32)
__shared__ float lr_norm_slot[NORM_SLOTS];
// thread t of n (whole warps) adds its columns; 16-byte loads where the
// width allows (x is a whole vector the engine allocated, 256-aligned)
LR_DEV void norm_sum(const float *x, int t, int n)
{
    float sq = 0.f;
    if (LR_COLS % 4 == 0) {
#pragma unroll 4
        for (int i = t; i < LR_COLS / 4; i += n) {
            const float4 v = ((const float4 *)x)[i];
            sq = fmaf(v.x, v.x, fmaf(v.y, v.y, fmaf(v.z, v.z, fmaf(v.w, v.w, sq))));
        }
    } else {
#pragma unroll 4
        for (int i = t; i < LR_COLS; i += n) sq = fmaf(x[i], x[i], sq);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sq += __shfl_xor_sync(0xffffffffu, sq, o);
    if ((t & 31) == 0) lr_norm_slot[t >> 5] = sq;
}
LR_DEV float lr_norm_scale()
{
    float s = 0.f;
#pragma unroll
    for (int w = 0; w < NORM_SLOTS; w++) s += lr_norm_slot[w];
    return rsqrtf(s * (1.f / LR_COLS) + __int_as_float(LR_NORM));
}
#endif

struct seg_regs {
    uint2 h;    // headers: (row g: blocks 2q, 2q+1), (row g+8: blocks 2q, 2q+1)
    uint4 w[3]; // code words of tiles 0..11
    // (LR_C3: w[0], w[1] = stored words S0..S7, w[2] = (S8, H, H2, 0), h
    // unused: the headers are H, H2's 12-bit fields)
};

LR_DEV uint2 ld_stream8(const void *p)
{
    uint2 v;
    asm volatile("ld.global.cs.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

LR_DEV u32 ld_stream2(const void *p)
{
    unsigned short v;
    asm volatile("ld.global.cs.u16 %0, [%1];" : "=h"(v) : "l"(p));
    return v;
}

LR_DEV void load_seg(seg_regs &s, const u8 *seg, int lane)
{
#if LR_C3
    s.h = make_uint2(0u, 0u);
    s.w[0] = lr_ld_stream16(seg + 16 * lane);
    s.w[1] = lr_ld_stream16(seg + 512 + 16 * lane);
    const uint2 t = ld_stream8(seg + 1024 + 8 * lane);
    s.w[2] = make_uint4(t.x, t.y, ld_stream2(seg + 1280 + 2 * lane), 0u);
#else
    s.h = ld_stream8(seg + 8 * lane);
#pragma unroll
    for (int j = 0; j < 3; j++) s.w[j] = lr_ld_stream16(seg + 256 + 512 * j + 16 * lane);
#endif
}

#if LR_DECODEONLY == 2
// (LR_DECODEONLY 2) a 3-bit segment's words at load_seg's offsets in shared memory
LR_DEV void store_seg_shared(const seg_regs &s, u8 *seg, int lane)
{
    *(uint4 *)(seg + 16 * lane) = s.w[0];
    *(uint4 *)(seg + 512 + 16 * lane) = s.w[1];
    *(uint2 *)(seg + 1024 + 8 * lane) = make_uint2(s.w[2].x, s.w[2].y);
    *(unsigned short *)(seg + 1280 + 2 * lane) = (unsigned short)s.w[2].z;
}

LR_DEV void load_seg_shared(seg_regs &s, const u8 *seg, int lane)
{
    const u32 a = (u32)__cvta_generic_to_shared(seg);
    unsigned short h;
    s.h = make_uint2(0u, 0u);
    asm volatile("ld.volatile.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(s.w[0].x), "=r"(s.w[0].y), "=r"(s.w[0].z), "=r"(s.w[0].w) : "r"(a + 16 * lane));
    asm volatile("ld.volatile.shared.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(s.w[1].x), "=r"(s.w[1].y), "=r"(s.w[1].z), "=r"(s.w[1].w) : "r"(a + 512 + 16 * lane));
    asm volatile("ld.volatile.shared.v2.u32 {%0,%1}, [%2];" : "=r"(s.w[2].x), "=r"(s.w[2].y) : "r"(a + 1024 + 8 * lane));
    asm volatile("ld.volatile.shared.u16 %0, [%1];" : "=h"(h) : "r"(a + 1280 + 2 * lane));
    s.w[2].z = h, s.w[2].w = 0u;
}
#endif

// Lane l's six columns of super-chunk sc, zero past the blocks (the pad
// blocks' codes are zero, and 0 times whatever lies past x could be NaN).
LR_DEV void load_xpiece(float (&v)[6], const float *__restrict__ x, int sc, int lane)
{
    const int c = sc * 192 + 6 * lane; // 24 | NBLK * 24: a lane's six are all in or all out
    if (c < NBLK * 24) { // c even: three 8-byte loads (x is at least 8-byte aligned)
#pragma unroll
        for (int j = 0; j < 3; j++) {
            const float2 t = *(const float2 *)(x + c + 2 * j);
            v[2 * j] = t.x, v[2 * j + 1] = t.y;
        }
    } else {
#pragma unroll
        for (int j = 0; j < 6; j++) v[j] = 0.f;
    }
}

LR_DEV u32 word_of(const uint4 &v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

// w >> n: SHF (ALU pipe), or with LR_SHR the high word of w * 2^(32 - n)
// by IMAD.HI (FMA pipe; the multiplier in a register, so ptxas cannot turn
// it back into a shift).
template <int N> LR_DEV u32 shr(u32 w, u32 mul)
{
#if LR_SHR
    return __umulhi(w, mul);
#else
    (void)mul;
    return w >> N;
#endif
}

// Selectors (8, cA, 8, cB) for two pairs at once: the word (shifted so
// the codes sit in nibbles 1, 3, 5, 7) masked and or'ed in one LOP3; PRMT
// reads only the low 16 bits, so the low pair selects from sel and the high
// pair from sel >> 16 (one LOP3 per two pairs instead of one per pair).
LR_DEV u32 sels(u32 ws, u32 mF0) { return lr_and_or(ws, mF0, 0x08080808u); }
// One pair from the pool (unscaled values) by a selector.
LR_DEV u32 pair(u32 sel, const uint4 &e) { return lr_prmt(e.x, e.y, sel); }

#if LR_I8
// LR_I8, the int8 mode, over the int8 form (layouts/leech_vram/p14s.h):
// each 16-bit half of a code word is one row's four codes, so PRMT with the
// half word as selector gives four int8 weights (code 8: 0) and
// mma.m16n8k32.s8 multiplies them with x as 16-bit integers, a
// power-of-two scale per super-chunk (the I8x quantization, exact: its two
// int8 digits hi, lo with xi = 256 hi + lo). Per lane and super-chunk: 24
// PRMT and 12 shifts for 96 weights, 6 IMMA (the f16 form: 48 PRMT, 27 LOP3,
// 36 shifts, 12 HMMA). B's eight columns: slot q = the block of lane q, hi
// digits in column 2q, lo in 2q + 1, so lane (g, q) gets C = row g's and
// row g + 8's hi and lo dots over its own block, int32 and exact.
// int8 tile T (0..2) of block 2q + u: A rows g / g + 8, k 4q.. = coordinates
// 8T..8T+3 = word 6u + 2T (low / high half), k 16 + 4q.. = 8T+4..8T+7 = word
// 6u + 2T + 1; x's digits in the same order, 24 bytes per block and digit.
LR_DEV void imma(int (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1, bool first)
{
    if (first)
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%10,%10,%10,%10};"
                     : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(0));
    else
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                     "{%0,%1,%2,%3};"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// Super-chunk sc of x (lane's six columns 6 lane.. in v: block lane / 4,
// coordinates 6 (lane % 4)..) into the int8 mode's B operand: xi =
// rint(x 2^k) (lr_i8_x_exp: m 2^k in (16319, 32639], m = max |x| over the
// super-chunk), digits hi = (xi + 128) >> 8 and lo = xi - 256 hi at
// (2 (b / 2) + digit) 48 + (b % 2) 24 + coordinate of block b, 2^-k at
// xsc[sc]. One warp; the host mirrors it (lr_gemv_leech_i8_quantize_x).
LR_DEV void stage_x8(u8 *xs8, float *xsc, int sc, const float (&v)[6], int lane)
{
    float m = 0.f;
#pragma unroll
    for (int j = 0; j < 6; j++) m = fmaxf(m, fabsf(v[j]));
    m = lr_i8_warp_max(m);
    const int k = lr_i8_x_exp(m);
    const float inv = m > 0.f ? __int_as_float((k + 127) << 23) : 0.f;
    if (lane == 0) xsc[sc] = m > 0.f ? __int_as_float((127 - k) << 23) : 0.f;
    const int bl = lane >> 2;
    u8 *o = xs8 + sc * 384 + (bl >> 1) * 96 + (bl & 1) * 24 + 6 * (lane & 3);
#pragma unroll
    for (int j = 0; j < 3; j++) {
        const int a = __float2int_rn(__fmul_rn(v[2 * j], inv)), b = __float2int_rn(__fmul_rn(v[2 * j + 1], inv));
        const int ha = (a + 128) >> 8, hb = (b + 128) >> 8;
        *(u16 *)(o + 2 * j) = (u16)((ha & 255) | (hb & 255) << 8);
        *(u16 *)(o + 48 + 2 * j) = (u16)(((a - 256 * ha) & 255) | ((b - 256 * hb) & 255) << 8);
    }
}
#endif

// A lane's four class-table entries of a segment, [row half g / g + 8][its
// block 2q / 2q + 1], by the segment's headers (byte offsets; both forms).
LR_DEV void load_entries(uint4 (&e)[2][2], const uint2 &h, const u8 *tab)
{
    e[0][0] = *(const uint4 *)(tab + (h.x & 0xffffu));
    e[0][1] = *(const uint4 *)(tab + (h.x >> 16));
    e[1][0] = *(const uint4 *)(tab + (h.y & 0xffffu));
    e[1][1] = *(const uint4 *)(tab + (h.y >> 16));
}

// d = A B with a zero accumulator (ptxas reads RZ for C: no register moves).
LR_DEV void mma_z(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%10,%10,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.f));
}

// Rows g and g + 8 of an mma tile are spread over the four lanes q: their sum.
LR_DEV float quad_sum(float v)
{
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// Rows g and g + 8 over the quad in two shuffles instead of quad_sum's
// four: lanes q = 0, 2 keep row g and q = 1, 3 row g + 8, each adding its
// partner's (q ^ 1) partial of the row it keeps, then the other pair's
// (q ^ 2). Lane 0 ends with row g's ((a0 + a1) + (a2 + a3)), lane 1 with
// row g + 8's: quad_sum's sums in quad_sum's order (an f32 add commutes).
LR_DEV float quad_sum_pair(float y0, float y1, bool odd)
{
    const float keep = odd ? y1 : y0, give = odd ? y0 : y1;
    const float v = keep + __shfl_xor_sync(0xffffffffu, give, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// A group's barrier: the CTA's when it is the only group.
LR_DEV void group_sync(int gid)
{
#if LR_GROUPS == 1
    (void)gid;
    CTA_SYNC();
#else
    asm volatile("bar.sync %0, %1;" ::"r"(gid + 1), "n"(GT) : "memory");
#endif
}

// The class table into shared memory, the CTA's threads side by side.
LR_DEV void stage_table(u8 *tab, const u8 *__restrict__ gtab)
{
    for (int i = threadIdx.x; i < LR_NTAB; i += LR_THREADS) ((uint4 *)tab)[i] = ((const uint4 *)gtab)[i];
}

// LR_EARLY 2: the same by cp.async (no registers, nothing for the thread to
// wait on before the PDL wait); lr_cp_table_wait before the CTA's barrier.
// Why: with the table loop before the wait (LR_EARLY 1), a GEMV with no
// kernel before it to overlap (a chain of GEMVs) waits for the table's
// round trip and then x's, where LR_PRO alone overlaps them (14B layer 75.15
// us against 74.08, 606ec86 against 92666d5). Holding the table in
// registers across the wait instead let ptxas sink the first segments'
// loads past it (SASS, fifteenth session).
LR_DEV void stage_table_async(u8 *tab, const u8 *__restrict__ gtab)
{
    const u32 d = lr_smem_u32(tab);
    for (int i = threadIdx.x; i < LR_NTAB; i += LR_THREADS)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d + 16 * i), "l"(gtab + 16 * i) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
}
LR_DEV void lr_cp_table_wait() { asm volatile("cp.async.wait_all;" ::: "memory"); }

#if LR_I8
// LR_I8's x in the prologue: warp w quantizes super-chunks w, w + warps, ...;
// up to four pieces' loads in flight at a time, the first batch's beside the
// class-table loop (TABLE: stage it here too).
template <bool TABLE>
LR_DEV void stage_x8_prologue(u8 *tab, u8 *xs8, float *xsc, const u8 *__restrict__ gtab, const float *__restrict__ x)
{
    constexpr int NW = LR_THREADS / 32, NPW = (SC + NW - 1) / NW;
    const int wa = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int p0 = 0; p0 < NPW; p0 += 4) {
        float v[4][6];
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const int sc = wa + (p0 + p) * NW;
            if (sc < SC) load_xpiece(v[p], x, sc, lane);
        }
        if (TABLE && p0 == 0) stage_table(tab, gtab);
#pragma unroll
        for (int p = 0; p < 4; p++) {
            const int sc = wa + (p0 + p) * NW;
            if (sc < SC) stage_x8(xs8, xsc, sc, v[p], lane);
        }
    }
}
#endif

#if LR_XROT
#include "rotate_block.cuh"
// the rotation's factors: cols = RK * RM, RM the largest power of two in it
#define RM (LR_COLS & -LR_COLS)
#define RK (LR_COLS / RM)
// LR_XROT: x' = Q x into zs (f32, cols), then the f16 B operand into xs.
// The gather is rotate_block.cuh's with S = M (item i = columns 4i..4i+3,
// one row), its loads batched per thread; then the shared-memory passes
// and the row mix of the single-CTA rotation (qs: the K x K table, staged
// here, published by the barrier before the mix). Ends before the
// prologue's closing barrier (xs is read only after it).
LR_DEV void xrot_prologue(float *zs, float *qs, const float *__restrict__ q, u32 *xs, const float *x,
                          const u32 *__restrict__ dbits)
{
    for (int i = threadIdx.x; i < RK * RK; i += LR_THREADS) qs[i] = q[i];
    constexpr int V = RM / 4, ITEMS = RK * V, LV = lr_ilog2(V) < 5 ? lr_ilog2(V) : 5;
    constexpr int NI = (ITEMS + LR_THREADS - 1) / LR_THREADS, B = NI < 8 ? NI : 8;
    const int lane = threadIdx.x & 31;
    // warp-uniform trip counts: every lane joins the shuffles; lanes past
    // the last item work on a clamped copy and store nothing (a row's V
    // items are all valid or all not: ITEMS = RK V)
    for (int k0 = 0; k0 < NI; k0 += B) {
        float4 xv[B];
        u32 w[B];
#pragma unroll
        for (int k = 0; k < B; k++) {
            const int i = threadIdx.x + (k0 + k) * LR_THREADS, ii = i < ITEMS ? i : ITEMS - 1;
            xv[k] = *(const float4 *)(x + 4 * ii);
            w[k] = __ldg(dbits + ((4 * ii) >> 5));
        }
#pragma unroll
        for (int k = 0; k < B; k++) {
            const int i = threadIdx.x + (k0 + k) * LR_THREADS, ii = i < ITEMS ? i : ITEMS - 1;
            float4 a = xv[k];
            lr_flip4(a, w[k] >> ((4 * ii) & 31));
            lr_fwht_item<LV>(a, lane);
            if (i < ITEMS) ((float4 *)zs)[ii] = a;
        }
    }
    lr_rot_passes<RK, RM, LR_THREADS, 5>(zs);
    __syncthreads();
    lr_rot_mix_inplace<RK, RM, LR_THREADS>(zs, qs);
    __syncthreads();
    for (int i = threadIdx.x; i < SC * 96; i += LR_THREADS) {
        const int c = 2 * i; // c even and NBLK * 24 even: both columns in or both out
        xs[i] = c < NBLK * 24 ? lr_pack_h2(zs[c], zs[c + 1]) : 0u;
    }
}
#define LR_XROT_PARAMS , const u32 *__restrict__ rdbits, const float *__restrict__ rq
#else
#define LR_XROT_PARAMS
#endif

#if LR_PRO
// LR_PRO: the prologue's x (f16 pairs) with a thread's loads, up to 16 at a
// time, issued before the class-table loop and stored after it (with
// LR_XW, which stages x in the loop, only the table loop). The loops this
// replaces went out 4 iterations per pass (NVRTC 13.0's unroll), table
// first: on the 14B down (768 threads, 1205 entries, 91 super-chunks) one
// pass for the table and three for x, each an L2 round trip before the
// first decode, where the loads-only control trails a pure stream by ~2 us.
// (TABLE false: only x, the table staged already; LR_EARLY)
template <bool TABLE> LR_DEV void stage_prologue(u8 *tab, u32 *xs, const u8 *__restrict__ gtab, const float *__restrict__ x)
{
#if LR_I8
    if (LR_XW) {
        if (TABLE) stage_table(tab, gtab);
    } else
        stage_x8_prologue<TABLE>(tab, (u8 *)xs, (float *)((u8 *)xs + SC * 384), gtab, x);
#else
    constexpr int XI = LR_XW ? 0 : (SC * 96 + LR_THREADS - 1) / LR_THREADS;
    // x's loads first, in flight while the table loop waits on its own; the
    // loop stays a loop: with the table in the same straight-line batch,
    // ptxas sank the first segment's loads (issued above) past the barrier.
#pragma unroll
    for (int k0 = 0; k0 < XI; k0 += 16) {
        float2 xv[16];
#pragma unroll
        for (int k = k0; k < k0 + 16 && k < XI; k++) {
            // c even and NBLK * 24 even: both columns in or both out
            const int i = threadIdx.x + k * LR_THREADS, c = 2 * i;
            xv[k - k0] = i < SC * 96 && c < NBLK * 24 ? *(const float2 *)(x + c) : make_float2(0.f, 0.f);
        }
        if (TABLE && k0 == 0)
            stage_table(tab, gtab);
#pragma unroll
        for (int k = k0; k < k0 + 16 && k < XI; k++) {
            const int i = threadIdx.x + k * LR_THREADS;
            if (i < SC * 96) xs[i] = lr_pack_h2(xv[k - k0].x, xv[k - k0].y);
        }
    }
    if (TABLE && XI == 0)
        stage_table(tab, gtab);
#endif
}
#endif

#if LR_SPLIT
// One slot per row for the row groups two CTAs share (LR_SPLIT): empty (0)
// between launches, so launches of one module must not overlap (one stream;
// under PDL every access follows the wait). Module memory: zero at load.
__device__ __align__(16) u64 split_slot[RGN * 16];
#if LR_SWIGLU && __CUDA_ARCH__ >= 900
// A gate/up pair's two partials and the flag in one 128-bit exchange (sm_90)
// at slots row, row + 1: no fence, no second round trip (the up partial
// stored, a fence, then the exchange: 14B gate|up 1341 against 1230 us per
// token inside the graph, 7fdbf9a).
LR_DEV void lr_exch128(u64 *p, u64 lo, u64 hi, u64 &olo, u64 &ohi)
{
    asm volatile("{\n\t.reg .b128 d, s;\n\tmov.b128 s, {%2, %3};\n\tatom.global.exch.b128 d, [%4], s;\n\t"
                 "mov.b128 {%0, %1}, d;\n\t}"
                 : "=l"(olo), "=l"(ohi)
                 : "l"(lo), "l"(hi), "l"(p)
                 : "memory");
}
#endif
LR_DEV u32 lr_bits(float v) { return __float_as_uint(v); }
LR_DEV u32 lr_bits(u32 v) { return v; }
template <class T> LR_DEV T lr_from_bits(u32 v);
template <> __device__ __forceinline__ float lr_from_bits<float>(u32 v) { return __uint_as_float(v); }
template <> __device__ __forceinline__ u32 lr_from_bits<u32>(u32 v) { return v; }
#endif

#if LR_BAL
#if LR_SPLIT
// The first segment of CTA c's share (c = gridDim.x: all RGN * SC). With
// LR_LATE the grid's last LR_LATE CTAs get LR_LATEW % of another's share:
// under PDL the op before the GEMV holds that many SMs, so those CTAs are
// dispatched (blockIdx order) when it exits, after the others have fetched
// their class table and first segments.
LR_DEV int split_start(int c)
{
#if LR_LATE
    const int e = (int)gridDim.x - LR_LATE;
    const long long w = c <= e ? 100LL * c : 100LL * e + (long long)LR_LATEW * (c - e);
    const long long wn = 100LL * e + (long long)LR_LATEW * LR_LATE;
    return (int)((long long)(RGN * SC) * w / wn);
#else
    return (int)((long long)c * (RGN * SC) / gridDim.x);
#endif
}
#endif

// CTA blockIdx.x's row groups [rgA, rgB) of the balanced split (for the
// side warp: the same bounds the kernel's main path computes below)
LR_DEV void cta_rgs(int &rgA, int &rgB)
{
#if LR_SPLIT
    const int tA = split_start(blockIdx.x), tB = split_start(blockIdx.x + 1);
    rgA = tA / SC, rgB = (tB - 1) / SC + 1;
#else
    rgA = (int)((long long)blockIdx.x * RGN / gridDim.x);
    rgB = (int)((long long)(blockIdx.x + 1) * RGN / gridDim.x);
#endif
}
#endif

extern "C" __global__ void __launch_bounds__(LR_THREADS + 32 * LR_SIDE, LR_MINB)
LR_KERNEL(const u8 *__restrict__ W, const u8 *__restrict__ gtab, const float *__restrict__ row_scale,
          const u16 *__restrict__ tail, const u32 *__restrict__ exc_ptr, const u32 *__restrict__ exc_col,
          const float *__restrict__ exc_dw, const float *__restrict__ x, float *__restrict__ y, int rows_, int cols_
          LR_XROT_PARAMS)
{
    LR_TL_SCOPE(); // the timeline probe (lr_common.cuh): nothing unless timeline=1
#if LR_XREP > 1
    x += (blockIdx.x % LR_XREP) * 32768;
#endif
#if LR_GTREP > 1
    gtab += (blockIdx.x % LR_GTREP) * (size_t)((LR_NTAB * 16 + 255) & ~255);
#endif
#if LR_TRIGE
    // the dependents launched at entry (ends.trig 2): with a grid that leaves
    // SMs free (the 14B o: 107 CTAs), the next kernel's CTAs take those SMs
    // and run to their own wait, and the rest enter as this grid's CTAs
    // leave, with no launch between (its wait still waits for this grid)
    lr_pdl_launch_dependents();
#endif
    extern __shared__ __align__(16) u8 smem[];
    u8 *tab = smem;
    u32 *xs = (u32 *)(smem + TAB_BYTES);
#if LR_I8
    u8 *const xs8 = (u8 *)xs;                                 // x's digits (LR_I8)
    float *const xsc = (float *)(smem + TAB_BYTES + SC * 384); // and scales
#endif
    float *red = (float *)(smem + TAB_BYTES + XS_BYTES);
    const int lane = threadIdx.x & 31, q = lane & 3, g = lane >> 2;
    // the warp in its group, the group, the thread in it (the compiler
    // cannot know threadIdx.x < LR_THREADS: one group is spelt out)
    const int warp = LR_GROUPS == 1 ? threadIdx.x >> 5 : (threadIdx.x >> 5) % WARPS;
    const int gid = LR_GROUPS == 1 ? 0 : (threadIdx.x >> 5) / WARPS;
    const int gtid = LR_GROUPS == 1 ? threadIdx.x : threadIdx.x % GT;
    const u32 mF0 = lr_opaque(0xF0F0F0F0u), m16 = lr_opaque(1u << 16);
    // the group's first batch and the batch stride
    const int cid = blockIdx.x * LR_GROUPS + gid, ncl = gridDim.x * LR_GROUPS;
#if LR_SIDE
    float *const sd = (float *)(smem + SIDE_OFF);
    if (threadIdx.x >= LR_THREADS) { // a side warp: its share of the rows' values, then leave
        const int sw = (threadIdx.x - LR_THREADS) >> 5;
#if LR_BAL
        int rgA, rgB;
        cta_rgs(rgA, rgB);
        const int r0 = rgA * 16, n = min(LR_ROWS, rgB * 16) - r0;
#else
        const int r0 = blockIdx.x * LR_GROUPS * LR_RG * 16, n = max(0, min(LR_ROWS, r0 + SIDE_NR) - r0);
#endif
        lr_rows_side<SIDE_NR, TAIL, SIDE_PCAP>(sd, sd + 3 * SIDE_NR + sw * SIDE_PCAP, r0, r0 + sw * n / LR_SIDE,
                                                r0 + (sw + 1) * n / LR_SIDE, exc_ptr, exc_col, exc_dw, tail, x,
                                                NBLK * 24, row_scale);
#if LR_NORM
        // the side warps have slack beside the main loop: the norm's sum is
        // theirs (lr_rows_side waited), read after the barrier below
        norm_sum(lr_after_wait(x), threadIdx.x - LR_THREADS, 32 * LR_SIDE);
#endif
        __syncwarp();
#if LR_BAL
        lr_bar_arrive(8, LR_THREADS + 32 * LR_SIDE);
#else
        // the groups that have a batch sync on their barrier once, at its end
#pragma unroll
        for (int k = 0; k < LR_GROUPS; k++)
            if (blockIdx.x * LR_GROUPS + k < NRGB) lr_bar_arrive(8 + k, GT + 32 * LR_SIDE);
#endif
        return;
    }
#endif

    // Out-of-range batches and row groups load a valid (clamped) segment
    // whose results are never stored: no branches in the loop.
#if LR_DECODEONLY == 2
    bool primed = false; // after the first segment: its shared-memory copy
    u8 *const seg_sm = smem + LR_SEGSM + (threadIdx.x >> 5) * SEG;
#endif
    auto load_all = [&](seg_regs (&dst)[LR_RG], int b, int k) {
#if LR_DECODEONLY == 2
        if (primed) { // (LR_RG 1: one segment per warp)
            load_seg_shared(dst[0], seg_sm, lane);
            return;
        }
#endif
        k = min(k, SC - 1);
        b = min(b, NRGB - 1);
#pragma unroll
        for (int r = 0; r < LR_RG; r++)
            load_seg(dst[r], W + ((size_t)(LR_DECODEONLY ? 0 : min(b * LR_RG + r, RGN - 1)) * SC + k) * SEG, lane);
    };
    // this warp's segments in order: super-chunks warp, warp + WARPS, ... of
    // batch b, then of batch b + ncl
    auto advance = [&](int &b, int &k) {
        k += WARPS;
        if (k >= SC) k = warp, b += ncl;
    };
#if !LR_EARLY
    lr_pdl_wait(); // x comes from the previous kernel; nothing is loaded before
    x = lr_after_wait(x);
#endif
    int b = cid, sc = warp;
#if LR_BAL
    // CTA c: row groups [rgA, rgB); warp w: its segments t0..t1 - 1 in memory
    // order (row group rgA + t / SC, super-chunk t % SC)
#if LR_SPLIT
    // LR_SPLIT: CTA c takes segments [tA, tB) of all RGN * SC in memory
    // order, so its first and last row groups may be shared with its
    // neighbours (the host plans at least SC segments per CTA: never more
    // than two CTAs per row group)
    const int tA = split_start(blockIdx.x), tB = split_start(blockIdx.x + 1);
    const int rgA = tA / SC, rgB = (tB - 1) / SC + 1, off = tA - rgA * SC, bS = tB - tA;
#else
    const int rgA = (int)((long long)blockIdx.x * RGN / gridDim.x);
    const int rgB = (int)((long long)(blockIdx.x + 1) * RGN / gridDim.x);
    const int off = 0, bS = (rgB - rgA) * SC;
#endif
    // the grid is part of the specialization (LR_BAL sizes shared memory):
    // a smaller one stops here instead of writing past the buffers
    if (rgB - rgA > LR_BAL) __trap();
    // (t0, t1: relative to the CTA's first row group's first segment)
    // (LR_ILV: position warp, warp + WARPS, ... of the CTA's segments)
    const int t0 = off + (LR_ILV ? warp : warp * bS / WARPS), t1 = off + (warp + 1) * bS / WARPS;
    b = rgA + t0 / SC, sc = t0 % SC;
#endif
#if LR_XROT
    float *zs = (float *)(smem + LR_XROT), *qs = zs + LR_COLS; // x' and Q_odd's table
#endif
    seg_regs cur[LR_RG];
    load_all(cur, b, sc);
#if LR_DECODEONLY == 2
    store_seg_shared(cur[0], seg_sm, lane); // each lane reads back only its own bytes
    primed = true;
#endif
#if LR_PREFETCH == 2
    seg_regs n1[LR_RG];
    int pb = b, psc = sc; // the position of the segment loaded last
    advance(pb, psc);
    load_all(n1, pb, psc);
#endif
#if LR_EARLY
    // LR_EARLY: the weights and the class table are immutable, so the
    // first segments and the table load before the wait, while the small
    // op before this GEMV (rotation, attention; it lets its dependents
    // launch at entry) still runs; only x waits.
#if LR_EARLY == 2
    stage_table_async(tab, gtab);
#else
    if (!NO_TAB_STAGE) stage_table(tab, gtab);
#endif
#if LR_L2W
    if (threadIdx.x < 32) { // 16 KB a lane, after the warps' own first loads
#if LR_BAL
        const long long s0 = (long long)rgA * SC + off + (LR_ILV ? WARPS : 0), s1 = (long long)rgA * SC + off + bS;
#else
        const long long s0 = (long long)blockIdx.x * LR_GROUPS * LR_RG * SC;
        const long long s1 = min((long long)RGN * SC, s0 + (long long)LR_GROUPS * LR_RG * SC);
#endif
        // (the share's part rounded down to 16 bytes, the prefetch's unit)
        const long long part = LR_L2WP < 100 ? ((s1 - s0) * SEG * LR_L2WP / 100) & ~15LL : (s1 - s0) * SEG;
        const long long e = min(s0 * SEG + part, s0 * SEG + LR_L2W * 1024LL);
        for (long long a = s0 * SEG + lane * 16384LL; a < e; a += 32 * 16384LL)
            lr_prefetch_l2_range(W + a, (unsigned)min(16384LL, e - a));
    }
#endif
    lr_pdl_wait();
    x = lr_after_wait(x); // no load of x above the wait (lr_common.cuh)
#if LR_XROT
    xrot_prologue(zs, qs, rq, xs, x, rdbits);
    x = zs;
#elif LR_PRO
    if (!NO_X_STAGE) stage_prologue<false>(tab, xs, gtab, x);
#endif
#elif LR_XROT
    stage_table(tab, gtab);
    xrot_prologue(zs, qs, rq, xs, x, rdbits);
    x = zs;
#elif LR_PRO
    if (!NO_X_STAGE) stage_prologue<true>(tab, xs, gtab, x);
    else if (!NO_TAB_STAGE) stage_table(tab, gtab);
#else
    if (!NO_TAB_STAGE) stage_table(tab, gtab);
#endif
    const uint4 *xz = (const uint4 *)(smem + TAB_BYTES + XS_BYTES + RED_BYTES);
    if (threadIdx.x < 4) ((uint4 *)xz)[threadIdx.x] = make_uint4(0u, 0u, 0u, 0u);
    // B column n = block slot of the super-chunk: lane (g, q) supplies its
    // x only where g is its block, 2q (tiles 0-5) or 2q + 1 (tiles 6-11).
    const bool act0 = g == 2 * q, act1 = g == 2 * q + 1;
    float yacc[LR_RG][2];
#if EPF
    // the first batch's epilogue values load while the first segment and
    // the class table are in flight
    const lr_rows_ahead<GT, ANR, TAIL> ahead = { (u32 *)(smem + TAB_BYTES + XS_BYTES + RED_BYTES + ZB_BYTES) +
                                                     gid * LR_AHEAD_WORDS * GT, (unsigned)gtid };
#if LR_BAL
    ahead.start(rgA * 16, min(LR_ROWS, rgB * 16), exc_ptr, exc_col, exc_dw, tail, x, NBLK * 24, row_scale);
#else
    if (cid < NRGB) ahead.start(cid * LR_RG * 16, LR_ROWS, exc_ptr, exc_col, exc_dw, tail, x, NBLK * 24, row_scale);
#endif
#endif
#if LR_XW
    float xr[6]; // the x piece of the next super-chunk this warp stages
    if (sc < SC) load_xpiece(xr, x, sc, lane);
#elif !LR_PRO && !LR_XROT && LR_I8
    if (!NO_X_STAGE) stage_x8_prologue<false>(tab, xs8, xsc, gtab, x);
#elif !LR_PRO && !LR_XROT
    for (int i = threadIdx.x; i < SC * 96; i += LR_THREADS) {
        const int c = 2 * i;
        xs[i] = lr_pack_h2(c < NBLK * 24 ? x[c] : 0.f, c + 1 < NBLK * 24 ? x[c + 1] : 0.f);
    }
#endif
#if LR_NORM && !LR_SIDE
    norm_sum(x, threadIdx.x, LR_THREADS);
#endif
#if LR_EARLY == 2
    lr_cp_table_wait(); // this thread's table copies, before the barrier makes them everyone's
#endif
    CTA_SYNC();

#if LR_I8 && !LR_LOADONLY
    // the lane's x-digit slot and its test, once: at 72-80 registers ptxas
    // otherwise rebuilt them from SR_TID every step (14B 3-bit gate|up loop
    // 171 -> 167 instructions with red_g below; layer + PDL 61.81 / 61.67
    // -> 60.95 us, h200_gemv_14b_ball.csv 6194a10+h*)
    const bool xact = (g >> 1) == q;
    const u8 *const xl8 = xs8 + (g & 1) * 48 + q * 96;
#endif
    u32 bits[LR_RG]; // LR_LOADONLY: the set bits of the row groups' segments
    float acc[LR_RG][LR_NACC][4];
    (void)bits;
    // One segment of super-chunk scx decoded into yacc (the GEMV), or its
    // set bits counted (LR_LOADONLY): the loop body of every mode.
    auto decode = [&](seg_regs (&C)[LR_RG], int scx) {
#if LR_LOADONLY
#pragma unroll
        for (int r = 0; r < LR_RG; r++) {
            bits[r] += __popc(C[r].h.x) + __popc(C[r].h.y);
#pragma unroll
            for (int j = 0; j < 3; j++)
                bits[r] += __popc(C[r].w[j].x) + __popc(C[r].w[j].y) + __popc(C[r].w[j].z) + __popc(C[r].w[j].w);
        }
#elif LR_I8
        // this lane's x digits (hi for even g, lo for odd) of blocks 2q, 2q + 1
        // where g / 2 is its slot q, else 48 zero bytes
        const uint4 *xv = xact ? (const uint4 *)(xl8 + scx * 384) : xz;
        const uint4 xd[3] = { xv[0], xv[1], xv[2] };
        const float xsf = xsc[scx];
#pragma unroll
        for (int r = 0; r < LR_RG; r++) {
            uint4 e[2][2]; // [row half][block 2q + u]
#if LR_C3
            // the 3-bit form: four entries' byte offsets from the 12-bit
            // fields of H, H2, and the twelve int8-form words from the nine
            // stored ones (per triple three ANDs, and the fourth word
            // gathered from the triple's spare nibble bits)
            const u32 H = C[r].w[2].y, H2 = C[r].w[2].z;
            const u32 o11 = ((H & 0xfu) << 4) | ((H >> 8) & 0xf00u) | ((H2 & 0xfu) << 12);
            load_entries(e, make_uint2(H & 0xfff0fff0u, (H2 & 0xfff0u) | o11 << 16), tab);
            // word t at its use (each is used once): stored word S_i is
            // w[i / 4] component i % 4 (S8 = w[2].x)
            auto V = [&](int t) -> u32 {
                const int G = t >> 2, m = t & 3, i = 3 * G + (m < 3 ? m : 0);
                const u32 A = word_of(C[r].w[i >> 2], i & 3);
                if (m < 3) return A & 0x77777777u;
                const u32 B = word_of(C[r].w[(i + 1) >> 2], (i + 1) & 3), Cw = word_of(C[r].w[(i + 2) >> 2], (i + 2) & 3);
                return ((A >> 3) & 0x11111111u) | ((B >> 2) & 0x22222222u) | ((Cw >> 1) & 0x44444444u);
            };
#else
            load_entries(e, C[r].h, tab);
#endif
            float f0 = 0.f, f1 = 0.f; // rows g, g + 8
#pragma unroll
            for (int u = 0; u < 2; u++) {
                int c[4];
#pragma unroll
                for (int T = 0; T < 3; T++) {
                    const int t0 = 6 * u + 2 * T, t1 = t0 + 1;
#if LR_C3
                    const u32 w0 = V(t0), w1 = V(t1);
#else
                    const u32 w0 = word_of(C[r].w[t0 >> 2], t0 & 3), w1 = word_of(C[r].w[t1 >> 2], t1 & 3);
#endif
                    const u32 a0 = lr_prmt(e[0][u].x, e[0][u].y, w0);
                    const u32 a1 = lr_prmt(e[1][u].x, e[1][u].y, shr<16>(w0, m16));
                    const u32 a2 = lr_prmt(e[0][u].x, e[0][u].y, w1);
                    const u32 a3 = lr_prmt(e[1][u].x, e[1][u].y, shr<16>(w1, m16));
                    imma(c, a0, a1, a2, a3, word_of(xd[t0 >> 2], t0 & 3), word_of(xd[t1 >> 2], t1 & 3), T == 0);
                }
                f0 += (float)(c[0] * 256 + c[1]) * __uint_as_float(e[0][u].w);
                f1 += (float)(c[2] * 256 + c[3]) * __uint_as_float(e[1][u].w);
            }
            yacc[r][0] += f0 * xsf;
            yacc[r][1] += f1 * xsf;
        }
#else
        // this lane's x: blocks 2q (tiles 0-5) and 2q + 1 (tiles 6-11), 8 columns per tile pair
        const uint4 *xv = (const uint4 *)(xs + scx * 96 + 24 * q);
        const uint4 *xv0 = act0 ? xv : xz, *xv1 = act1 ? xv : xz - 3;
#pragma unroll
        for (int r = 0; r < LR_RG; r++) {
            uint4 e[2][2]; // [row half][block 2q + j]
            load_entries(e, C[r].h, tab);
#pragma unroll
            for (int tp = 0; tp < 6; tp++) {
                const uint4 xb = tp < 3 ? xv0[tp] : xv1[tp];
#pragma unroll
                for (int tt = 0; tt < 2; tt++) {
                    const int t = 2 * tp + tt, j = t >= 6;
                    const u32 w = word_of(C[r].w[t >> 2], t & 3);
                    // codes in nibbles 1, 3 | 5, 7 (rows g | g + 8 of one tile
                    // half) and 0, 2 | 4, 6 (the other): a0 | a2, a1 | a3
                    const u32 s02 = sels(w, mF0), s13 = sels(w << 4, mF0);
                    const u32 a0 = pair(s02, e[0][j]);
                    const u32 a1 = pair(s13, e[1][j]);
                    const u32 a2 = pair(shr<16>(s02, m16), e[0][j]);
                    const u32 a3 = pair(shr<16>(s13, m16), e[1][j]);
                    if (t < LR_NACC)
                        mma_z(acc[r][t % LR_NACC], a0, a1, a2, a3, tt ? xb.z : xb.x, tt ? xb.w : xb.y);
                    else
                        lr_mma16816(acc[r][t % LR_NACC], a0, a1, a2, a3, tt ? xb.z : xb.x, tt ? xb.w : xb.y);
                }
            }
            // C[m][n] = row m's unscaled dot over block slot n: lane (g, q)
            // holds rows g, g + 8 x slots 2q, 2q + 1, the blocks of its
            // four entries; each gets its f32 scale (entry bytes 12..15).
#pragma unroll
            for (int a = 1; a < LR_NACC; a++)
#pragma unroll
                for (int i = 0; i < 4; i++) acc[r][0][i] += acc[r][a][i];
            yacc[r][0] += acc[r][0][0] * __uint_as_float(e[0][0].w) + acc[r][0][1] * __uint_as_float(e[0][1].w);
            yacc[r][1] += acc[r][0][2] * __uint_as_float(e[1][0].w) + acc[r][0][3] * __uint_as_float(e[1][1].w);
        }
#endif
    };

#if LR_BAL
    // Balanced split (LR_BAL = the most row groups a CTA gets, as the host
    // planned the grid): the batch loop below deals whole batches to warp
    // groups and super-chunks round-robin to a group's warps, so on the 14B
    // gate|up (2176 row groups, 27 super-chunks) the slowest warp decodes
    // 21 segments where the mean is 18.6. Here each warp gets a contiguous
    // run of its CTA's segments within one of the CTA's mean (CTAs differ
    // by at most one row group: on down, 2 or 3 of 320 over 132 SMs, which
    // this cannot even out). A run may cross row groups: the warp stores
    // one 16-row partial per row group it leaves, and a row's sum is the
    // partials of the warps that touched it, in warp order (no atomics:
    // the same y every run).
    {
        float *const red_w = red + warp * KMAX * 16;
#if LR_ILV
        // LR_ILV: the CTA's warps read adjacent segments at a time (a
        // contiguous run per warp spreads 24 streams per SM over DRAM; on
        // the 14B down its loads-only control took 17.6 us against 15.8
        // with warp groups). A warp may skip a row group: its slot stays 0.
        const int k0 = rgA;
        for (int i = lane; i < KMAX * 16; i += 32) red_w[i] = 0.f;
        __syncwarp(); // before other lanes of the warp write the slots
#else
        const int k0 = b;
#endif
#pragma unroll
        for (int r = 0; r < LR_RG; r++) yacc[r][0] = yacc[r][1] = 0.f, bits[r] = 0;
        seg_regs nxt[LR_RG];
#if LR_ILV
        // The walk's segments are consecutive in memory order (row group
        // rgA + t / SC, super-chunk t % SC = segment rgA SC + t), so the next
        // one's address is a pointer stepped by WARPS segments and a
        // position past the CTA's range loads nothing (it is never
        // decoded), where load_all recomputed and clamped the address of
        // every piece each step. (The decode-only control reads row group
        // 0's segment of the same super-chunk; the shared-memory one its copy.)
#if !LR_LOADONLY
        // this lane's row-partial slot (row g or g + 8, quad_sum_pair), once
        // (a pointer stepped with b instead compiled to 2 registers more and
        // a spill)
        float *const red_g = red_w + g + (q & 1) * 8;
#endif
        const u8 *wnext = LR_DECODEONLY == 1 ? W + (size_t)((t0 + WARPS) % SC) * SEG
                                             : W + ((size_t)rgA * SC + t0 + WARPS) * SEG;
        for (int t = t0; t < off + bS; t += WARPS) {
            int nsc = sc + WARPS, nb = b;
            if (WARPS < SC) { // (compile time) at most one row group on
                if (nsc >= SC) nsc -= SC, nb++;
            } else
                nb += nsc / SC, nsc %= SC;
#if LR_DECODEONLY == 1
            // row group 0's segment nsc, its pointer stepped like the GEMV's
            // (back by a row group where the next step moves on one)
            load_seg(nxt[0], wnext, lane);
            wnext += (size_t)WARPS * SEG;
            if (WARPS < SC && nsc + WARPS >= SC) wnext -= (size_t)SC * SEG;
            if (WARPS >= SC) wnext = W + (size_t)((nsc + WARPS) % SC) * SEG;
#elif LR_DECODEONLY
            load_all(nxt, nb, nsc);
#else
            if (t + WARPS < off + bS) load_seg(nxt[0], wnext, lane);
            wnext += (size_t)WARPS * SEG;
#endif
            decode(cur, sc);
            if (nb != b || t + WARPS >= off + bS) { // the warp leaves row group b
#else
        for (int t = t0; t < t1; t++) {
            int nb = b, nsc = sc + 1;
            if (nsc == SC) nsc = 0, nb++;
            load_all(nxt, nb, nsc);
            decode(cur, sc);
            if (nsc == 0 || t + 1 == t1) { // the run leaves row group b
#endif
#if LR_LOADONLY
                const u32 tb = lr_warp_sum_u32(bits[0]);
                if (lane < 16) ((u32 *)red_w)[(b - k0) * 16 + lane] = tb;
                bits[0] = 0;
#else
#if LR_ILV
                // two shuffles instead of quad_sum's four, same sums (14B layer
                // + PDL 61.41 / 61.26 -> 60.44 / 60.32 us, one process,
                // h200_gemv_14b_ball.csv e4cb242+q*)
                const float v = quad_sum_pair(yacc[0][0], yacc[0][1], q & 1);
                yacc[0][0] = yacc[0][1] = 0.f;
                if (q < 2) red_g[(b - k0) * 16] = v;
#else
                const float v0 = quad_sum(yacc[0][0]), v1 = quad_sum(yacc[0][1]);
                yacc[0][0] = yacc[0][1] = 0.f;
                if (q == 0) red_w[(b - k0) * 16 + g] = v0, red_w[(b - k0) * 16 + g + 8] = v1;
#endif
#endif
            }
            cur[0] = nxt[0];
            b = nb, sc = nsc;
        }
        CTA_SYNC();
#if LR_TRIG
        // every weight of this CTA read: the next kernel may launch (the
        // first invocation in a CTA counts; its wait still waits for this
        // grid's exit, so nothing it reads changes)
        lr_pdl_launch_dependents();
#endif
        // row i of the CTA's rows: the partials of the warps whose runs
        // touched its row group j, in warp order
        float *tot = red + WARPS * KMAX * 16;
#if LR_SPLIT
        u8 *skip = (u8 *)(tot + LR_BAL * 16);
#endif
        for (int i = threadIdx.x; i < (rgB - rgA) * 16; i += LR_THREADS) {
            const int j = i >> 4;
#if LR_LOADONLY
            u32 sum = 0;
#else
            float sum = 0.f;
#endif
            for (int w = 0; w < WARPS; w++) {
#if LR_ILV
                const int a = 0; // every warp's slot j (0 where it had no segment)
#else
                // warp w's run [a, e): its first row group is a / SC
                const int a = off + w * bS / WARPS, e = off + (w + 1) * bS / WARPS;
                if (!(a < (j + 1) * SC && e > j * SC && a < e)) continue;
#endif
#if LR_LOADONLY
                sum += ((const u32 *)red)[(w * KMAX + j - a / SC) * 16 + (i & 15)];
#else
                sum += red[(w * KMAX + j - a / SC) * 16 + (i & 15)];
#endif
            }
#if LR_SPLIT
            // a row group shared with the previous (j == 0, off > 0) or the
            // next CTA: the first of the two to get here leaves its partial
            // in the row's slot, the second takes it and finishes the row
            // (a + b == b + a: the same y whichever comes first)
            bool mine = true;
            if (rgA * 16 + i < LR_ROWS && ((j == 0 && off > 0) || (rgA + j + 1) * SC > tB)) {
#if LR_SWIGLU
                // a gate/up pair (rows i, i + 1 on neighbouring lanes) must be
                // finished by one CTA: the gate row's thread exchanges both
                // partials at once (lr_exch128); the second to arrive takes the
                // other's and finishes both rows
                const u32 pm = 3u << (lane & ~1);
                const float up = __shfl_down_sync(pm, sum, 1);
                float up_sum = 0.f;
                int m = 0;
                if (!(i & 1)) {
                    const int row = rgA * 16 + i;
#if __CUDA_ARCH__ >= 900
                    u64 olo, ohi;
                    lr_exch128(&split_slot[row], (1ull << 32) | (u64)lr_bits(sum), (u64)__float_as_uint(up), olo, ohi);
#else
                    // no 128-bit atomics: the up partial waits in this CTA's
                    // half of the next slot (side 1: the CTA starting inside
                    // the group), visible before the exchange says so (slower;
                    // the host takes this end on sm_90 only)
                    const int side = j == 0 && off > 0;
                    u32 *half = (u32 *)&split_slot[row + 1];
                    half[side] = __float_as_uint(up);
                    __threadfence();
                    const u64 olo = atomicExch(&split_slot[row], (1ull << 32) | (u64)lr_bits(sum));
                    __threadfence();
                    const u64 ohi = olo >> 32 ? __ldcg(half + (side ^ 1)) : 0u;
#endif
                    if (olo >> 32) {
                        sum = sum + lr_from_bits<float>((u32)olo);
                        up_sum = up + __uint_as_float((u32)ohi);
                        split_slot[row] = 0, split_slot[row + 1] = 0; // empty for the next launch
                        m = 1;
                    }
                }
                m = __shfl_sync(pm, m, lane & ~1);
                up_sum = __shfl_sync(pm, up_sum, lane & ~1);
                if (i & 1) sum = up_sum;
                mine = m;
#else
                const u64 old = atomicExch(&split_slot[rgA * 16 + i], (1ull << 32) | (u64)lr_bits(sum));
                if (old >> 32) {
                    sum = sum + lr_from_bits<decltype(sum)>((u32)old);
                    split_slot[rgA * 16 + i] = 0; // empty for the next launch
                } else
                    mine = false;
#endif
            }
            skip[i] = !mine;
#if LR_LOADONLY
            if (mine && rgA * 16 + i < LR_ROWS) y[rgA * 16 + i] = (float)sum;
#endif
#elif LR_LOADONLY
            if (rgA * 16 + i < LR_ROWS) y[rgA * 16 + i] = (float)sum;
#endif
#if !LR_LOADONLY
            tot[i] = sum;
#endif
        }
#if !LR_LOADONLY
#if LR_SIDE
        lr_bar_sync(8, LR_THREADS + 32 * LR_SIDE); // the partials, and the side warps' row values
#else
        __syncthreads();
#endif
#if EPF
        // every row's scale, exception range and tail term were loaded
        // before the main loop, its exception lists prefetched into L2: all
        // CTAs end together here, so the end's chain of dependent loads is
        // the kernel's last latency
#if LR_SPLIT
        ahead.template finish<1, LR_SWIGLU != 0>(tot, rgA * 16, min(LR_ROWS, rgB * 16), exc_col, exc_dw, x, y, skip);
#else
        ahead.template finish<1, LR_SWIGLU != 0>(tot, rgA * 16, min(LR_ROWS, rgB * 16), exc_col, exc_dw, x, y);
#endif
#elif LR_SIDE
        lr_rows_epilogue_side<LR_THREADS, LR_BAL * 16, 1, SIDE_NR, false, LR_SWIGLU != 0>(tot, rgA * 16, min(LR_ROWS, rgB * 16),
                                                                                        sd, 0, y
#if LR_SPLIT
                                                                                        , skip
#endif
        );
#else
        lr_rows_epilogue<LR_THREADS, LR_BAL * 16, 1, TAIL, false, LR_SWIGLU != 0>(tot, rgA * 16, min(LR_ROWS, rgB * 16), exc_ptr, exc_col,
                                                          exc_dw, tail, x, NBLK * 24, row_scale, y
#if LR_SPLIT
                                                          , skip
#endif
        );
#endif
#endif
    }
#else
    for (int par = 0; b < NRGB; b += ncl, par ^= 1) {
#if EPF
        // the first batch's values were fetched before the class table; a
        // later one's wait here (persistent grids only)
        if (b != cid) ahead.start(b * LR_RG * 16, LR_ROWS, exc_ptr, exc_col, exc_dw, tail, x, NBLK * 24, row_scale);
#endif
#if LR_LOADONLY
#pragma unroll
        for (int r = 0; r < LR_RG; r++) bits[r] = 0;
#endif
#pragma unroll
        for (int r = 0; r < LR_RG; r++) yacc[r][0] = yacc[r][1] = 0.f;

        // One segment: its x staged (xw), the segment ahead loaded into N
        // (prefetch 1, 2), C decoded; prefetch 0 and 2 leave the next one
        // in C, prefetch 1 in N.
        seg_regs nxt[LR_RG];
        auto step = [&](seg_regs (&C)[LR_RG], seg_regs (&N)[LR_RG]) {
#if LR_XW
            // The first batch of this CTA stages x for its super-chunks; the
            // next piece's loads go out before this segment decodes.
            if (b == cid) {
#if LR_I8
                stage_x8(xs8, xsc, sc, xr, lane);
#else
#pragma unroll
                for (int j = 0; j < 3; j++) xs[sc * 96 + 3 * lane + j] = lr_pack_h2(xr[2 * j], xr[2 * j + 1]);
#endif
                if (sc + WARPS < SC) load_xpiece(xr, x, sc + WARPS, lane);
                __syncwarp();
            }
#endif
#if LR_PREFETCH == 2
            advance(pb, psc);
            load_all(N, pb, psc);
#elif LR_PREFETCH == 1
            int nb = b, nsc = sc;
            advance(nb, nsc);
            load_all(N, nb, nsc);
#endif
            decode(C, sc);
#if LR_PREFETCH == 2
#pragma unroll
            for (int r = 0; r < LR_RG; r++) C[r] = n1[r], n1[r] = N[r];
#elif LR_PREFETCH == 0
            (void)N;
            {
                int nb = b, nsc = sc;
                advance(nb, nsc);
                load_all(C, nb, nsc);
            }
#endif
        };
        for (; sc < SC; sc += WARPS) {
            step(cur, nxt);
#if LR_PREFETCH == 1
#pragma unroll
            for (int r = 0; r < LR_RG; r++) cur[r] = nxt[r];
#endif
        }
        sc = warp;
        const int rg0 = b * LR_RG;
        float *rb = red + (gid * 2 + par) * (WARPS * LR_RG * 16);
#if LR_LOADONLY
        {
            u32 *rbu = (u32 *)rb;
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                const u32 t = lr_warp_sum_u32(bits[r]);
                if (lane == 0) rbu[warp * LR_RG + r] = t;
            }
            group_sync(gid);
            for (int i = gtid; i < LR_RG * 16; i += GT) {
                u32 t = 0;
                for (int w = 0; w < WARPS; w++) t += rbu[w * LR_RG + i / 16];
                if (rg0 * 16 + i < LR_ROWS) y[rg0 * 16 + i] = (float)t;
            }
            continue;
        }
#endif
        // rows g and g + 8: the sum over the four lanes q of the row
#pragma unroll
        for (int r = 0; r < LR_RG; r++)
#pragma unroll
            for (int h = 0; h < 2; h++) acc[r][0][2 * h] = quad_sum(yacc[r][h]);
        if (q == 0)
#pragma unroll
            for (int r = 0; r < LR_RG; r++) {
                rb[(warp * LR_RG + r) * 16 + g] = acc[r][0][0];
                rb[(warp * LR_RG + r) * 16 + g + 8] = acc[r][0][2];
            }
#if LR_SIDE
        if (b == cid) { // the first batch: the side warp made its row values
            lr_bar_sync(8 + gid, GT + 32 * LR_SIDE);
            lr_rows_epilogue_side<GT, LR_RG * 16, WARPS, SIDE_NR, (LR_GROUPS > 1), LR_SWIGLU != 0>(
                rb, rg0 * 16, LR_ROWS, sd, gid * LR_RG * 16, y);
            continue;
        }
#endif
        group_sync(gid);
        // The rows of the batch: the warps' partial sums, exceptions, row
        // scale, tail.
#if EPF
        ahead.template finish<WARPS, LR_SWIGLU != 0>(rb, rg0 * 16, LR_ROWS, exc_col, exc_dw, x, y);
#else
        lr_rows_epilogue<GT, LR_RG * 16, WARPS, TAIL, (LR_GROUPS > 1), LR_SWIGLU != 0>(rb, rg0 * 16, LR_ROWS, exc_ptr, exc_col, exc_dw,
                                                                     tail, x, NBLK * 24, row_scale, y);
#endif
    }
#endif
}
