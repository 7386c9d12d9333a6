package dataset

import (
	"gonum.org/v1/gonum/mat"
)

// probeChunk is how many rows of X are widened to float64 at a time.
const probeChunk = 2048

// RidgeProbe fits, for each ridge penalty in lambdas, a linear
// least-squares classifier (one-hot targets; a bias column, unpenalised) on
// (trX, trY) and returns its accuracy on (teX, teY), one per lambda. X are
// row-major [N*D]. It is the check behind the paper's "linear probe ≈ 49%"
// for the V1 features. An accuracy is 0 where the normal equations are
// singular.
func RidgeProbe(trX []float32, trY []int32, teX []float32, teY []int32, D, classes int, lambdas []float64) []float64 {
	n := len(trY)
	var A, B mat.Dense // A = Xᵀ X, B = Xᵀ Y, X with a final column of ones
	A.ReuseAs(D+1, D+1)
	B.ReuseAs(D+1, classes)
	A.Zero()
	B.Zero()
	for lo := 0; lo < n; lo += probeChunk {
		hi := min(lo+probeChunk, n)
		X := mat.NewDense(hi-lo, D+1, nil)
		Y := mat.NewDense(hi-lo, classes, nil)
		for i := lo; i < hi; i++ {
			for j, v := range trX[i*D : (i+1)*D] {
				X.Set(i-lo, j, float64(v))
			}
			X.Set(i-lo, D, 1)
			Y.Set(i-lo, int(trY[i]), 1)
		}
		var a, b mat.Dense
		a.Mul(X.T(), X)
		b.Mul(X.T(), Y)
		A.Add(&A, &a)
		B.Add(&B, &b)
	}
	accs := make([]float64, len(lambdas))
	for li, lambda := range lambdas {
		var Al mat.Dense
		Al.CloneFrom(&A)
		for j := range D {
			Al.Set(j, j, Al.At(j, j)+lambda)
		}
		var W mat.Dense
		if err := W.Solve(&Al, &B); err != nil {
			continue
		}
		accs[li] = accuracy(&W, teX, teY, D, classes)
	}
	return accs
}

// accuracy scores the linear classifier W ([D+1, classes], bias last).
func accuracy(W *mat.Dense, teX []float32, teY []int32, D, classes int) float64 {
	correct := 0
	for i := range teY {
		best, arg := 0.0, -1
		for c := range classes {
			s := W.At(D, c)
			for j, v := range teX[i*D : (i+1)*D] {
				s += float64(v) * W.At(j, c)
			}
			if arg < 0 || s > best {
				best, arg = s, c
			}
		}
		if int32(arg) == teY[i] {
			correct++
		}
	}
	return float64(correct) / float64(len(teY))
}
