//go:build amd64

#include "textflag.h"

// func addRowsAVX2(c, v []float32, off []int32, b []float32)
//
// For j in [0, len(c)) rounded down to a multiple of 8:
//	c[j] = c[j] + v[t]*b[off[t]+j], t ascending,
// multiply and add separate (no FMA), as in addRowsGo. Strips of 64 then 8
// elements of c stay in registers while t runs. The caller checks bounds
// and does the tail.
TEXT ·addRowsAVX2(SB), NOSPLIT, $0-96
	MOVQ c_base+0(FP), DI
	MOVQ c_len+8(FP), CX
	MOVQ v_base+24(FP), SI
	MOVQ v_len+32(FP), R8
	MOVQ off_base+48(FP), R9
	MOVQ b_base+72(FP), R10
	XORQ AX, AX

strip64:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $64
	JLT  strip8
	LEAQ (DI)(AX*4), R11
	LEAQ (R10)(AX*4), R12
	VMOVUPS 0(R11), Y0
	VMOVUPS 32(R11), Y1
	VMOVUPS 64(R11), Y2
	VMOVUPS 96(R11), Y3
	VMOVUPS 128(R11), Y4
	VMOVUPS 160(R11), Y5
	VMOVUPS 192(R11), Y6
	VMOVUPS 224(R11), Y7
	XORQ BX, BX

t64:
	CMPQ BX, R8
	JGE  store64
	VBROADCASTSS (SI)(BX*4), Y15
	MOVLQSX (R9)(BX*4), R13
	LEAQ (R12)(R13*4), R14
	VMULPS 0(R14), Y15, Y8
	VMULPS 32(R14), Y15, Y9
	VMULPS 64(R14), Y15, Y10
	VMULPS 96(R14), Y15, Y11
	VADDPS Y8, Y0, Y0
	VADDPS Y9, Y1, Y1
	VADDPS Y10, Y2, Y2
	VADDPS Y11, Y3, Y3
	VMULPS 128(R14), Y15, Y8
	VMULPS 160(R14), Y15, Y9
	VMULPS 192(R14), Y15, Y10
	VMULPS 224(R14), Y15, Y11
	VADDPS Y8, Y4, Y4
	VADDPS Y9, Y5, Y5
	VADDPS Y10, Y6, Y6
	VADDPS Y11, Y7, Y7
	INCQ BX
	JMP  t64

store64:
	VMOVUPS Y0, 0(R11)
	VMOVUPS Y1, 32(R11)
	VMOVUPS Y2, 64(R11)
	VMOVUPS Y3, 96(R11)
	VMOVUPS Y4, 128(R11)
	VMOVUPS Y5, 160(R11)
	VMOVUPS Y6, 192(R11)
	VMOVUPS Y7, 224(R11)
	ADDQ $64, AX
	JMP  strip64

strip8:
	MOVQ CX, DX
	SUBQ AX, DX
	CMPQ DX, $8
	JLT  done
	LEAQ (DI)(AX*4), R11
	LEAQ (R10)(AX*4), R12
	VMOVUPS 0(R11), Y0
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
