// Macros of the addRows kernels (vec_amd64.s in 8 lanes, vec_avx512_amd64.s
// in 16): the strip of 8 accumulators A0-A7, one vector of W bytes each,
// loaded from or stored to P, zeroed by ZERO (the register class's XOR);
// MULADD4 adds BC (the broadcast term) times the 4 vectors of B from
// vector FIRST on into A0-A3, multiply and add separate, through T0-T3.

#define ROWS8LOAD(P, W, A0, A1, A2, A3, A4, A5, A6, A7) \
	VMOVUPS (0*W)(P), A0 \
	VMOVUPS (1*W)(P), A1 \
	VMOVUPS (2*W)(P), A2 \
	VMOVUPS (3*W)(P), A3 \
	VMOVUPS (4*W)(P), A4 \
	VMOVUPS (5*W)(P), A5 \
	VMOVUPS (6*W)(P), A6 \
	VMOVUPS (7*W)(P), A7

#define ROWS8STORE(P, W, A0, A1, A2, A3, A4, A5, A6, A7) \
	VMOVUPS A0, (0*W)(P) \
	VMOVUPS A1, (1*W)(P) \
	VMOVUPS A2, (2*W)(P) \
	VMOVUPS A3, (3*W)(P) \
	VMOVUPS A4, (4*W)(P) \
	VMOVUPS A5, (5*W)(P) \
	VMOVUPS A6, (6*W)(P) \
	VMOVUPS A7, (7*W)(P)

#define ROWS8ZERO(ZERO, A0, A1, A2, A3, A4, A5, A6, A7) \
	ZERO A0, A0, A0 \
	ZERO A1, A1, A1 \
	ZERO A2, A2, A2 \
	ZERO A3, A3, A3 \
	ZERO A4, A4, A4 \
	ZERO A5, A5, A5 \
	ZERO A6, A6, A6 \
	ZERO A7, A7, A7

#define MULADD4(B, W, FIRST, BC, T0, T1, T2, T3, A0, A1, A2, A3) \
	VMULPS ((FIRST+0)*W)(B), BC, T0 \
	VMULPS ((FIRST+1)*W)(B), BC, T1 \
	VMULPS ((FIRST+2)*W)(B), BC, T2 \
	VMULPS ((FIRST+3)*W)(B), BC, T3 \
	VADDPS T0, A0, A0 \
	VADDPS T1, A1, A1 \
	VADDPS T2, A2, A2 \
	VADDPS T3, A3, A3
