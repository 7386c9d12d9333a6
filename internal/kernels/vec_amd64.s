//go:build !purego

#include "textflag.h"
#include "rows_amd64.h"

// Every instruction that touches a vector register is VEX-encoded (V...).
// A legacy SSE instruction after a 256-bit one, such as Go's MOVL R, X
// (the SSE MOVD), costs an AVX-SSE transition: on this project's machines
// it made the row steps three times slower. TestKernelsVEXOnly checks.

// PCALIGN $64 starts the hottest inner loops (the waking step's row step,
// batch product, tile product and twin gather) on a 64-byte line, so that
// their place in the CPU's fetch and op-cache lines no longer depends on
// where the linker puts the function. Moving the kernels from core to this
// package shifted every function by 32 bytes mod 64 and the headline run
// took about 6% more CPU time (docs/kernels.md); aligned, as before.

// COPYLANES8 is the row steps' fused column copy of one block of 8 new
// weights, wT[col[s]*ld] = w[s], lane by lane (AVX2 has no scatter): lanes
// 0-3 are in LO, lanes 4-7 in HI. The block's 8 columns, W bytes each,
// are loaded by LOAD from COLS+IDX and scaled by LD (the column stride in
// bytes) into T0 and T1 in turn, two at a time, and the lanes stored at
// WT plus those offsets. COPYLANES4 is one half: the 4 lanes of X from
// column FIRST on.
#define COPYLANES4(LOAD, W, FIRST, COLS, IDX, LD, WT, X, T0, T1) \
	LOAD ((FIRST+0)*W)(COLS)(IDX*1), T0 \
	LOAD ((FIRST+1)*W)(COLS)(IDX*1), T1 \
	IMULQ LD, T0 \
	IMULQ LD, T1 \
	VMOVSS X, (WT)(T0*1) \
	VEXTRACTPS $1, X, (WT)(T1*1) \
	LOAD ((FIRST+2)*W)(COLS)(IDX*1), T0 \
	LOAD ((FIRST+3)*W)(COLS)(IDX*1), T1 \
	IMULQ LD, T0 \
	IMULQ LD, T1 \
	VEXTRACTPS $2, X, (WT)(T0*1) \
	VEXTRACTPS $3, X, (WT)(T1*1)

#define COPYLANES8(LOAD, W, COLS, IDX, LD, WT, LO, HI, T0, T1) \
	COPYLANES4(LOAD, W, 0, COLS, IDX, LD, WT, LO, T0, T1) \
	COPYLANES4(LOAD, W, 4, COLS, IDX, LD, WT, HI, T0, T1)

// FBGATHERFLAGS loads 8 synapses' columns (DX) into Y1, gathers their
// gradients (g at R8; +0 without a gather when g is nil) into Y2 and their
// pre units' flag words (R11) into Y3.
#define FBGATHERFLAGS \
	VMOVDQU (DX)(AX*1), Y1 \
	VXORPS  Y2, Y2, Y2 \
	TESTQ   R8, R8 \
	JZ      fbnograd \
	VMOVDQU Y13, Y7 \
	VGATHERDPS Y7, (R8)(Y1*4), Y2 \
fbnograd: \
	VMOVDQU Y13, Y7 \
	VPXOR   Y3, Y3, Y3 \
	VPGATHERDD Y7, (R11)(Y1*4), Y3

// FBWORDFLAGS is FBGATHERFLAGS from packed words (DX: col | flags<<16):
// the flags are the high halves, the columns the low ones.
#define FBWORDFLAGS \
	VMOVDQU (DX)(AX*1), Y1 \
	VPSRLD  $16, Y1, Y3 \
	VXORPS  Y2, Y2, Y2 \
	TESTQ   R8, R8 \
	JZ      fbnograd \
	VPSLLD  $16, Y1, Y1 \
	VPSRLD  $16, Y1, Y1 \
	VMOVDQU Y13, Y7 \
	VGATHERDPS Y7, (R8)(Y1*4), Y2 \
fbnograd:

// FBROW is the body of the heavy-ball row step with a twin: DI w, R10 fb,
// SI v, DX the columns (read by LOADFLAGS, which leaves the gradients in
// Y2 and the flags in Y3, and by COLLOAD, the 4-byte load of one column
// for the copy), R8 g, BX k, R12 ld, R15 wT.
#define FBROW(LOADFLAGS, COLLOAD) \
	SHLQ $2, R12 \
	FBCONSTS \
	MOVQ R15, BX \
	VPCMPEQD Y13, Y13, Y13 \
	LEAQ -32(CX*4), R9 \
	VMOVUPS (DI)(R9*1), Y0 \
	VMOVUPS Y0, 0(SP) \
	VMOVUPS (R10)(R9*1), Y0 \
	VMOVUPS Y0, 32(SP) \
	VMOVUPS (SI)(R9*1), Y0 \
	VMOVUPS Y0, 64(SP) \
	MOVQ $0, 96(SP) \
	SHRQ $3, CX \
	SHLQ $5, CX \
	XORQ AX, AX \
fbloop: \
	CMPQ AX, CX \
	JGE  fbdone \
	LOADFLAGS \
	FBVELOCITY \
	FBCLAMP(DI) \
	VEXTRACTF128 $1, Y7, X0 \
	COPYLANES8(COLLOAD, 4, DX, AX, R12, BX, X7, X0, R9, R13) \
	FBCLAMP(R10) \
	ADDQ $32, AX \
	JMP  fbloop \
fbdone: \
	CMPQ  96(SP), $0 \
	JNE   fbexit \
	MOVQ  w_len+8(FP), AX \
	TESTQ $7, AX \
	JZ    fbexit \
	MOVQ  $1, 96(SP) \
	LEAQ  -32(AX*4), AX \
	VMOVUPS 0(SP), Y0 \
	VMOVUPS Y0, (DI)(AX*1) \
	VMOVUPS 32(SP), Y0 \
	VMOVUPS Y0, (R10)(AX*1) \
	VMOVUPS 64(SP), Y0 \
	VMOVUPS Y0, (SI)(AX*1) \
	LEAQ  32(AX), CX \
	JMP   fbloop \
fbexit: \
	VZEROUPPER \
	RET

// func addRowsAVX2(c, v []float32, off []int32, b []float32, zero bool)
//
// For j in [0, len(c)) rounded down to a multiple of 8:
//	c[j] = c[j] + v[t]*b[off[t]+j], t ascending,
// multiply and add separate (no FMA), as in addRowsGo; with zero, c starts
// from +0 instead of its contents (clear then add, without the clear's
// stores). Strips of 64 then 8 elements of c stay in registers while t
// runs. The caller checks bounds and does the tail.
TEXT ·addRowsAVX2(SB), NOSPLIT, $0-97
	MOVQ c_base+0(FP), DI
	MOVQ c_len+8(FP), CX
	MOVQ v_base+24(FP), SI
	MOVQ v_len+32(FP), R8
	MOVQ off_base+48(FP), R9
	MOVQ b_base+72(FP), R10
	MOVBLZX zero+96(FP), R15
	XORQ AX, AX

strip64:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $64
	JLT  strip8
	LEAQ (DI)(AX*4), R11
	LEAQ (R10)(AX*4), R12
	TESTQ R15, R15
	JNZ  zero64
	ROWS8LOAD(R11, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	XORQ BX, BX
	JMP  t64

zero64:
	ROWS8ZERO(VXORPS, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	XORQ BX, BX

t64:
	CMPQ BX, R8
	JGE  store64
	VBROADCASTSS (SI)(BX*4), Y15
	MOVLQSX (R9)(BX*4), R13
	LEAQ (R12)(R13*4), R14
	MULADD4(R14, 32, 0, Y15, Y8, Y9, Y10, Y11, Y0, Y1, Y2, Y3)
	MULADD4(R14, 32, 4, Y15, Y8, Y9, Y10, Y11, Y4, Y5, Y6, Y7)
	INCQ BX
	JMP  t64

store64:
	ROWS8STORE(R11, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	ADDQ $64, AX
	JMP  strip64

strip8:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $8
	JLT  done
	LEAQ (DI)(AX*4), R11
	LEAQ (R10)(AX*4), R12
	VXORPS Y0, Y0, Y0
	TESTQ R15, R15
	JNZ  zero8
	VMOVUPS 0(R11), Y0

zero8:
	XORQ BX, BX

t8:
	CMPQ BX, R8
	JGE  store8
	VBROADCASTSS (SI)(BX*4), Y15
	MOVLQSX (R9)(BX*4), R13
	VMULPS 0(R12)(R13*4), Y15, Y8
	VADDPS Y8, Y0, Y0
	INCQ BX
	JMP  t8

store8:
	VMOVUPS Y0, 0(R11)
	ADDQ $8, AX
	JMP  strip8

done:
	VZEROUPPER
	RET

// func sgdRowInputAVX2(w, v []float32, col []uint16, g []float32, k *sgdCoef, wT []float32, ld int)
//
// sgdRowInputGo on w (len(w) >= 8; g nil for a zero gradient): separate
// multiplies and adds (no FMA) in the loop's order; the flush keeps v iff
// |v| >= tiny. Then copyColumn on those elements, fused: each lane of the
// new weights is stored at wT[col[s]*ld] (AVX2 has no scatter: a scalar
// store per lane, the column read again as a scalar); ld = 0 skips the
// copy. len(w) >= 8; a tail shorter than 8 is done as one more block over
// the last 8 elements, from their original weights and velocities (kept in
// Y14 and Y15 and written back first): the lanes the loop already did are
// recomputed from the same inputs to the same bits, and their column-copy
// stores repeat in ascending order. The caller checks bounds.
TEXT ·sgdRowInputAVX2(SB), NOSPLIT, $0-136
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ v_base+24(FP), SI
	MOVQ col_base+48(FP), DX
	MOVQ g_base+72(FP), R8
	MOVQ k+96(FP), BX
	MOVQ wT_base+104(FP), R13
	MOVQ ld+128(FP), R11
	SHLQ $2, R11             // column stride in bytes
	VBROADCASTSS 0(BX), Y8   // wd
	VBROADCASTSS 4(BX), Y9   // mu
	VBROADCASTSS 8(BX), Y10  // eta
	VBROADCASTSS 12(BX), Y12 // tiny
	MOVL $0x7fffffff, R9
	VMOVD R9, X11
	VPBROADCASTD X11, Y11    // abs mask
	VPCMPEQD Y13, Y13, Y13   // all ones (gather mask)
	LEAQ -32(CX*4), R9       // bytes before the last 8 elements
	VMOVUPS (DI)(R9*1), Y14  // their original weights ...
	VMOVUPS (SI)(R9*1), Y15  // ... and velocities, for the tail
	XORQ BX, BX              // tail not done
	SHRQ $3, CX
	SHLQ $5, CX              // bytes in whole blocks of 8
	XORQ AX, AX
	XORQ R10, R10            // bytes of col (2 per synapse)

	PCALIGN $64
loop:
	CMPQ AX, CX
	JGE  done
	VMOVUPS (DI)(AX*1), Y0       // ws
	VXORPS  Y2, Y2, Y2
	TESTQ   R8, R8
	JZ      nograd               // g nil: a row without terms
	VPMOVZXWD (DX)(R10*1), Y1    // col, widened
	VMOVDQU Y13, Y7
	VGATHERDPS Y7, (R8)(Y1*4), Y2 // g[col]

nograd:
	VMULPS  Y0, Y8, Y3           // wd*ws
	VSUBPS  Y3, Y2, Y2           // gs = g - wd*ws
	VMULPS  (SI)(AX*1), Y9, Y4   // mu*v
	VADDPS  Y2, Y4, Y4           // mu*v + gs
	VANDPS  Y11, Y4, Y5          // |.|
	VCMPPS  $0x05, Y12, Y5, Y6   // !(|.| < tiny): NaN kept, as flushTiny
	VANDPS  Y6, Y4, Y4           // flushed velocity
	VMOVUPS Y4, (SI)(AX*1)
	VMULPS  Y4, Y10, Y3          // eta*v
	VADDPS  Y3, Y0, Y0           // ws + eta*v
	VMOVUPS Y0, (DI)(AX*1)
	// The column copy: wT[col[s]*ld] = ws, lane by lane.
	TESTQ   R11, R11
	JZ      next
	VEXTRACTF128 $1, Y0, X3
	COPYLANES8(MOVWLZX, 2, DX, R10, R11, R13, X0, X3, R12, R9)

next:
	ADDQ $32, AX
	ADDQ $16, R10
	JMP  loop

done:
	TESTQ BX, BX
	JNZ   exit
	MOVQ  w_len+8(FP), AX
	TESTQ $7, AX
	JZ    exit
	MOVQ  $1, BX
	LEAQ  -32(AX*4), AX      // the last 8 elements
	MOVQ  AX, R10
	SHRQ  $1, R10
	VMOVUPS Y14, (DI)(AX*1)
	VMOVUPS Y15, (SI)(AX*1)
	LEAQ  32(AX), CX
	JMP   loop

exit:
	VZEROUPPER
	RET

// FBVELOCITY and FBCLAMP are the arithmetic of sgdRowFB's block of 8 at
// byte offset AX, shared by the gathering and the dense kernel. Given g in
// Y2 and the flag words in Y3, FBVELOCITY turns Y3 into the frozen mask
// (top bit) and Y4 into the excitatory one, steps the velocity at SI:
// vs = flushTiny(mu*v + g) (|.| < tiny cleared, NaN kept), kept where
// frozen, and leaves d = eta*vs in Y6. FBCLAMP(BASE) moves the weights at
// BASE: x = w + d, x -= lam*x, then max(x, 0) (+ 0, so -0 becomes +0) for
// an excitatory pre unit and min(x, 0) otherwise, the old value where
// frozen, stored and left in Y7. Their constants, which FBCONSTS loads
// from the sgdFBCoef at BX (R9 scratch): Y9 mu, Y10 eta, Y11 the
// absolute-value mask, Y12 tiny, Y14 lam, Y15 +0.
#define FBCONSTS \
	VBROADCASTSS 0(BX), Y9 \
	VBROADCASTSS 4(BX), Y10 \
	VBROADCASTSS 8(BX), Y14 \
	VBROADCASTSS 12(BX), Y12 \
	MOVL $0x7fffffff, R9 \
	VMOVD R9, X11 \
	VPBROADCASTD X11, Y11 \
	VXORPS Y15, Y15, Y15

#define FBVELOCITY \
	VPSLLD  $30, Y3, Y4 \
	VPSLLD  $31, Y3, Y3 \
	VMOVUPS (SI)(AX*1), Y0 \
	VMULPS  Y0, Y9, Y5 \
	VADDPS  Y2, Y5, Y5 \
	VANDPS  Y11, Y5, Y6 \
	VCMPPS  $0x05, Y12, Y6, Y6 \
	VANDPS  Y6, Y5, Y5 \
	VMULPS  Y5, Y10, Y6 \
	VBLENDVPS Y3, Y0, Y5, Y0 \
	VMOVUPS Y0, (SI)(AX*1)

#define FBCLAMP(BASE) \
	VMOVUPS (BASE)(AX*1), Y8 \
	VADDPS  Y6, Y8, Y7 \
	VMULPS  Y7, Y14, Y1 \
	VSUBPS  Y1, Y7, Y7 \
	VMAXPS  Y7, Y15, Y1 \
	VADDPS  Y15, Y1, Y1 \
	VMINPS  Y7, Y15, Y2 \
	VBLENDVPS Y4, Y1, Y2, Y7 \
	VBLENDVPS Y3, Y8, Y7, Y7 \
	VMOVUPS Y7, (BASE)(AX*1)

// func sgdRowFBAVX2(w, fb, v []float32, col []int32, g []float32, flags []int32, k *sgdFBCoef, wT []float32, ld int)
//
// sgdRowFBGo on w (len(w) >= 8): the same
// float32 operations in the same order (no FMA); frozen lanes (flags[col]
// bit 0) are blended back to their old values, and bit 1 (excitatory)
// picks the clamp: each bit is shifted into the top bit VBLENDVPS reads.
// The clamps follow Go's max(x, 0) and min(x, 0), NaN kept: MAX and MIN
// return their second source (the weight) for NaN and for two zeros, so
// min(-0, 0) = -0, and max's + 0 turns -0 into Go's +0. Then copyColumn
// on those elements, fused as in sgdRowInputAVX2 (frozen lanes store their
// kept weight, as the copy after the loop does). len(w) >= 8; the tail as
// in sgdRowInputAVX2, the originals of the last 8 elements kept below SP.
TEXT ·sgdRowFBAVX2(SB), NOSPLIT, $104-184
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ fb_base+24(FP), R10
	MOVQ v_base+48(FP), SI
	MOVQ col_base+72(FP), DX
	MOVQ g_base+96(FP), R8
	MOVQ flags_base+120(FP), R11
	MOVQ k+144(FP), BX
	MOVQ ld+176(FP), R12
	MOVQ wT_base+152(FP), R15
	FBROW(FBGATHERFLAGS, MOVLQSX)

// func sgdRowFBWordsAVX2(w, fb, v []float32, colWord []int32, g []float32, k *sgdFBCoef, wT []float32, ld int)
//
// sgdRowFBAVX2 with each synapse's column and flags in one word
// (colWord[s] = col[s] | flags<<16): the column is the word's low half,
// for the gradient's gather and the copy's stores, and the flags its high
// half, with no gather. The caller checks bounds.
TEXT ·sgdRowFBWordsAVX2(SB), NOSPLIT, $104-160
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ fb_base+24(FP), R10
	MOVQ v_base+48(FP), SI
	MOVQ colWord_base+72(FP), DX
	MOVQ g_base+96(FP), R8
	MOVQ k+120(FP), BX
	MOVQ ld+152(FP), R12
	MOVQ wT_base+128(FP), R15
	FBROW(FBWORDFLAGS, MOVWQZX)

// func sgdRowFBDenseAVX2(w, fb, v, g []float32, flags []int32, k *sgdFBCoef)
//
// sgdRowFBAVX2 on len(w) (a multiple of 8) synapses of a dense row, where
// synapse j comes from pre unit j: g and the flag words are loaded in step
// with the row instead of gathered, and there is no column copy (the
// caller rewrites it after the layer, a tile at a time). The caller checks
// bounds.
TEXT ·sgdRowFBDenseAVX2(SB), NOSPLIT, $0-128
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ fb_base+24(FP), R10
	MOVQ v_base+48(FP), SI
	MOVQ g_base+72(FP), R8
	MOVQ flags_base+96(FP), R11
	MOVQ k+120(FP), BX
	FBCONSTS
	SHLQ $2, CX              // bytes
	XORQ AX, AX

fdloop:
	CMPQ AX, CX
	JGE  fddone
	VMOVUPS (R8)(AX*1), Y2   // g
	VMOVDQU (R11)(AX*1), Y3  // flags
	FBVELOCITY
	FBCLAMP(DI)              // w
	FBCLAMP(R10)             // fb
	ADDQ $32, AX
	JMP  fdloop

fddone:
	VZEROUPPER
	RET

// TILES8TERM adds one term to the 64 drives in Y0-Y7 (8 tiles of 8 rows):
// v, broadcast in Y15, times the column whose first tile starts at R14,
// the tiles DX bytes apart (CX = 3 DX), multiply and add separate, through
// Y8-Y11; R15 is clobbered.
#define TILES8TERM \
	LEAQ (R14)(DX*4), R15 \
	VMULPS (R14), Y15, Y8 \
	VMULPS (R14)(DX*1), Y15, Y9 \
	VMULPS (R14)(DX*2), Y15, Y10 \
	VMULPS (R14)(CX*1), Y15, Y11 \
	VADDPS Y8, Y0, Y0 \
	VADDPS Y9, Y1, Y1 \
	VADDPS Y10, Y2, Y2 \
	VADDPS Y11, Y3, Y3 \
	VMULPS (R15), Y15, Y8 \
	VMULPS (R15)(DX*1), Y15, Y9 \
	VMULPS (R15)(DX*2), Y15, Y10 \
	VMULPS (R15)(CX*1), Y15, Y11 \
	VADDPS Y8, Y4, Y4 \
	VADDPS Y9, Y5, Y5 \
	VADDPS Y10, Y6, Y6 \
	VADDPS Y11, Y7, Y7

// func addTiles8AVX2(c, v []float32, off []int32, b []float32, ts int)
//
// addRowsAVX2's strip of 64 on a tiled matrix: c has 64 elements, those of
// 8 consecutive tiles of 8 rows, and tile q's column j starts at
// b[q*ts + off[t]] (ts counted in floats). c[8q+e] += v[t]*b[q*ts+off[t]+e],
// t ascending, multiply and add separate. The caller checks bounds.
TEXT ·addTiles8AVX2(SB), NOSPLIT, $0-104
	MOVQ c_base+0(FP), DI
	MOVQ v_base+24(FP), SI
	MOVQ v_len+32(FP), R8
	MOVQ off_base+48(FP), R9
	MOVQ b_base+72(FP), R10
	MOVQ ts+96(FP), DX
	SHLQ $2, DX              // tile stride in bytes
	LEAQ (DX)(DX*2), CX      // 3 tile strides
	ROWS8LOAD(DI, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	XORQ BX, BX

	PCALIGN $64
tiles8:
	CMPQ BX, R8
	JGE  tiles8done
	VBROADCASTSS (SI)(BX*4), Y15
	MOVLQSX (R9)(BX*4), R13
	LEAQ (R10)(R13*4), R14
	TILES8TERM
	INCQ BX
	JMP  tiles8

tiles8done:
	ROWS8STORE(DI, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	VZEROUPPER
	RET

// func addTilesBatch8AVX2(z []float32, zbytes int, v []float32, off, ptr, cur []int32, b []float32, ts, block, end int)
//
// addTiles8AVX2 for each sample s of a batch (entries ptr[s]:ptr[s+1] of
// v and off, drives 64 floats at byte s*zbytes of z) over the blocks of
// columns in turn: block m takes each sample's entries from cur[s] on
// while off < (m+1)*block (offsets in floats; the last block the one
// whose end reaches end), keeping the 64 drives in
// registers, and leaves cur[s] at the first entry it did not take. The
// block's weights are read once from L2 and then from L1 by every sample.
// Per drive the terms are added in the order of the entries, multiply and
// add separate, as addTiles8AVX2. The caller sets cur = ptr[:n], checks
// bounds and that end covers every offset.
TEXT ·addTilesBatch8AVX2(SB), NOSPLIT, $0-176
	MOVQ z_base+0(FP), DI
	MOVQ v_base+32(FP), SI
	MOVQ off_base+56(FP), R9
	MOVQ ptr_base+80(FP), R11
	MOVQ cur_base+104(FP), R12
	MOVQ b_base+128(FP), R10
	MOVQ ts+152(FP), DX
	SHLQ $2, DX
	LEAQ (DX)(DX*2), CX
	MOVQ block+160(FP), R13  // the block's end: offsets below it

blkLoop:
	XORQ R8, R8
	MOVQ DI, AX

smpLoop:
	CMPQ R8, cur_len+112(FP)
	JGE  blkNext
	MOVLQSX (R12)(R8*4), BX
	ROWS8LOAD(AX, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)

	PCALIGN $64
entLoop:
	CMPL BX, 4(R11)(R8*4)
	JGE  smpDone
	MOVLQSX (R9)(BX*4), R14
	CMPQ R14, R13
	JGE  smpDone
	VBROADCASTSS (SI)(BX*4), Y15
	LEAQ (R10)(R14*4), R14
	TILES8TERM
	INCQ BX
	JMP  entLoop

smpDone:
	MOVL BX, (R12)(R8*4)
	ROWS8STORE(AX, 32, Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7)
	INCQ R8
	ADDQ zbytes+24(FP), AX
	JMP  smpLoop

blkNext:
	CMPQ R13, end+168(FP)
	JGE  blkDone
	ADDQ block+160(FP), R13
	JMP  blkLoop

blkDone:
	VZEROUPPER
	RET

// func transposeRows8AVX2(dst []float32, ld int, src []float32, cols, n int)
//
// transposeRows8 on the first cols (a multiple of 8) columns: per block of
// 8 columns, the 8 rows' vectors are transposed in registers (unpack,
// shuffle, swap halves) and stored as 8 columns ld floats apart. Only
// moves, so the bits are the source's. The caller checks bounds.
TEXT ·transposeRows8AVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ ld+24(FP), R14
	MOVQ src_base+32(FP), SI
	MOVQ cols+56(FP), CX
	MOVQ n+64(FP), DX
	SHLQ $2, R14             // column stride of dst in bytes
	LEAQ (R14)(R14*2), R15   // 3 columns
	SHLQ $2, CX              // bytes of a row to do
	SHLQ $2, DX              // row stride in bytes
	LEAQ (SI)(DX*1), R8      // rows 1-7
	LEAQ (R8)(DX*1), R9
	LEAQ (R9)(DX*1), R10
	LEAQ (R10)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	LEAQ (R12)(DX*1), R13
	LEAQ (R13)(DX*1), BX
	XORQ AX, AX

ttloop:
	CMPQ AX, CX
	JGE  ttdone
	VMOVUPS (SI)(AX*1), Y0       // rows a..h, columns 0-7
	VMOVUPS (R8)(AX*1), Y1
	VMOVUPS (R9)(AX*1), Y2
	VMOVUPS (R10)(AX*1), Y3
	VMOVUPS (R11)(AX*1), Y4
	VMOVUPS (R12)(AX*1), Y5
	VMOVUPS (R13)(AX*1), Y6
	VMOVUPS (BX)(AX*1), Y7
	VUNPCKLPS Y1, Y0, Y8         // a0 b0 a1 b1 | a4 b4 a5 b5
	VUNPCKHPS Y1, Y0, Y9         // a2 b2 a3 b3 | a6 b6 a7 b7
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15
	VSHUFPS $0x44, Y10, Y8, Y0   // a0 b0 c0 d0 | a4 b4 c4 d4
	VSHUFPS $0xEE, Y10, Y8, Y1   // a1 b1 c1 d1 | a5 b5 c5 d5
	VSHUFPS $0x44, Y11, Y9, Y2   // column 2 | column 6
	VSHUFPS $0xEE, Y11, Y9, Y3   // column 3 | column 7
	VSHUFPS $0x44, Y14, Y12, Y4  // e0 f0 g0 h0 | e4 f4 g4 h4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7
	VPERM2F128 $0x20, Y4, Y0, Y8 // column 0: a0 .. h0
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12 // column 4
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15
	VMOVUPS Y8, (DI)              // columns 0-3
	VMOVUPS Y9, (DI)(R14*1)
	VMOVUPS Y10, (DI)(R14*2)
	VMOVUPS Y11, (DI)(R15*1)
	LEAQ (DI)(R14*4), DI
	VMOVUPS Y12, (DI)             // columns 4-7
	VMOVUPS Y13, (DI)(R14*1)
	VMOVUPS Y14, (DI)(R14*2)
	VMOVUPS Y15, (DI)(R15*1)
	LEAQ (DI)(R14*4), DI
	ADDQ $32, AX
	JMP  ttloop

ttdone:
	VZEROUPPER
	RET

// func adamRowAVX2(w, fb, m1, m2 []float32, col []int32, g []float32, frozen []int32, sign []float32, k *adamCoef, wT []float32, ld int)
//
// adamRowGo on the first len(w) rounded down to 8 elements: the same
// float32 operations in the same order (no FMA; VSQRTPS is the correctly
// rounded square root); frozen lanes are blended back to their old values
// (their moments too unless k.leak).
// MAX/MIN with the weight as the second source keep a zero weight's sign,
// as the loop's "zero if the sign is wrong" does. fb has length 0 when the
// row has no twin (then sign is not read). Then copyColumn on those
// elements, fused as in sgdRowInputAVX2 (frozen lanes store their kept
// weight, as the copy after the loop does).
TEXT ·adamRowAVX2(SB), NOSPLIT, $0-232
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ fb_base+24(FP), R10
	MOVQ fb_len+32(FP), R15
	MOVQ m1_base+48(FP), R12
	MOVQ m2_base+72(FP), R13
	MOVQ col_base+96(FP), DX
	MOVQ g_base+120(FP), R8
	MOVQ frozen_base+144(FP), R11
	MOVQ sign_base+168(FP), R14
	MOVQ k+192(FP), BX
	MOVQ wT_base+200(FP), SI
	VPCMPEQD Y13, Y13, Y13   // all ones (gather mask)
	VXORPS Y15, Y15, Y15     // +0
	MOVL $0x7fffffff, R9
	VMOVD R9, X11
	VPBROADCASTD X11, Y11    // abs mask
	VMOVUPS 320(BX), Y14     // tiny
	VMOVDQU Y13, Y12         // moments follow the frozen mask ...
	CMPL 360(BX), $0
	JEQ  adamstart
	VPXOR Y12, Y12, Y12      // ... unless they leak

adamstart:
	SHRQ $3, CX
	SHLQ $5, CX              // bytes in whole blocks of 8
	XORQ AX, AX

adamloop:
	CMPQ AX, CX
	JGE  adamdone
	VMOVUPS (DI)(AX*1), Y0         // ws
	VMOVDQU (DX)(AX*1), Y1         // col
	VMOVDQU Y13, Y7
	VXORPS  Y2, Y2, Y2
	VGATHERDPS Y7, (R8)(Y1*4), Y2  // gs = g[col]
	VPXOR   Y3, Y3, Y3             // frozen nil: no lane frozen
	TESTQ   R11, R11
	JZ      adamfrozen
	VMOVDQU Y13, Y7
	VPGATHERDD Y7, (R11)(Y1*4), Y3 // frozen[col]
	VPCMPEQD Y15, Y3, Y3
	VPXOR   Y13, Y3, Y3            // frozen lanes: all ones

adamfrozen:
	VPAND   Y12, Y3, Y9            // lanes whose moments stay
	CMPL 352(BX), $0
	JEQ  adamnowd
	VMULPS  256(BX), Y0, Y4        // wd*ws
	VSUBPS  Y4, Y2, Y2             // gs - wd*ws

adamnowd:
	VMOVUPS (R12)(AX*1), Y4        // m1
	VMULPS  0(BX), Y4, Y5          // b1*m1
	VMULPS  32(BX), Y2, Y6         // c1*gs
	VADDPS  Y6, Y5, Y5             // a
	VANDPS  Y11, Y5, Y10
	VCMPPS  $0x05, Y14, Y10, Y10   // !(|a| < tiny)
	VANDPS  Y10, Y5, Y5            // flushTiny(a)
	VBLENDVPS Y9, Y4, Y5, Y4
	VMOVUPS Y4, (R12)(AX*1)
	VMOVUPS (R13)(AX*1), Y4        // m2
	VMULPS  64(BX), Y4, Y6         // b2*m2
	VMULPS  96(BX), Y2, Y7         // c2*gs
	VMULPS  Y2, Y7, Y7             // (c2*gs)*gs
	VADDPS  Y7, Y6, Y6             // b
	VBLENDVPS Y9, Y4, Y6, Y4
	VMOVUPS Y4, (R13)(AX*1)
	CMPL 364(BX), $0               // bc1 = 1: a/bc1 is a
	JEQ  adambc1
	VDIVPS  128(BX), Y5, Y5        // a/bc1

adambc1:
	VMULPS  192(BX), Y5, Y5        // eta*(a/bc1)
	CMPL 368(BX), $0               // bc2 = 1: b/bc2 is b
	JEQ  adambc2
	VDIVPS  160(BX), Y6, Y6        // b/bc2

adambc2:
	VSQRTPS Y6, Y6
	VADDPS  224(BX), Y6, Y6        // + eps
	VDIVPS  Y6, Y5, Y5             // d
	VADDPS  Y5, Y0, Y4             // ws + d
	CMPL 356(BX), $0
	JEQ  adamnolam
	VMULPS  288(BX), Y4, Y6        // lam*ws
	VSUBPS  Y6, Y4, Y4

adamnolam:
	TESTQ R15, R15
	JZ   adamstorew
	VMOVUPS (R14)(AX*1), Y6        // sign, per synapse
	VCMPPS  $0x0E, Y15, Y6, Y6     // sign > 0
	VMAXPS  Y4, Y15, Y7            // ws < 0 ? +0 : ws
	VMINPS  Y4, Y15, Y1            // ws > 0 ? +0 : ws
	VBLENDVPS Y6, Y7, Y1, Y4
	VMOVUPS (R10)(AX*1), Y8        // fb
	VADDPS  Y5, Y8, Y7             // bs = fb + d
	CMPL 356(BX), $0
	JEQ  adamfbnolam
	VMULPS  288(BX), Y7, Y1
	VSUBPS  Y1, Y7, Y7

adamfbnolam:
	VMAXPS  Y7, Y15, Y1
	VMINPS  Y7, Y15, Y2
	VBLENDVPS Y6, Y1, Y2, Y7
	VBLENDVPS Y3, Y8, Y7, Y7
	VMOVUPS Y7, (R10)(AX*1)

adamstorew:
	VBLENDVPS Y3, Y0, Y4, Y4
	VMOVUPS Y4, (DI)(AX*1)
	CMPQ ld+224(FP), $0            // ld = 0: no column copy
	JEQ  adamnext
	// The column copy: wT[col[s]*ld] = w[s], lane by lane (one scratch
	// register left: the column offsets one after another).
	VEXTRACTF128 $1, Y4, X6
	MOVLQSX 0(DX)(AX*1), R9
	IMULQ   ld+224(FP), R9
	VMOVSS  X4, (SI)(R9*4)
	MOVLQSX 4(DX)(AX*1), R9
	IMULQ   ld+224(FP), R9
	VEXTRACTPS $1, X4, (SI)(R9*4)
	MOVLQSX 8(DX)(AX*1), R9
	IMULQ   ld+224(FP), R9
	VEXTRACTPS $2, X4, (SI)(R9*4)
	MOVLQSX 12(DX)(AX*1), R9
	IMULQ   ld+224(FP), R9
	VEXTRACTPS $3, X4, (SI)(R9*4)
	MOVLQSX 16(DX)(AX*1), R9
	IMULQ   ld+224(FP), R9
	VMOVSS  X6, (SI)(R9*4)
	MOVLQSX 20(DX)(AX*1), R9
	IMULQ   ld+224(FP), R9
	VEXTRACTPS $1, X6, (SI)(R9*4)
	MOVLQSX 24(DX)(AX*1), R9
	IMULQ   ld+224(FP), R9
	VEXTRACTPS $2, X6, (SI)(R9*4)
	MOVLQSX 28(DX)(AX*1), R9
	IMULQ   ld+224(FP), R9
	VEXTRACTPS $3, X6, (SI)(R9*4)

adamnext:
	ADDQ $32, AX
	JMP  adamloop

adamdone:
	VZEROUPPER
	RET

// func compressPosAVX2(dst, src []float32, perm *[256][8]int32) (n int, bad bool)
//
// Left-packs the entries of src (len a multiple of 8) that are > 0 into
// dst, in order, and returns their number; bad reports an entry < 0 or a
// NaN. perm[m] lists the set bits of m, then zeros. Each block of 8 is
// stored whole at dst[n:], so dst needs len(src) elements.
TEXT ·compressPosAVX2(SB), NOSPLIT, $0-65
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ perm+48(FP), BX
	VXORPS Y15, Y15, Y15
	VXORPS Y5, Y5, Y5        // bad lanes
	XORQ R11, R11            // n
	XORQ AX, AX

cploop:
	CMPQ AX, CX
	JGE  cpdone
	VMOVUPS (SI)(AX*4), Y0
	VCMPPS  $0x0E, Y15, Y0, Y1 // > 0
	VCMPPS  $0x09, Y15, Y0, Y4 // < 0 or NaN
	VORPS   Y4, Y5, Y5
	VMOVMSKPS Y1, R9
	MOVQ    R9, R10
	SHLQ    $5, R10
	VMOVDQU (BX)(R10*1), Y2
	VPERMPS Y0, Y2, Y3
	VMOVUPS Y3, (DI)(R11*4)
	POPCNTL R9, R9
	ADDQ    R9, R11
	ADDQ    $8, AX
	JMP     cploop

cpdone:
	MOVQ R11, n+56(FP)
	VMOVMSKPS Y5, R9
	TESTL R9, R9
	SETNE bad+64(FP)
	VZEROUPPER
	RET

// func thresholdListAVX2(a []float32, thr float32, idx []int32, perm *[256][8]int32, lanes *[8]int32) int
//
// On len(a) (a multiple of 8) entries: a[i] = 0 where a[i] < thr, then
// left-packs the indices of the non-zero entries into idx (each block of 8
// stored whole, so idx needs len(a) elements) and returns their number.
// lanes holds 0..7.
TEXT ·thresholdListAVX2(SB), NOSPLIT, $0-80
	MOVQ a_base+0(FP), SI
	MOVQ a_len+8(FP), CX
	VBROADCASTSS thr+24(FP), Y14
	MOVQ idx_base+32(FP), DI
	MOVQ perm+56(FP), BX
	MOVQ lanes+64(FP), R10
	VMOVDQU (R10), Y13          // indices of the current block
	MOVL $8, R9
	VMOVD R9, X12
	VPBROADCASTD X12, Y12       // 8
	VXORPS Y15, Y15, Y15
	XORQ R11, R11               // n
	XORQ AX, AX

tlloop:
	CMPQ AX, CX
	JGE  tldone
	VMOVUPS (SI)(AX*4), Y0
	VCMPPS  $0x01, Y14, Y0, Y1  // a < thr
	VANDNPS Y0, Y1, Y0          // zero those
	VMOVUPS Y0, (SI)(AX*4)
	VCMPPS  $0x04, Y15, Y0, Y2  // a != 0 (or NaN)
	VMOVMSKPS Y2, R9
	MOVQ    R9, R10
	SHLQ    $5, R10
	VMOVDQU (BX)(R10*1), Y3
	VPERMD  Y13, Y3, Y4
	VMOVDQU Y4, (DI)(R11*4)
	POPCNTL R9, R9
	ADDQ    R9, R11
	VPADDD  Y12, Y13, Y13
	ADDQ    $8, AX
	JMP     tlloop

tldone:
	MOVQ R11, ret+72(FP)
	VZEROUPPER
	RET

// func splitAVX2(hi, lo, src []float32, p float32, perm *[256][8]int32) (nhi, nlo int)
//
// On len(src) (a multiple of 8) entries: left-packs the entries > p into hi
// and those < p into lo, each in order, and returns their numbers; entries
// equal to p go to neither. Each block of 8 is stored whole, so hi and lo
// need len(src) elements.
TEXT ·splitAVX2(SB), NOSPLIT, $0-104
	MOVQ hi_base+0(FP), DI
	MOVQ lo_base+24(FP), R8
	MOVQ src_base+48(FP), SI
	MOVQ src_len+56(FP), CX
	VBROADCASTSS p+72(FP), Y15
	MOVQ perm+80(FP), BX
	XORQ R11, R11            // nhi
	XORQ R12, R12            // nlo
	XORQ AX, AX

sploop:
	CMPQ AX, CX
	JGE  spdone
	VMOVUPS (SI)(AX*4), Y0
	VCMPPS  $0x0E, Y15, Y0, Y1 // > p
	VCMPPS  $0x01, Y15, Y0, Y2 // < p
	VMOVMSKPS Y1, R9
	VMOVMSKPS Y2, R10
	MOVQ    R9, R13
	SHLQ    $5, R13
	VMOVDQU (BX)(R13*1), Y3
	VPERMPS Y0, Y3, Y4
	VMOVUPS Y4, (DI)(R11*4)
	POPCNTL R9, R9
	ADDQ    R9, R11
	MOVQ    R10, R13
	SHLQ    $5, R13
	VMOVDQU (BX)(R13*1), Y5
	VPERMPS Y0, Y5, Y6
	VMOVUPS Y6, (R8)(R12*4)
	POPCNTL R10, R10
	ADDQ    R10, R12
	ADDQ    $8, AX
	JMP     sploop

spdone:
	MOVQ R11, nhi+88(FP)
	MOVQ R12, nlo+96(FP)
	VZEROUPPER
	RET

// func sparseDiffAVX2(x, o, val []float32, idx []int32, perm *[256][8]int32, lanes *[8]int32) int
//
// On len(x) (a multiple of 8) entries: r = x[j] - o[j]; left-packs the
// entries with r != 0 (or NaN) into val and their indices j into idx, in
// order, and returns their number. Each block of 8 is stored whole, so val
// and idx need len(x) elements. lanes holds 0..7.
TEXT ·sparseDiffAVX2(SB), NOSPLIT, $0-120
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ o_base+24(FP), R8
	MOVQ val_base+48(FP), DI
	MOVQ idx_base+72(FP), R14
	MOVQ perm+96(FP), BX
	MOVQ lanes+104(FP), R10
	VMOVDQU (R10), Y13          // indices of the current block
	MOVL $8, R9
	VMOVD R9, X12
	VPBROADCASTD X12, Y12       // 8
	VXORPS Y15, Y15, Y15
	XORQ R11, R11               // n
	XORQ AX, AX

sdloop:
	CMPQ AX, CX
	JGE  sddone
	VMOVUPS (SI)(AX*4), Y0
	VSUBPS  (R8)(AX*4), Y0, Y0  // x - o
	VCMPPS  $0x04, Y15, Y0, Y2  // != 0 (or NaN)
	VMOVMSKPS Y2, R9
	MOVQ    R9, R10
	SHLQ    $5, R10
	VMOVDQU (BX)(R10*1), Y3
	VPERMPS Y0, Y3, Y4
	VMOVUPS Y4, (DI)(R11*4)
	VPERMD  Y13, Y3, Y5
	VMOVDQU Y5, (R14)(R11*4)
	POPCNTL R9, R9
	ADDQ    R9, R11
	VPADDD  Y12, Y13, Y13
	ADDQ    $8, AX
	JMP     sdloop

sddone:
	MOVQ R11, ret+112(FP)
	VZEROUPPER
	RET

// func reluGainAVX2(a, z, g []float32)
//
// On len(a) (a multiple of 8) entries: a = (max(0, z) + 0) * g. VMAXPS
// returns z when z is NaN and when both are zero, so z = -0 gives -0, which
// the + 0 turns into +0: Go's max(z, 0) on every input.
TEXT ·reluGainAVX2(SB), NOSPLIT, $0-72
	MOVQ a_base+0(FP), DI
	MOVQ a_len+8(FP), CX
	MOVQ z_base+24(FP), SI
	MOVQ g_base+48(FP), R8
	VXORPS Y15, Y15, Y15
	XORQ AX, AX

rgloop:
	CMPQ AX, CX
	JGE  rgdone
	VMOVUPS (SI)(AX*4), Y0
	VMAXPS  Y0, Y15, Y1         // Y1 = 0 > z ? 0 : z
	VADDPS  Y15, Y1, Y1
	VMULPS  (R8)(AX*4), Y1, Y1
	VMOVUPS Y1, (DI)(AX*4)
	ADDQ    $8, AX
	JMP     rgloop

rgdone:
	VZEROUPPER
	RET

// func gatherRowsAVX2(acc, u []float32, off, pos []int32, b []float32, idx []int32)
//
// For the first len(acc) (a multiple of 8) entries: acc[t] += u[r] *
// b[pos[off[r]+idx[t]]] for r = 0, 1, ... in turn, multiply and add
// separate. The caller checks bounds.
TEXT ·gatherRowsAVX2(SB), NOSPLIT, $0-144
	MOVQ acc_base+0(FP), DI
	MOVQ acc_len+8(FP), CX
	MOVQ u_base+24(FP), SI
	MOVQ u_len+32(FP), R8
	MOVQ off_base+48(FP), R9
	MOVQ pos_base+72(FP), R12
	MOVQ b_base+96(FP), R10
	MOVQ idx_base+120(FP), R11
	XORQ AX, AX

grblock:
	CMPQ AX, CX
	JGE  grdone
	VMOVUPS (DI)(AX*4), Y0
	VMOVDQU (R11)(AX*4), Y1
	XORQ BX, BX

	PCALIGN $64
grrow:
	CMPQ BX, R8
	JGE  grrowdone
	MOVLQSX (R9)(BX*4), R13
	LEAQ (R12)(R13*4), R14
	VPCMPEQD Y2, Y2, Y2      // all ones (gather mask)
	VPXOR Y5, Y5, Y5
	VPGATHERDD Y2, (R14)(Y1*4), Y5 // pos[off + idx]
	VPCMPEQD Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VGATHERDPS Y2, (R10)(Y5*4), Y3 // b[pos]
	VBROADCASTSS (SI)(BX*4), Y4
	VMULPS Y4, Y3, Y3
	VADDPS Y3, Y0, Y0
	INCQ BX
	JMP  grrow

grrowdone:
	VMOVUPS Y0, (DI)(AX*4)
	ADDQ $8, AX
	JMP  grblock

grdone:
	VZEROUPPER
	RET

// func ctrlStepRowAVX2(w, fb, v, g []float32, flags []int32, k *ctrlCoef, s *ctrlSums)
//
// ctrlStepRowGo on len(w) (a multiple of 8) elements: the same float32
// operations (no FMA); frozen lanes (flags bit 0) are blended back to their
// old values and add +0 to the sums. Each block's |d|, |g| and |w| are
// widened to float64 (exact); the four partial sums of each are one
// register (Y13-Y15), which adds the block's first four synapses, then
// its last four: synapse j to partial j mod 4, in ascending j, as the loop.
TEXT ·ctrlStepRowAVX2(SB), NOSPLIT, $0-136
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ fb_base+24(FP), R10
	MOVQ v_base+48(FP), SI
	MOVQ g_base+72(FP), R8
	MOVQ flags_base+96(FP), R11
	MOVQ k+120(FP), BX
	MOVQ s+128(FP), DX
	VBROADCASTSS 0(BX), Y9   // mu
	VBROADCASTSS 4(BX), Y10  // eta
	VBROADCASTSS 8(BX), Y12  // tiny
	MOVL $0x7fffffff, R9
	VMOVD R9, X11
	VPBROADCASTD X11, Y11    // abs mask
	VMOVUPD 0(DX), Y13       // s.d[0:4]
	VMOVUPD 32(DX), Y14      // s.g[0:4]
	VMOVUPD 64(DX), Y15      // s.w[0:4]
	SHLQ $2, CX              // bytes
	XORQ AX, AX

csloop:
	CMPQ AX, CX
	JGE  csdone
	VMOVDQU (R11)(AX*1), Y3
	VPSLLD  $31, Y3, Y3          // frozen in the top bit
	VPSRAD  $31, Y3, Y4          // frozen, whole lane
	VMOVUPS (R8)(AX*1), Y2       // g
	VMOVUPS (SI)(AX*1), Y0       // v
	VMULPS  Y0, Y9, Y5           // mu*v
	VADDPS  Y2, Y5, Y5           // + g
	VANDPS  Y11, Y5, Y6
	VCMPPS  $0x05, Y12, Y6, Y6   // !(|.| < tiny): NaN kept, as flushTiny
	VANDPS  Y6, Y5, Y5           // vs
	VMULPS  Y5, Y10, Y6          // d = eta*vs
	VBLENDVPS Y3, Y0, Y5, Y0     // frozen ? v : vs
	VMOVUPS Y0, (SI)(AX*1)
	VMOVUPS (DI)(AX*1), Y8
	VADDPS  Y6, Y8, Y7           // w + d
	VBLENDVPS Y3, Y8, Y7, Y7     // frozen ? w : w + d
	VMOVUPS Y7, (DI)(AX*1)
	VMOVUPS (R10)(AX*1), Y8
	VADDPS  Y6, Y8, Y1           // fb + d
	VBLENDVPS Y3, Y8, Y1, Y1
	VMOVUPS Y1, (R10)(AX*1)
	VANDPS  Y11, Y6, Y6          // |d|
	VANDNPS Y6, Y4, Y6           // +0 where frozen
	VANDPS  Y11, Y2, Y2          // |g|
	VANDNPS Y2, Y4, Y2
	VANDPS  Y11, Y7, Y7          // |w|
	VCVTPS2PD X6, Y0             // lanes 0-3, widened (exact)
	VCVTPS2PD X2, Y1
	VCVTPS2PD X7, Y3
	VEXTRACTF128 $1, Y6, X6
	VEXTRACTF128 $1, Y2, X2
	VEXTRACTF128 $1, Y7, X7
	VCVTPS2PD X6, Y6             // lanes 4-7
	VCVTPS2PD X2, Y2
	VCVTPS2PD X7, Y7
	VADDPD  Y0, Y13, Y13         // synapses 0-3 of the block
	VADDPD  Y1, Y14, Y14
	VADDPD  Y3, Y15, Y15
	VADDPD  Y6, Y13, Y13         // synapses 4-7
	VADDPD  Y2, Y14, Y14
	VADDPD  Y7, Y15, Y15
	ADDQ $32, AX
	JMP  csloop

csdone:
	VMOVUPD Y13, 0(DX)
	VMOVUPD Y14, 32(DX)
	VMOVUPD Y15, 64(DX)
	VZEROUPPER
	RET

// func ctrlDecayRowAVX2(w, fb []float32, flags, absent []int32, k *decayCoef)
//
// ctrlDecayRowGo on len(w) (a multiple of 8) elements: the same float32
// operations (no FMA) and ordered comparisons (NaN and -0 are never
// "wrong-signed", as in the loop); a wrong-signed or absent lane is cleared
// to +0, a frozen lane (flags bit 0) blended back to its old values.
TEXT ·ctrlDecayRowAVX2(SB), NOSPLIT, $0-104
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ fb_base+24(FP), R10
	MOVQ flags_base+48(FP), R11
	MOVQ absent_base+72(FP), R12
	MOVQ k+96(FP), BX
	VBROADCASTSS 0(BX), Y14  // lam
	MOVL 4(BX), R9           // hasLam
	VBROADCASTSS 8(BX), Y13  // clampB: all ones or 0
	VXORPS Y15, Y15, Y15     // +0
	SHLQ $2, CX              // bytes
	XORQ AX, AX

cdloop:
	CMPQ AX, CX
	JGE  cddone
	VMOVDQU (R11)(AX*1), Y3
	VPSLLD  $30, Y3, Y5
	VPSRAD  $31, Y5, Y5          // excitatory, whole lane
	VPSLLD  $29, Y3, Y6
	VPSRAD  $31, Y6, Y6          // inhibitory, whole lane
	VPSLLD  $31, Y3, Y3          // frozen in the top bit
	VMOVDQU (R12)(AX*1), Y4      // absent
	VMOVUPS (DI)(AX*1), Y0       // old w
	VMOVUPS (R10)(AX*1), Y1      // old fb
	VMOVAPS Y0, Y7
	VMOVAPS Y1, Y8
	TESTL R9, R9
	JZ   cdnolam
	VMULPS  Y7, Y14, Y9
	VSUBPS  Y9, Y7, Y7           // x - lam*x
	VMULPS  Y8, Y14, Y9
	VSUBPS  Y9, Y8, Y8           // b - lam*b

cdnolam:
	VCMPPS  $0x01, Y15, Y7, Y9   // x < 0
	VCMPPS  $0x01, Y7, Y15, Y10  // 0 < x
	VANDPS  Y5, Y9, Y9
	VANDPS  Y6, Y10, Y10
	VORPS   Y10, Y9, Y9          // wrong sign
	VORPS   Y4, Y9, Y9           // or absent
	VANDNPS Y7, Y9, Y7           // cleared to +0
	VCMPPS  $0x01, Y15, Y8, Y9   // b < 0
	VCMPPS  $0x01, Y8, Y15, Y10  // 0 < b
	VANDPS  Y5, Y9, Y9
	VANDPS  Y6, Y10, Y10
	VORPS   Y10, Y9, Y9
	VANDPS  Y13, Y9, Y9          // only if the twin is clamped
	VORPS   Y4, Y9, Y9
	VANDNPS Y8, Y9, Y8
	VBLENDVPS Y3, Y0, Y7, Y7     // frozen ? old : new
	VBLENDVPS Y3, Y1, Y8, Y8
	VMOVUPS Y7, (DI)(AX*1)
	VMOVUPS Y8, (R10)(AX*1)
	ADDQ $32, AX
	JMP  cdloop

cddone:
	VZEROUPPER
	RET

// func anchorRowAVX2(w, ws []float32, lam, aMu, aLam float32)
//
// anchorRowGo's steady state on a row without twin or Dale signs, over
// len(w) rounded down to 8: x = w - lam*w (when lam != 0), the slow copy
// sl += aMu*(x - sl), then x += aLam*(sl - x), multiply and add separate
// (no FMA) in the loop's order. The caller checks bounds and does the
// rest.
TEXT ·anchorRowAVX2(SB), NOSPLIT, $0-60
	MOVQ w_base+0(FP), DI
	MOVQ w_len+8(FP), CX
	MOVQ ws_base+24(FP), SI
	VBROADCASTSS lam+48(FP), Y10
	VBROADCASTSS aMu+52(FP), Y11
	VBROADCASTSS aLam+56(FP), Y12
	MOVL lam+48(FP), R8
	ANDL $0x7fffffff, R8      // lam == 0 (either sign) skips the decay, as the loop does
	SHRQ $3, CX
	SHLQ $5, CX               // bytes in whole blocks of 8
	XORQ AX, AX

aloop:
	CMPQ AX, CX
	JGE  adone
	VMOVUPS (DI)(AX*1), Y0    // x
	TESTL R8, R8
	JZ    anodecay
	VMULPS Y0, Y10, Y1        // lam*x
	VSUBPS Y1, Y0, Y0         // x - lam*x

anodecay:
	VMOVUPS (SI)(AX*1), Y2    // sl
	VSUBPS Y2, Y0, Y3         // x - sl
	VMULPS Y3, Y11, Y3        // aMu*(x - sl)
	VADDPS Y3, Y2, Y2         // sl + ...
	VSUBPS Y0, Y2, Y4         // sl - x
	VMULPS Y4, Y12, Y4        // aLam*(sl - x)
	VADDPS Y4, Y0, Y0         // x + ...
	VMOVUPS Y2, (SI)(AX*1)
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ $32, AX
	JMP  aloop

adone:
	VZEROUPPER
	RET
