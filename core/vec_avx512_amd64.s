//go:build amd64

#include "textflag.h"

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
	VMOVUPS 0(R11), Z0
	VMOVUPS 64(R11), Z1
	VMOVUPS 128(R11), Z2
	VMOVUPS 192(R11), Z3
	VMOVUPS 256(R11), Z4
	VMOVUPS 320(R11), Z5
	VMOVUPS 384(R11), Z6
	VMOVUPS 448(R11), Z7
	XORQ BX, BX
	JMP  t128

zero128:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	XORQ BX, BX

t128:
	CMPQ BX, R8
	JGE  store128
	VBROADCASTSS (SI)(BX*4), Z15
	MOVLQSX (R9)(BX*4), R13
	LEAQ (R12)(R13*4), R14
	VMULPS 0(R14), Z15, Z8
	VMULPS 64(R14), Z15, Z9
	VMULPS 128(R14), Z15, Z10
	VMULPS 192(R14), Z15, Z11
	VADDPS Z8, Z0, Z0
	VADDPS Z9, Z1, Z1
	VADDPS Z10, Z2, Z2
	VADDPS Z11, Z3, Z3
	VMULPS 256(R14), Z15, Z8
	VMULPS 320(R14), Z15, Z9
	VMULPS 384(R14), Z15, Z10
	VMULPS 448(R14), Z15, Z11
	VADDPS Z8, Z4, Z4
	VADDPS Z9, Z5, Z5
	VADDPS Z10, Z6, Z6
	VADDPS Z11, Z7, Z7
	INCQ BX
	JMP  t128

store128:
	VMOVUPS Z0, 0(R11)
	VMOVUPS Z1, 64(R11)
	VMOVUPS Z2, 128(R11)
	VMOVUPS Z3, 192(R11)
	VMOVUPS Z4, 256(R11)
	VMOVUPS Z5, 320(R11)
	VMOVUPS Z6, 384(R11)
	VMOVUPS Z7, 448(R11)
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
