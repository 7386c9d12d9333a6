//go:build !purego

#include "textflag.h"

// The row-order forward product (driveRows): four rows at a time, each a
// chain of its own, so that four additions are in flight.
//
// Registers: R9 x; AX, BX, CX, DI the four rows' weights; R8, R10, R11,
// R12 their columns; R13 the synapse offset within the rows, R14 the
// shortest row's length; R15 and Z4-Z6/Y4-Y6 scratch. Row k's sums are
// in Z0-Z3 (16 lanes), or in the pairs Y0:Y1, Y2:Y3, Y7:Y8, Y9:Y10
// (8 + 8 lanes).

// TERMZ adds one term of a row (weights PW, columns PC, offset T) to its
// 16 sums A: A += w * x[col*16 : col*16+16], multiply and add separate
// (B, for TERMY's second half, unused).
#define TERMZ(PW, PC, T, A, B) \
	MOVWQZX (PC)(T*2), R15 \
	SHLQ    $6, R15 \
	VBROADCASTSS (PW)(T*4), Z4 \
	VMULPS  (R9)(R15*1), Z4, Z4 \
	VADDPS  Z4, A, A

// TERMY is TERMZ with the 16 sums in two 8-lane registers A and B.
#define TERMY(PW, PC, T, A, B) \
	MOVWQZX (PC)(T*2), R15 \
	SHLQ    $6, R15 \
	VBROADCASTSS (PW)(T*4), Y4 \
	VMULPS  (R9)(R15*1), Y4, Y5 \
	VMULPS  32(R9)(R15*1), Y4, Y6 \
	VADDPS  Y5, A, A \
	VADDPS  Y6, B, B

// REST runs row K's terms from offset R14 to its length (ptr[K+1] -
// ptr[K], ptr in SI), alone.
#define REST(TERM, K, PW, PC, A, B, LOOP, DONE) \
	MOVLQSX ((K+1)*4)(SI), DX \
	MOVLQSX (K*4)(SI), R15 \
	SUBQ    R15, DX \
	MOVQ    R14, R13 \
LOOP: \
	CMPQ    R13, DX \
	JGE     DONE \
	TERM(PW, PC, R13, A, B) \
	INCQ    R13 \
	JMP     LOOP \
DONE:

// ROWS4 is the body of a kernel: the rows' pointers and shortest length,
// the joint loop, then each row's rest. The sums are loaded before it and
// stored after it.
#define ROWS4(ARG5, TERM, A0, B0, A1, B1, A2, B2, A3, B3) \
	MOVQ w+8(FP), SI \
	MOVQ col+16(FP), DX \
	MOVQ ptr+24(FP), R8 \
	MOVQ ARG5+32(FP), R9 \
	MOVLQSX 0(R8), AX \
	MOVLQSX 4(R8), BX \
	MOVLQSX 8(R8), CX \
	MOVLQSX 12(R8), DI \
	MOVLQSX 16(R8), R14 \
	MOVQ BX, R10 \
	SUBQ AX, R10 \
	MOVQ CX, R11 \
	SUBQ BX, R11 \
	MOVQ DI, R12 \
	SUBQ CX, R12 \
	MOVQ R14, R13 \
	SUBQ DI, R13 \
	MOVQ R10, R14 \
	CMPQ R11, R14 \
	CMOVQLT R11, R14 \
	CMPQ R12, R14 \
	CMOVQLT R12, R14 \
	CMPQ R13, R14 \
	CMOVQLT R13, R14 \
	LEAQ (DX)(AX*2), R8 \
	LEAQ (DX)(BX*2), R10 \
	LEAQ (DX)(CX*2), R11 \
	LEAQ (DX)(DI*2), R12 \
	LEAQ (SI)(AX*4), AX \
	LEAQ (SI)(BX*4), BX \
	LEAQ (SI)(CX*4), CX \
	LEAQ (SI)(DI*4), DI \
	XORQ R13, R13 \
joint: \
	CMPQ R13, R14 \
	JGE  rest \
	TERM(AX, R8, R13, A0, B0) \
	TERM(BX, R10, R13, A1, B1) \
	TERM(CX, R11, R13, A2, B2) \
	TERM(DI, R12, R13, A3, B3) \
	INCQ R13 \
	JMP  joint \
rest: \
	MOVQ ptr+24(FP), SI \
	REST(TERM, 0, AX, R8, A0, B0, rest0, done0) \
	REST(TERM, 1, BX, R10, A1, B1, rest1, done1) \
	REST(TERM, 2, CX, R11, A2, B2, rest2, done2) \
	REST(TERM, 3, DI, R12, A3, B3, rest3, done3)

// func driveRows4AVX512(acc *float32, w *float32, col *uint16, ptr *int32, x *float32)
//
// driveRowsGo on the 4 rows ptr[0]:ptr[4] into acc[0:64], 16 lanes a
// vector. The caller checks bounds.
TEXT ·driveRows4AVX512(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), R8
	VMOVUPS 0(R8), Z0
	VMOVUPS 64(R8), Z1
	VMOVUPS 128(R8), Z2
	VMOVUPS 192(R8), Z3
	ROWS4(x, TERMZ, Z0, Z0, Z1, Z1, Z2, Z2, Z3, Z3)
	MOVQ acc+0(FP), R8
	VMOVUPS Z0, 0(R8)
	VMOVUPS Z1, 64(R8)
	VMOVUPS Z2, 128(R8)
	VMOVUPS Z3, 192(R8)
	VZEROUPPER
	RET

// func driveRows4AVX2(acc *float32, w *float32, col *uint16, ptr *int32, x *float32)
//
// driveRows4AVX512 in 8-lane vectors, two per row.
TEXT ·driveRows4AVX2(SB), NOSPLIT, $0-40
	MOVQ acc+0(FP), R8
	VMOVUPS 0(R8), Y0
	VMOVUPS 32(R8), Y1
	VMOVUPS 64(R8), Y2
	VMOVUPS 96(R8), Y3
	VMOVUPS 128(R8), Y7
	VMOVUPS 160(R8), Y8
	VMOVUPS 192(R8), Y9
	VMOVUPS 224(R8), Y10
	ROWS4(x, TERMY, Y0, Y1, Y2, Y3, Y7, Y8, Y9, Y10)
	MOVQ acc+0(FP), R8
	VMOVUPS Y0, 0(R8)
	VMOVUPS Y1, 32(R8)
	VMOVUPS Y2, 64(R8)
	VMOVUPS Y3, 96(R8)
	VMOVUPS Y7, 128(R8)
	VMOVUPS Y8, 160(R8)
	VMOVUPS Y9, 192(R8)
	VMOVUPS Y10, 224(R8)
	VZEROUPPER
	RET

// TERMC adds one term of a row's dot product with o (weights PW, columns
// PC, offset T) to the scalar sum A: A += w * o[col], multiply and add
// separate (B unused). R9 holds o.
#define TERMC(PW, PC, T, A, B) \
	MOVWQZX (PC)(T*2), R15 \
	VMOVSS  (PW)(T*4), X4 \
	VMULSS  (R9)(R15*4), X4, X4 \
	VADDSS  X4, A, A

// func dotRows4AVX(c *float32, w *float32, col *uint16, ptr *int32, o *float32)
//
// dotRowsGo on the 4 rows ptr[0]:ptr[4]: c[k] = sum over row k's synapses
// of w[s]*o[col[s]] in ascending s, from +0, the four rows' chains in one
// loop. The caller checks bounds.
TEXT ·dotRows4AVX(SB), NOSPLIT, $0-40
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	ROWS4(o, TERMC, X0, X0, X1, X1, X2, X2, X3, X3)
	MOVQ c+0(FP), R8
	VMOVSS X0, 0(R8)
	VMOVSS X1, 4(R8)
	VMOVSS X2, 8(R8)
	VMOVSS X3, 12(R8)
	RET
