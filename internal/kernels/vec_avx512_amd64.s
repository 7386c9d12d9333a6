//go:build !purego

#include "textflag.h"
#include "rows_amd64.h"

// The 512-bit form of addRows, for CPUs with AVX-512F: the same float32
// multiplies and adds, per element in the same order, as the AVX2 kernel
// and the Go loop, 16 lanes at a time, so the results are the same to the
// bit on every CPU. It is the only one: measured on this project's machines
// (AMD EPYC, Zen 5), the tiled forward product reads W^1 from L2 as fast
// 16 wide as 8 wide, the row steps are bound by their gathers and the
// column copy's stores (a 16-wide gather and scatter were slower), and
// tiles of 16 rows, which would give a tile's column one 512-bit vector,
// doubled the cache lines the column copy writes (row steps 1.9x slower).

// func addRowsAVX512(c, v []float32, off []int32, b []float32, zero bool)
//
// addRowsAVX2 on len(c) rounded down to a multiple of 16: strips of 128
// then 16 elements of c stay in registers while t runs. The caller checks
// bounds and does the rest.
TEXT ·addRowsAVX512(SB), NOSPLIT, $0-97
	MOVQ c_base+0(FP), DI
	MOVQ c_len+8(FP), CX
	MOVQ v_base+24(FP), SI
	MOVQ v_len+32(FP), R8
	MOVQ off_base+48(FP), R9
	MOVQ b_base+72(FP), R10
	MOVBLZX zero+96(FP), R15
	XORQ AX, AX

strip128:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $128
	JLT  strip16
	LEAQ (DI)(AX*4), R11
	LEAQ (R10)(AX*4), R12
	TESTQ R15, R15
	JNZ  zero128
	ROWS8LOAD(R11, 64, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	XORQ BX, BX
	JMP  t128

zero128:
	ROWS8ZERO(VPXORD, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	XORQ BX, BX

t128:
	CMPQ BX, R8
	JGE  store128
	VBROADCASTSS (SI)(BX*4), Z15
	MOVLQSX (R9)(BX*4), R13
	LEAQ (R12)(R13*4), R14
	MULADD4(R14, 64, 0, Z15, Z8, Z9, Z10, Z11, Z0, Z1, Z2, Z3)
	MULADD4(R14, 64, 4, Z15, Z8, Z9, Z10, Z11, Z4, Z5, Z6, Z7)
	INCQ BX
	JMP  t128

store128:
	ROWS8STORE(R11, 64, Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ADDQ $128, AX
	JMP  strip128

strip16:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $16
	JLT  done
	LEAQ (DI)(AX*4), R11
	LEAQ (R10)(AX*4), R12
	VPXORD Z0, Z0, Z0
	TESTQ R15, R15
	JNZ  zero16
	VMOVUPS 0(R11), Z0

zero16:
	XORQ BX, BX

t16:
	CMPQ BX, R8
	JGE  store16
	VBROADCASTSS (SI)(BX*4), Z15
	MOVLQSX (R9)(BX*4), R13
	VMULPS 0(R12)(R13*4), Z15, Z8
	VADDPS Z8, Z0, Z0
	INCQ BX
	JMP  t16

store16:
	VMOVUPS Z0, 0(R11)
	ADDQ $16, AX
	JMP  strip16

done:
	VZEROUPPER
	RET
