//go:build !purego

#include "textflag.h"

// Constants of the Adam kernels' flushes to zero: 2^-100 for stored
// values, 2^-55 for the decayed gradient (see flushStore, flushGrad).
DATA absmask<>+0(SB)/4, $0x7fffffff
DATA absmask<>+4(SB)/4, $0x7fffffff
DATA absmask<>+8(SB)/4, $0x7fffffff
DATA absmask<>+12(SB)/4, $0x7fffffff
DATA absmask<>+16(SB)/4, $0x7fffffff
DATA absmask<>+20(SB)/4, $0x7fffffff
DATA absmask<>+24(SB)/4, $0x7fffffff
DATA absmask<>+28(SB)/4, $0x7fffffff
GLOBL absmask<>(SB), RODATA|NOPTR, $32

DATA thrstore<>+0(SB)/4, $0x0d800000
DATA thrstore<>+4(SB)/4, $0x0d800000
DATA thrstore<>+8(SB)/4, $0x0d800000
DATA thrstore<>+12(SB)/4, $0x0d800000
DATA thrstore<>+16(SB)/4, $0x0d800000
DATA thrstore<>+20(SB)/4, $0x0d800000
DATA thrstore<>+24(SB)/4, $0x0d800000
DATA thrstore<>+28(SB)/4, $0x0d800000
GLOBL thrstore<>(SB), RODATA|NOPTR, $32

DATA thrgrad<>+0(SB)/4, $0x24000000
DATA thrgrad<>+4(SB)/4, $0x24000000
DATA thrgrad<>+8(SB)/4, $0x24000000
DATA thrgrad<>+12(SB)/4, $0x24000000
DATA thrgrad<>+16(SB)/4, $0x24000000
DATA thrgrad<>+20(SB)/4, $0x24000000
DATA thrgrad<>+24(SB)/4, $0x24000000
DATA thrgrad<>+28(SB)/4, $0x24000000
GLOBL thrgrad<>(SB), RODATA|NOPTR, $32

// flushY zeroes the lanes of y whose magnitude is below the threshold
// constant thr (uses Y4).
#define flushY(y, thr) \
	VANDPS  absmask<>(SB), y, Y4 \
	VCMPPS  $1, thr<>(SB), Y4, Y4 \
	VANDNPS y, Y4, y

// adamCoefs broadcasts the adamCoef at BX (wd, b1, 1-b1, b2, 1-b2,
// 1/sqrt(bc2), eps, step) into C0-C7, the coefficients adamBodyOf takes.
#define adamCoefs(C0, C1, C2, C3, C4, C5, C6, C7) \
	VBROADCASTSS 0(BX), C0 \
	VBROADCASTSS 4(BX), C1 \
	VBROADCASTSS 8(BX), C2 \
	VBROADCASTSS 12(BX), C3 \
	VBROADCASTSS 16(BX), C4 \
	VBROADCASTSS 20(BX), C5 \
	VBROADCASTSS 24(BX), C6 \
	VBROADCASTSS 28(BX), C7

// adamBodyOf computes one block of parameters at byte offset AX, in
// vectors V0-V7 with the broadcast coefficients WD, B1, OB1 (1-b1), B2,
// OB2 (1-b2), ISB (1/sqrt(bc2)), EPS and STEP, flushing the decayed
// gradient with FLUSHG and the stored values with FLUSHS (the register
// class's flushes). Inputs: DI p, SI g, DX m, R8 v. Leaves new p in V0, m
// in V3, v in V6, in the operation order of adamStepGo, with its flushes
// to zero. adamBody is its 8-lane form, adamBodyZ its 16-lane form.
#define adamBodyOf(V0, V1, V2, V3, V4, V5, V6, V7, WD, B1, OB1, B2, OB2, ISB, EPS, STEP, FLUSHG, FLUSHS) \
	VMOVUPS (DI)(AX*1), V0 \
	VMOVUPS (SI)(AX*1), V1 \
	VMULPS  V0, WD, V2 \
	VADDPS  V2, V1, V1 \
	FLUSHG(V1) \
	VMULPS  (DX)(AX*1), B1, V3 \
	VMULPS  V1, OB1, V4 \
	VADDPS  V4, V3, V3 \
	VMULPS  V1, V1, V5 \
	VMULPS  V5, OB2, V5 \
	VMULPS  (R8)(AX*1), B2, V6 \
	VADDPS  V5, V6, V6 \
	VSQRTPS V6, V7 \
	VMULPS  V7, ISB, V7 \
	VADDPS  EPS, V7, V7 \
	VDIVPS  V7, V3, V2 \
	VMULPS  V2, STEP, V2 \
	VSUBPS  V2, V0, V0 \
	FLUSHS(V0) \
	FLUSHS(V3) \
	FLUSHS(V6)

#define flushYg(y) flushY(y, thrgrad)
#define flushYs(y) flushY(y, thrstore)
#define adamBody adamBodyOf(Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15, flushYg, flushYs)


// func adamAVX2(p, g, m, v []float32, mask []uint32, k *adamCoef)
//
// The first len(p) rounded down to 8 elements of adamStepGo with mask nil,
// which leaves g zero.
TEXT ·adamAVX2(SB), NOSPLIT, $0-128
	MOVQ p_base+0(FP), DI
	MOVQ p_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ m_base+48(FP), DX
	MOVQ v_base+72(FP), R8
	MOVQ k+120(FP), BX
	adamCoefs(Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	SHRQ $3, CX
	SHLQ $5, CX
	XORQ AX, AX

aloop:
	CMPQ AX, CX
	JGE  adone
	adamBody
	VXORPS  Y1, Y1, Y1
	VMOVUPS Y1, (SI)(AX*1)
	VMOVUPS Y0, (DI)(AX*1)
	VMOVUPS Y3, (DX)(AX*1)
	VMOVUPS Y6, (R8)(AX*1)
	ADDQ $32, AX
	JMP  aloop

adone:
	VZEROUPPER
	RET

// func adamMaskedAVX2(p, g, m, v []float32, mask []uint32, k *adamCoef)
//
// As adamAVX2, but only where the mask word is all ones; elsewhere p, m and
// v keep their bits (mask words must be 0 or 0xFFFFFFFF). g becomes zero
// everywhere.
TEXT ·adamMaskedAVX2(SB), NOSPLIT, $0-128
	MOVQ p_base+0(FP), DI
	MOVQ p_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ m_base+48(FP), DX
	MOVQ v_base+72(FP), R8
	MOVQ mask_base+96(FP), R9
	MOVQ k+120(FP), BX
	adamCoefs(Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15)
	SHRQ $3, CX
	SHLQ $5, CX
	XORQ AX, AX

mloop:
	CMPQ AX, CX
	JGE  mdone
	adamBody
	VXORPS  Y1, Y1, Y1
	VMOVUPS Y1, (SI)(AX*1)
	VMOVUPS (R9)(AX*1), Y1
	VANDPS  Y1, Y0, Y0
	VANDNPS (DI)(AX*1), Y1, Y2
	VORPS   Y2, Y0, Y0
	VANDPS  Y1, Y3, Y3
	VANDNPS (DX)(AX*1), Y1, Y2
	VORPS   Y2, Y3, Y3
	VANDPS  Y1, Y6, Y6
	VANDNPS (R8)(AX*1), Y1, Y2
	VORPS   Y2, Y6, Y6
	VMOVUPS Y0, (DI)(AX*1)
	VMOVUPS Y3, (DX)(AX*1)
	VMOVUPS Y6, (R8)(AX*1)
	ADDQ $32, AX
	JMP  mloop

mdone:
	VZEROUPPER
	RET

// flushZ is flushY in 16 lanes: Z16 holds the absolute-value mask and
// THR the threshold (uses Z4 and K1; integer logic, so AVX-512F alone).
#define flushZ(z, THR) \
	VPANDD  Z16, z, Z4 \
	VCMPPS  $1, THR, Z4, K1 \
	VPXORD  z, z, K1, z

// adamBodyZ is adamBody on a block of 16 parameters (this machine's
// divider and square root take as long for 16 lanes as for 8): Z8..Z15
// the coefficients, Z17 the gradient's threshold, Z18 the store threshold.
#define flushZg(z) flushZ(z, Z17)
#define flushZs(z) flushZ(z, Z18)
#define adamBodyZ adamBodyOf(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15, flushZg, flushZs)

// func adamAVX512(p, g, m, v []float32, mask []uint32, k *adamCoef)
//
// adamAVX2 and adamMaskedAVX2 (mask non-nil) on the first len(p) rounded
// down to 16 elements; a masked block stores only the lanes whose mask
// word is non-zero, so the others keep their bits. g becomes zero
// everywhere.
TEXT ·adamAVX512(SB), NOSPLIT, $0-128
	MOVQ p_base+0(FP), DI
	MOVQ p_len+8(FP), CX
	MOVQ g_base+24(FP), SI
	MOVQ m_base+48(FP), DX
	MOVQ v_base+72(FP), R8
	MOVQ mask_base+96(FP), R9
	MOVQ k+120(FP), BX
	adamCoefs(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	VBROADCASTSS absmask<>(SB), Z16
	VBROADCASTSS thrgrad<>(SB), Z17
	VBROADCASTSS thrstore<>(SB), Z18
	KXNORW K2, K2, K2            // every lane, unless masked
	VPXORD Z19, Z19, Z19
	SHRQ $4, CX
	SHLQ $6, CX
	XORQ AX, AX

zloop:
	CMPQ AX, CX
	JGE  zdone
	adamBodyZ
	TESTQ R9, R9
	JZ    zstore
	VMOVDQU32 (R9)(AX*1), Z1
	VPTESTMD  Z1, Z1, K2         // lanes whose mask word is set

zstore:
	VMOVUPS Z19, (SI)(AX*1)
	VMOVUPS Z0, K2, (DI)(AX*1)
	VMOVUPS Z3, K2, (DX)(AX*1)
	VMOVUPS Z6, K2, (R8)(AX*1)
	ADDQ $64, AX
	JMP  zloop

zdone:
	VZEROUPPER
	RET

// func accRows4FMA(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int)
//
// Four rows at once: for q in 0..3 and j in [0, n) rounded down to 8,
//	c[q*ldc+j] = fma(v4[4*t+q], b[off[t]+j], c[q*ldc+j]), t ascending,
// one fused multiply-add (single rounding) per term, as accRows4Go
// computes it, sharing the loads of b. The caller checks bounds and does the
// column tail.
TEXT ·accRows4FMA(SB), NOSPLIT, $0-112
	MOVQ c_base+0(FP), DI
	MOVQ ldc+24(FP), R8
	SHLQ $2, R8
	MOVQ v4_base+32(FP), SI
	MOVQ off_base+56(FP), R9
	MOVQ off_len+64(FP), BX
	LEAQ (R9)(BX*4), BX
	MOVQ b_base+80(FP), R10
	MOVQ n+104(FP), CX
	XORQ AX, AX

s16:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $16
	JLT  s8
	LEAQ (DI)(AX*4), R11
	LEAQ (R11)(R8*2), R12
	VMOVUPS 0(R11), Y0
	VMOVUPS 32(R11), Y1
	VMOVUPS 0(R11)(R8*1), Y2
	VMOVUPS 32(R11)(R8*1), Y3
	VMOVUPS 0(R12), Y4
	VMOVUPS 32(R12), Y5
	VMOVUPS 0(R12)(R8*1), Y6
	VMOVUPS 32(R12)(R8*1), Y7
	LEAQ (R10)(AX*4), DX
	MOVQ SI, R11
	MOVQ R9, R12

t16:
	CMPQ R12, BX
	JGE  st16
	MOVLQSX (R12), R13
	VMOVUPS 0(DX)(R13*4), Y8
	VMOVUPS 32(DX)(R13*4), Y9
	VBROADCASTSS 0(R11), Y10
	VBROADCASTSS 4(R11), Y11
	VBROADCASTSS 8(R11), Y12
	VBROADCASTSS 12(R11), Y13
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y9, Y10, Y1
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y9, Y11, Y3
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y9, Y12, Y5
	VFMADD231PS Y8, Y13, Y6
	VFMADD231PS Y9, Y13, Y7
	ADDQ $16, R11
	ADDQ $4, R12
	JMP  t16

st16:
	LEAQ (DI)(AX*4), R11
	LEAQ (R11)(R8*2), R12
	VMOVUPS Y0, 0(R11)
	VMOVUPS Y1, 32(R11)
	VMOVUPS Y2, 0(R11)(R8*1)
	VMOVUPS Y3, 32(R11)(R8*1)
	VMOVUPS Y4, 0(R12)
	VMOVUPS Y5, 32(R12)
	VMOVUPS Y6, 0(R12)(R8*1)
	VMOVUPS Y7, 32(R12)(R8*1)
	ADDQ $16, AX
	JMP  s16

s8:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $8
	JLT  done4
	LEAQ (DI)(AX*4), R11
	LEAQ (R11)(R8*2), R12
	VMOVUPS 0(R11), Y0
	VMOVUPS 0(R11)(R8*1), Y2
	VMOVUPS 0(R12), Y4
	VMOVUPS 0(R12)(R8*1), Y6
	LEAQ (R10)(AX*4), DX
	MOVQ SI, R11
	MOVQ R9, R12

t8b:
	CMPQ R12, BX
	JGE  st8
	MOVLQSX (R12), R13
	VMOVUPS 0(DX)(R13*4), Y8
	VBROADCASTSS 0(R11), Y10
	VBROADCASTSS 4(R11), Y11
	VBROADCASTSS 8(R11), Y12
	VBROADCASTSS 12(R11), Y13
	VFMADD231PS Y8, Y10, Y0
	VFMADD231PS Y8, Y11, Y2
	VFMADD231PS Y8, Y12, Y4
	VFMADD231PS Y8, Y13, Y6
	ADDQ $16, R11
	ADDQ $4, R12
	JMP  t8b

st8:
	LEAQ (DI)(AX*4), R11
	LEAQ (R11)(R8*2), R12
	VMOVUPS Y0, 0(R11)
	VMOVUPS Y2, 0(R11)(R8*1)
	VMOVUPS Y4, 0(R12)
	VMOVUPS Y6, 0(R12)(R8*1)
	ADDQ $8, AX
	JMP  s8

done4:
	VZEROUPPER
	RET

// func accRows4AVX512(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int)
//
// accRows4FMA with 512-bit vectors: strips of 32 columns (two ZMM per row),
// then one of 16; the caller checks bounds and does the columns beyond the
// last multiple of 16.
TEXT ·accRows4AVX512(SB), NOSPLIT, $0-112
	MOVQ c_base+0(FP), DI
	MOVQ ldc+24(FP), R8
	SHLQ $2, R8
	MOVQ v4_base+32(FP), SI
	MOVQ off_base+56(FP), R9
	MOVQ off_len+64(FP), BX
	LEAQ (R9)(BX*4), BX
	MOVQ b_base+80(FP), R10
	MOVQ n+104(FP), CX
	XORQ AX, AX

z32:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $32
	JLT  z16
	LEAQ (DI)(AX*4), R11
	LEAQ (R11)(R8*2), R12
	VMOVUPS 0(R11), Z0
	VMOVUPS 64(R11), Z1
	VMOVUPS 0(R11)(R8*1), Z2
	VMOVUPS 64(R11)(R8*1), Z3
	VMOVUPS 0(R12), Z4
	VMOVUPS 64(R12), Z5
	VMOVUPS 0(R12)(R8*1), Z6
	VMOVUPS 64(R12)(R8*1), Z7
	LEAQ (R10)(AX*4), DX
	MOVQ SI, R11
	MOVQ R9, R12

zt32:
	CMPQ R12, BX
	JGE  zst32
	MOVLQSX (R12), R13
	VMOVUPS 0(DX)(R13*4), Z8
	VMOVUPS 64(DX)(R13*4), Z9
	VBROADCASTSS 0(R11), Z10
	VBROADCASTSS 4(R11), Z11
	VBROADCASTSS 8(R11), Z12
	VBROADCASTSS 12(R11), Z13
	VFMADD231PS Z8, Z10, Z0
	VFMADD231PS Z9, Z10, Z1
	VFMADD231PS Z8, Z11, Z2
	VFMADD231PS Z9, Z11, Z3
	VFMADD231PS Z8, Z12, Z4
	VFMADD231PS Z9, Z12, Z5
	VFMADD231PS Z8, Z13, Z6
	VFMADD231PS Z9, Z13, Z7
	ADDQ $16, R11
	ADDQ $4, R12
	JMP  zt32

zst32:
	LEAQ (DI)(AX*4), R11
	LEAQ (R11)(R8*2), R12
	VMOVUPS Z0, 0(R11)
	VMOVUPS Z1, 64(R11)
	VMOVUPS Z2, 0(R11)(R8*1)
	VMOVUPS Z3, 64(R11)(R8*1)
	VMOVUPS Z4, 0(R12)
	VMOVUPS Z5, 64(R12)
	VMOVUPS Z6, 0(R12)(R8*1)
	VMOVUPS Z7, 64(R12)(R8*1)
	ADDQ $32, AX
	JMP  z32

z16:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $16
	JLT  zdone
	LEAQ (DI)(AX*4), R11
	LEAQ (R11)(R8*2), R12
	VMOVUPS 0(R11), Z0
	VMOVUPS 0(R11)(R8*1), Z2
	VMOVUPS 0(R12), Z4
	VMOVUPS 0(R12)(R8*1), Z6
	LEAQ (R10)(AX*4), DX
	MOVQ SI, R11
	MOVQ R9, R12

zt16:
	CMPQ R12, BX
	JGE  zst16
	MOVLQSX (R12), R13
	VMOVUPS 0(DX)(R13*4), Z8
	VBROADCASTSS 0(R11), Z10
	VBROADCASTSS 4(R11), Z11
	VBROADCASTSS 8(R11), Z12
	VBROADCASTSS 12(R11), Z13
	VFMADD231PS Z8, Z10, Z0
	VFMADD231PS Z8, Z11, Z2
	VFMADD231PS Z8, Z12, Z4
	VFMADD231PS Z8, Z13, Z6
	ADDQ $16, R11
	ADDQ $4, R12
	JMP  zt16

zst16:
	LEAQ (DI)(AX*4), R11
	LEAQ (R11)(R8*2), R12
	VMOVUPS Z0, 0(R11)
	VMOVUPS Z2, 0(R11)(R8*1)
	VMOVUPS Z4, 0(R12)
	VMOVUPS Z6, 0(R12)(R8*1)
	ADDQ $16, AX
	JMP  z16

zdone:
	VZEROUPPER
	RET

// PACKNEXT ends a block of 16 of the packing loops: the count R11 advances
// by the lanes K1 kept, the lane offsets Z13 by Z12, the index AX by 16.
#define PACKNEXT(loop) \
	KMOVW   K1, R9 \
	POPCNTL R9, R9 \
	ADDQ    R9, R11 \
	VPADDD  Z12, Z13, Z13 \
	ADDQ    $16, AX \
	JMP     loop

// func nonZerosAVX512(v []float32, o []int32, x []float32, stride int, lanes *[16]int32) int
//
// On len(x) (a multiple of 16) entries: left-packs the non-zero entries of
// x (NaN counts as non-zero, as x != 0 in Go) into v and their offsets
// index*stride into o, in order, and returns their number. Each block of
// 16 is stored whole, so v and o need len(x) elements. lanes holds 0..15.
TEXT ·nonZerosAVX512(SB), NOSPLIT, $0-96
	MOVQ v_base+0(FP), DI
	MOVQ o_base+24(FP), DX
	MOVQ x_base+48(FP), SI
	MOVQ x_len+56(FP), CX
	MOVQ stride+72(FP), R8
	MOVQ lanes+80(FP), R10
	VMOVDQU32 (R10), Z13   // lane indices
	VPBROADCASTD R8, Z12
	VPMULLD Z12, Z13, Z13  // offsets of the current block
	SHLQ $4, R8
	VPBROADCASTD R8, Z12   // 16*stride
	VXORPS Z15, Z15, Z15
	XORQ R11, R11          // n
	XORQ AX, AX

nzloop:
	CMPQ AX, CX
	JGE  nzdone
	VMOVUPS (SI)(AX*4), Z0
	VCMPPS  $4, Z15, Z0, K1 // != 0, unordered
	VCOMPRESSPS Z0, K1, Z1
	VMOVUPS Z1, (DI)(R11*4)
	VPCOMPRESSD Z13, K1, Z2
	VMOVDQU32 Z2, (DX)(R11*4)
	PACKNEXT(nzloop)

nzdone:
	MOVQ R11, ret+88(FP)
	VZEROUPPER
	RET

// func positivesAVX512(idx []int32, x []float32, lanes *[16]int32) int
//
// On len(x) (a multiple of 16) entries: left-packs the indices of the
// entries > 0 (ordered: NaN is not) into idx, in order, and returns their
// number. Each block of 16 is stored whole, so idx needs len(x) elements.
TEXT ·positivesAVX512(SB), NOSPLIT, $0-64
	MOVQ idx_base+0(FP), DX
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	MOVQ lanes+48(FP), R10
	VMOVDQU32 (R10), Z13   // indices of the current block
	MOVL $16, R8
	VPBROADCASTD R8, Z12
	VXORPS Z15, Z15, Z15
	XORQ R11, R11          // n
	XORQ AX, AX

posloop:
	CMPQ AX, CX
	JGE  posdone
	VMOVUPS (SI)(AX*4), Z0
	VCMPPS  $0x1e, Z15, Z0, K1 // > 0, ordered
	VPCOMPRESSD Z13, K1, Z2
	VMOVDQU32 Z2, (DX)(R11*4)
	PACKNEXT(posloop)

posdone:
	MOVQ R11, ret+56(FP)
	VZEROUPPER
	RET

// func reluAVX2(z []float32)
//
// The rectifier in place, 8 lanes at a time (len(z) a multiple of 8):
// z stays where !(z <= 0), that is z > 0 or NaN, and becomes +0 elsewhere
// (-0 included), as Go's max(z, 0).
TEXT ·reluAVX2(SB), NOSPLIT, $0-24
	MOVQ z_base+0(FP), DI
	MOVQ z_len+8(FP), CX
	SHRQ $3, CX
	VXORPS Y1, Y1, Y1

reluLoop:
	TESTQ CX, CX
	JZ    reluDone
	VMOVUPS (DI), Y0
	VCMPPS  $0x16, Y1, Y0, Y2 // NLE_UQ: !(z <= 0)
	VANDPS  Y2, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JMP     reluLoop

reluDone:
	VZEROUPPER
	RET

// func gateAVX2(c, a []float32)
//
// gate, 8 lanes at a time (len(c) a multiple of 8, len(a) >= len(c)):
// c keeps its bits where a > 0 (ordered: a NaN closes the gate) and
// becomes +0 elsewhere.
TEXT ·gateAVX2(SB), NOSPLIT, $0-48
	MOVQ c_base+0(FP), DI
	MOVQ c_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	SHRQ $3, CX
	VXORPS Y1, Y1, Y1

gateLoop:
	TESTQ CX, CX
	JZ    gateDone
	VMOVUPS (SI), Y0
	VCMPPS  $0x1E, Y1, Y0, Y2 // GT_OQ: a > 0
	VANDPS  (DI), Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JMP     gateLoop

gateDone:
	VZEROUPPER
	RET

// DIFF8(off, sh) ors into R8, at bit sh, the 8 lanes' x != o (unordered
// true, so a NaN differs; -0 and +0 do not) of the block at byte off.
#define DIFF8(off, sh) \
	VMOVUPS   off(SI), Y0 \
	VCMPPS    $0x04, off(DX), Y0, Y1 \
	VMOVMSKPS Y1, AX \
	SHLQ      $sh, AX \
	ORQ       AX, R8

// func diffBitsAVX2(nz []uint64, x, o []float32)
//
// diffBits on whole words: bit j of nz[k] is x[64k+j] != o[64k+j], for
// every k < len(nz); the caller checks that x and o hold 64*len(nz).
TEXT ·diffBitsAVX2(SB), NOSPLIT, $0-72
	MOVQ nz_base+0(FP), DI
	MOVQ nz_len+8(FP), CX
	MOVQ x_base+24(FP), SI
	MOVQ o_base+48(FP), DX

diffLoop:
	TESTQ CX, CX
	JZ    diffDone
	XORQ  R8, R8
	DIFF8(0, 0)
	DIFF8(32, 8)
	DIFF8(64, 16)
	DIFF8(96, 24)
	DIFF8(128, 32)
	DIFF8(160, 40)
	DIFF8(192, 48)
	DIFF8(224, 56)
	MOVQ R8, (DI)
	ADDQ $256, SI
	ADDQ $256, DX
	ADDQ $8, DI
	DECQ CX
	JMP  diffLoop

diffDone:
	VZEROUPPER
	RET
