//go:build !purego

#include "textflag.h"

// func gramTilesAVX2(gram *float64, x *float64, n int, ld int, nb int, m int)
//
// For m tiles of 4 rows x 8 columns from the diagonal, the k-th at
// gram[8k:] (row r at gram[r*n:]), adds over the nb samples b in order
//
//	gram[r*n + 8k + c] += x[b*ld + r] * x[b*ld + 8k + c]
//
// multiply and add separate (the Go loop's operations). The 32 sums stay
// in Y0-Y7 through the samples; Y8-Y9 hold a sample's 8 columns, Y10-Y13
// its 4 row values, Y14-Y15 the products.
TEXT ·gramTilesAVX2(SB), NOSPLIT, $0-48
	MOVQ gram+0(FP), DI
	MOVQ x+8(FP), SI         // the tiles' rows' values
	MOVQ SI, DX              // the tile's columns
	MOVQ n+16(FP), R8
	MOVQ ld+24(FP), R12
	MOVQ nb+32(FP), R9
	MOVQ m+40(FP), R10
	SHLQ $3, R8              // the gram's row stride in bytes
	SHLQ $3, R12             // x's
	LEAQ (R8)(R8*2), R11     // 3 rows

gtile:
	TESTQ R10, R10
	JZ    gdone
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD (DI)(R8*1), Y2
	VMOVUPD 32(DI)(R8*1), Y3
	VMOVUPD (DI)(R8*2), Y4
	VMOVUPD 32(DI)(R8*2), Y5
	VMOVUPD (DI)(R11*1), Y6
	VMOVUPD 32(DI)(R11*1), Y7
	MOVQ SI, AX              // this sample's row values
	MOVQ DX, BX              // this sample's columns
	MOVQ R9, CX

gsample:
	VMOVUPD (BX), Y8
	VMOVUPD 32(BX), Y9
	VBROADCASTSD (AX), Y10
	VBROADCASTSD 8(AX), Y11
	VBROADCASTSD 16(AX), Y12
	VBROADCASTSD 24(AX), Y13
	VMULPD Y8, Y10, Y14
	VMULPD Y9, Y10, Y15
	VADDPD Y14, Y0, Y0
	VADDPD Y15, Y1, Y1
	VMULPD Y8, Y11, Y14
	VMULPD Y9, Y11, Y15
	VADDPD Y14, Y2, Y2
	VADDPD Y15, Y3, Y3
	VMULPD Y8, Y12, Y14
	VMULPD Y9, Y12, Y15
	VADDPD Y14, Y4, Y4
	VADDPD Y15, Y5, Y5
	VMULPD Y8, Y13, Y14
	VMULPD Y9, Y13, Y15
	VADDPD Y14, Y6, Y6
	VADDPD Y15, Y7, Y7
	ADDQ R12, AX
	ADDQ R12, BX
	DECQ CX
	JNZ  gsample

	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, (DI)(R8*1)
	VMOVUPD Y3, 32(DI)(R8*1)
	VMOVUPD Y4, (DI)(R8*2)
	VMOVUPD Y5, 32(DI)(R8*2)
	VMOVUPD Y6, (DI)(R11*1)
	VMOVUPD Y7, 32(DI)(R11*1)
	ADDQ $64, DI
	ADDQ $64, DX
	DECQ R10
	JMP  gtile

gdone:
	VZEROUPPER
	RET
