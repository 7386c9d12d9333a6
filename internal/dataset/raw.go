package dataset

import (
	"fmt"
)

// Raw is one decoded split (training or test) of a data set in the
// release's layout: sample i's R intensities are Pixels[i*R : (i+1)*R]
// (MNIST: 784 pixels row-major 28x28; CIFAR: R, G, B planes of 1,024 bytes,
// each row-major 32x32) and its label is Labels[i] in [0, Classes).
type Raw struct {
	Pixels   []uint8
	Labels   []int32
	N, R     int
	Height   int
	Width    int
	Channels int
	Classes  int
}

// Row returns sample i's raw intensities.
func (r *Raw) Row(i int) []uint8 { return r.Pixels[i*r.R : (i+1)*r.R] }

// MNIST release file names, as published.
const (
	MNISTTrainImages = "train-images-idx3-ubyte.gz"
	MNISTTrainLabels = "train-labels-idx1-ubyte.gz"
	MNISTTestImages  = "t10k-images-idx3-ubyte.gz"
	MNISTTestLabels  = "t10k-labels-idx1-ubyte.gz"
)

// CIFAR-10 and CIFAR-100 binary release member names.
var (
	CIFAR10TrainFiles = []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}
	CIFAR10TestFile   = "test_batch.bin"
	CIFAR100TrainFile = "train.bin"
	CIFAR100TestFile  = "test.bin"
)

// DecodeMNISTFiles decodes the four gzip idx files of the MNIST release,
// keyed by their published names (MNISTTrainImages, ...).
func DecodeMNISTFiles(files map[string][]byte) (train, test *Raw, err error) {
	un := func(name string) ([]byte, error) {
		b, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("mnist: missing file %s", name)
		}
		out, err := Gunzip(b)
		if err != nil {
			return nil, fmt.Errorf("mnist %s: %w", name, err)
		}
		return out, nil
	}
	pair := func(imName, lbName string) (*Raw, error) {
		im, err := un(imName)
		if err != nil {
			return nil, err
		}
		lb, err := un(lbName)
		if err != nil {
			return nil, err
		}
		r, err := DecodeMNIST(im, lb)
		if err != nil {
			return nil, fmt.Errorf("mnist %s, %s: %w", imName, lbName, err)
		}
		return r, nil
	}
	if train, err = pair(MNISTTrainImages, MNISTTrainLabels); err != nil {
		return nil, nil, err
	}
	if test, err = pair(MNISTTestImages, MNISTTestLabels); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// DecodeCIFAR10Files decodes the CIFAR-10 binary release, keyed by member
// name (data_batch_1.bin ... data_batch_5.bin, test_batch.bin). Training
// samples are in batch order 1 to 5.
func DecodeCIFAR10Files(files map[string][]byte) (train, test *Raw, err error) {
	size := 0
	for _, name := range CIFAR10TrainFiles {
		size += len(files[name])
	}
	all := make([]byte, 0, size)
	for _, name := range CIFAR10TrainFiles {
		b, ok := files[name]
		if !ok {
			return nil, nil, fmt.Errorf("cifar-10: missing file %s", name)
		}
		if len(b)%cifar10Record != 0 {
			return nil, nil, fmt.Errorf("cifar-10 %s: %w: %d bytes is not a whole number of %d-byte records", name, ErrMalformed, len(b), cifar10Record)
		}
		all = append(all, b...)
	}
	if train, err = DecodeCIFAR10(all); err != nil {
		return nil, nil, err
	}
	b, ok := files[CIFAR10TestFile]
	if !ok {
		return nil, nil, fmt.Errorf("cifar-10: missing file %s", CIFAR10TestFile)
	}
	if test, err = DecodeCIFAR10(b); err != nil {
		return nil, nil, fmt.Errorf("cifar-10 %s: %w", CIFAR10TestFile, err)
	}
	return train, test, nil
}

// DecodeCIFAR100Files decodes the CIFAR-100 binary release (train.bin,
// test.bin) with fine labels.
func DecodeCIFAR100Files(files map[string][]byte) (train, test *Raw, err error) {
	for _, p := range []struct {
		name string
		dst  **Raw
	}{{CIFAR100TrainFile, &train}, {CIFAR100TestFile, &test}} {
		b, ok := files[p.name]
		if !ok {
			return nil, nil, fmt.Errorf("cifar-100: missing file %s", p.name)
		}
		r, _, err := DecodeCIFAR100(b)
		if err != nil {
			return nil, nil, fmt.Errorf("cifar-100 %s: %w", p.name, err)
		}
		*p.dst = r
	}
	return train, test, nil
}
