package dataset

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/gzip"
)

// File is one release file: where it is published and its published
// SHA-256 (hex) and size in bytes.
type File struct {
	Name   string   // base name, e.g. "train-images-idx3-ubyte.gz"
	URLs   []string // canonical URL first, then official mirrors
	SHA256 string
	Size   int64
}

// Member is a file inside a release archive, with its SHA-256 (the digest
// of the member in the published archive).
type Member struct {
	Name   string
	SHA256 string
}

// Release describes how to obtain one data set's files: either plain Files
// (MNIST) or one Archive whose Members, found under ArchiveDir inside the
// tar, are the outputs (CIFAR).
type Release struct {
	Dataset    string
	MirrorDir  string // folder of a mirror holding the files (or the extracted members)
	Files      []File
	Archive    *File
	ArchiveDir string
	Members    []Member
}

// Outputs returns the release's output names in order: the files' names,
// or the archive's members.
func (r *Release) Outputs() []string {
	var out []string
	for _, f := range r.Files {
		out = append(out, f.Name)
	}
	for _, m := range r.Members {
		out = append(out, m.Name)
	}
	return out
}

// Releases are the canonical sources and published SHA-256 digests
// (the mirror's README.md). yann.lecun.com now often refuses
// downloads, so the two official MNIST mirrors follow it.
var releases = map[string]*Release{
	"mnist": {
		Dataset: "mnist", MirrorDir: "mnist",
		Files: []File{
			mnistFile(MNISTTrainImages, "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609", 9912422),
			mnistFile(MNISTTrainLabels, "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c", 28881),
			mnistFile(MNISTTestImages, "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6", 1648877),
			mnistFile(MNISTTestLabels, "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6", 4542),
		},
	},
	"cifar10": {
		Dataset: "cifar10", MirrorDir: "cifar-10-batches-bin",
		Archive: &File{
			Name:   "cifar-10-binary.tar.gz",
			URLs:   []string{"https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz"},
			SHA256: "c4a38c50a1bc5f3a1c5537f2155ab9d68f9f25eb1ed8d9ddda3db29a59bca1dd",
			Size:   170052171,
		},
		ArchiveDir: "cifar-10-batches-bin",
		Members: []Member{
			{"batches.meta.txt", "558e74b5e208382e186da55784b4bac2cd52e558448e1b5800990fdb28ed8033"},
			{"data_batch_1.bin", "cee916563c9f80d84e3cc88e17fdc0941787f1244f00a67874d45b261883ada5"},
			{"data_batch_2.bin", "a591ca11fa1708a91ee40f54b3da4784ccd871ecf2137de63f51ada8b3fa57ed"},
			{"data_batch_3.bin", "bbe8596564c0f86427f876058170b84dac6670ddf06d79402899d93ceea26f67"},
			{"data_batch_4.bin", "014e562d6e23c72197cc727519169a60359f5eccd8945ad5a09d710285ff4e48"},
			{"data_batch_5.bin", "755304fc0b379caeae8c14f0dac912fbc7d6cd469eb67a1029a08a39453a9add"},
			{"test_batch.bin", "8e2eb146ae340b09e24670f29cabc6326dba54da8789dab6768acf480273f65b"},
		},
	},
	"cifar100": {
		Dataset: "cifar100", MirrorDir: "cifar-100-binary",
		Archive: &File{
			Name:   "cifar-100-binary.tar.gz",
			URLs:   []string{"https://www.cs.toronto.edu/~kriz/cifar-100-binary.tar.gz"},
			SHA256: "58a81ae192c23a4be8b1804d68e518ed807d710a4eb253b1f2a199162a40d8ec",
			Size:   168513733,
		},
		ArchiveDir: "cifar-100-binary",
		Members: []Member{
			{"test.bin", "d8b1e6b7b3bee4020055f0699b111f60b1af1e262aeb93a0b659061746f8224a"},
			{"train.bin", "f31298fc616915fa142368359df1c4ca2ae984d6915ca468b998a5ec6aeebf29"},
		},
	},
}

func mnistFile(name, sum string, size int64) File {
	return File{
		Name: name, SHA256: sum, Size: size,
		URLs: []string{
			"http://yann.lecun.com/exdb/mnist/" + name,
			"https://ossci-datasets.s3.amazonaws.com/mnist/" + name,
			"https://storage.googleapis.com/cvdf-datasets/mnist/" + name,
		},
	}
}

// ReleaseFor returns the release of dataset ("mnist", "cifar10",
// "cifar100"). The result is shared: do not modify it.
func ReleaseFor(dataset string) (*Release, error) {
	r, ok := releases[dataset]
	if !ok {
		return nil, fmt.Errorf("unknown data set %q (want mnist, cifar10 or cifar100)", dataset)
	}
	return r, nil
}

// WithMembers returns a copy of rel whose outputs are the named members
// with the given SHA-256 digests (name -> hex) instead of the published
// ones: a declared release of the data set (a subset, a re-packaging). It
// has no archive and no URL, so it is read from a mirror only. Every
// member name must be one of rel's.
func (rel *Release) WithMembers(digests map[string]string) (*Release, error) {
	if len(rel.Members) == 0 {
		return nil, fmt.Errorf("%s: a declared release needs an archive release (the CIFAR sets)", rel.Dataset)
	}
	cp := *rel
	cp.Archive, cp.Members = nil, nil
	for _, m := range rel.Members {
		d, ok := digests[m.Name]
		if !ok {
			return nil, fmt.Errorf("%s: declared release lacks member %s", rel.Dataset, m.Name)
		}
		if b, err := hex.DecodeString(d); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("%s: member %s: %q is not a hex SHA-256", rel.Dataset, m.Name, d)
		}
		cp.Members = append(cp.Members, Member{Name: m.Name, SHA256: d})
	}
	if len(digests) != len(rel.Members) {
		return nil, fmt.Errorf("%s: declared release names %d members, the data set has %d (%s)", rel.Dataset, len(digests), len(rel.Members), strings.Join(rel.Outputs(), ", "))
	}
	return &cp, nil
}

// Fetcher obtains verified release files, from a local mirror directory if
// it holds them, else over HTTP. It keeps no state between calls.
type Fetcher struct {
	// Client does the HTTP requests; nil means a plain &http.Client{}.
	Client *http.Client
	// Mirror is a directory holding release files (e.g. ../shared/data);
	// "" disables it. A file found there is verified like a download.
	Mirror string
	// Progress, if set, is called with bytes done and the total so far.
	Progress func(done, total int64)
	// Log, if set, receives one line per file obtained.
	Log io.Writer
}

func (f *Fetcher) logf(format string, a ...any) {
	if f.Log != nil {
		fmt.Fprintf(f.Log, format+"\n", a...)
	}
}

// Fetch returns the release's outputs (see Release.Outputs), each verified
// against its published SHA-256. It returns nothing unless every file
// verified; a mismatch is a *ChecksumError naming the file, the expected
// and the actual digest.
func (f *Fetcher) Fetch(ctx context.Context, rel *Release) (map[string][]byte, error) {
	out := map[string][]byte{}
	var total int64
	for _, fl := range rel.Files {
		total += fl.Size
	}
	if rel.Archive != nil {
		total = rel.Archive.Size
	}
	var done int64
	prog := func(n int64) {
		done += n
		if f.Progress != nil {
			f.Progress(done, total)
		}
	}
	for _, fl := range rel.Files {
		b, err := f.fetchFile(ctx, rel, fl, prog)
		if err != nil {
			return nil, err
		}
		out[fl.Name] = b
	}
	if rel.Archive == nil && len(rel.Members) == 0 {
		return out, nil
	}
	// A mirror may hold the extracted members (as ../shared/data does).
	if mem, ok, err := f.mirrorMembers(rel); err != nil {
		return nil, err
	} else if ok {
		prog(total)
		return mem, nil
	}
	if rel.Archive == nil {
		// Members without an archive: a declared release (WithMembers),
		// which no URL publishes.
		return nil, fmt.Errorf("%s: not on the data mirror (a declared release is read from the mirror only)\nlooked for %s in %s",
			rel.Dataset, strings.Join(rel.Outputs(), ", "), filepath.Join(f.Mirror, rel.MirrorDir))
	}
	arc, err := f.fetchFile(ctx, rel, *rel.Archive, prog)
	if err != nil {
		return nil, err
	}
	mem, err := ExtractTarGz(ctx, arc, rel.ArchiveDir, rel.Members)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel.Archive.Name, err)
	}
	f.logf("extracted %d files from %s", len(mem), rel.Archive.Name)
	return mem, nil
}

// mirrorCandidates lists where a mirror may hold name.
func (f *Fetcher) mirrorCandidates(rel *Release, name string) []string {
	if f.Mirror == "" {
		return nil
	}
	return []string{filepath.Join(f.Mirror, name), filepath.Join(f.Mirror, rel.MirrorDir, name)}
}

func (f *Fetcher) mirrorMembers(rel *Release) (map[string][]byte, bool, error) {
	if f.Mirror == "" {
		return nil, false, nil
	}
	out := map[string][]byte{}
	for _, m := range rel.Members {
		p := filepath.Join(f.Mirror, rel.MirrorDir, m.Name)
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("mirror: %w", err)
		}
		if err := verify(m.Name, p, b, m.SHA256); err != nil {
			return nil, false, err
		}
		out[m.Name] = b
	}
	f.logf("%s: %d files from mirror %s", rel.Dataset, len(out), filepath.Join(f.Mirror, rel.MirrorDir))
	return out, true, nil
}

func (f *Fetcher) fetchFile(ctx context.Context, rel *Release, fl File, prog func(int64)) ([]byte, error) {
	for _, p := range f.mirrorCandidates(rel, fl.Name) {
		b, err := os.ReadFile(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("mirror: %w", err)
		}
		// A corrupt mirror is an error, not a reason to fall back: the
		// user asked for it and should repair it.
		if err := verify(fl.Name, p, b, fl.SHA256); err != nil {
			return nil, err
		}
		prog(int64(len(b)))
		f.logf("%s: from mirror %s", fl.Name, p)
		return b, nil
	}
	var errs []error
	for _, u := range fl.URLs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := f.get(ctx, u, prog)
		if err == nil {
			err = verify(fl.Name, u, b, fl.SHA256)
		}
		if err != nil {
			f.logf("%s: %v", fl.Name, err)
			errs = append(errs, err)
			prog(-int64(len(b)))
			continue
		}
		f.logf("%s: downloaded from %s (%d bytes)", fl.Name, u, len(b))
		return b, nil
	}
	// The first line is the reason a table shows for cells that could not
	// run (no machine path in it); the rest is what a user fixes.
	why := "no URL served it"
	if offline(errs) {
		why = "no network"
	}
	if f.Mirror != "" {
		// Say the mirror was tried: its absence, not the network, is what
		// a user with a mirror has to fix.
		err := fmt.Errorf("%s: not on the data mirror, and %s\nthe data mirror %s lacks it (looked for %s): %w",
			fl.Name, why, f.Mirror, strings.Join(f.mirrorCandidates(rel, fl.Name), " and "), errors.Join(errs...))
		if offline(errs) {
			return nil, &absentError{err}
		}
		return nil, err
	}
	return nil, fmt.Errorf("%s: no data mirror, and %s\nno data mirror set (settings.data_mirror or REPRO_DATA_MIRROR): %w", fl.Name, why, errors.Join(errs...))
}

// ErrAbsent is what errors.Is finds in the error of a download whose file
// is neither on the data mirror nor reachable (no network): the data set is
// absent from this machine by its setup, not damaged or refused. A run
// reports such a release once, with the cells it blocks, and does not fail
// for it (CIFAR-100 on a mirror without it).
var ErrAbsent = errors.New("release absent: not on the data mirror, and no network")

// absentError keeps the download's own message and matches ErrAbsent.
type absentError struct{ err error }

func (e *absentError) Error() string        { return e.err.Error() }
func (e *absentError) Unwrap() error        { return e.err }
func (e *absentError) Is(target error) bool { return target == ErrAbsent }

// offline reports whether every URL failed before any HTTP response (a
// name that does not resolve, a refused or unreachable connection): the
// machine has no network, as opposed to a server refusing the file.
func offline(errs []error) bool {
	for _, err := range errs {
		var ne net.Error
		if !errors.As(err, &ne) {
			return false
		}
	}
	return len(errs) > 0
}

// maxDownload bounds one file (the largest release archive is 170 MB).
const maxDownload = 1 << 30

func (f *Fetcher) get(ctx context.Context, url string, prog func(int64)) ([]byte, error) {
	client := f.Client
	if client == nil {
		client = &http.Client{}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	var buf bytes.Buffer
	if resp.ContentLength > 0 && resp.ContentLength <= maxDownload {
		buf.Grow(int(resp.ContentLength))
	}
	var n int64
	chunk := make([]byte, 1<<16)
	for {
		k, rerr := resp.Body.Read(chunk)
		buf.Write(chunk[:k])
		n += int64(k)
		prog(int64(k))
		if n > maxDownload {
			return buf.Bytes(), fmt.Errorf("GET %s: more than %d bytes", url, maxDownload)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return buf.Bytes(), fmt.Errorf("GET %s: after %d bytes: %w", url, n, rerr)
		}
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return buf.Bytes(), fmt.Errorf("GET %s: got %d of %d bytes", url, n, resp.ContentLength)
	}
	return buf.Bytes(), nil
}

// SHA256Hex returns the hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func verify(name, source string, b []byte, want string) error {
	if got := SHA256Hex(b); got != want {
		return &ChecksumError{File: name, Source: source, Expected: want, Actual: got}
	}
	return nil
}

// maxMember bounds one extracted member (CIFAR-100's train.bin: 154 MB).
const maxMember = 1 << 29

// ExtractTarGz returns the members of a gzip tar archive that lie in dir
// (dir/name), each verified against its SHA-256. Every member must be
// present; other entries are ignored.
func ExtractTarGz(ctx context.Context, archive []byte, dir string, members []Member) (map[string][]byte, error) {
	want := map[string]Member{}
	for _, m := range members {
		want[m.Name] = m
	}
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, fmt.Errorf("extract: %w: %v", ErrMalformed, err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("extract: %w: %v", ErrMalformed, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path.Clean(strings.TrimPrefix(h.Name, "./"))
		d, base := path.Split(name)
		if strings.TrimSuffix(d, "/") != dir {
			continue
		}
		m, ok := want[base]
		if !ok {
			continue
		}
		if h.Size > maxMember {
			return nil, fmt.Errorf("extract %s: %w: %d bytes", name, ErrMalformed, h.Size)
		}
		b, err := io.ReadAll(io.LimitReader(tr, maxMember+1))
		if err != nil {
			return nil, fmt.Errorf("extract %s: %w: %v", name, ErrMalformed, err)
		}
		if err := verify(base, name, b, m.SHA256); err != nil {
			return nil, err
		}
		out[base] = b
	}
	for _, m := range members {
		if _, ok := out[m.Name]; !ok {
			return nil, fmt.Errorf("extract: %w: archive has no %s/%s", ErrMalformed, dir, m.Name)
		}
	}
	return out, nil
}
