package stages

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"repro/artifacts"
	"repro/core"
	"repro/pipeline"
)

// keptNetworkParams is a tiny static local run whose network is kept.
func keptNetworkParams() *TrainParams {
	local := core.DefaultLocalConfig()
	local.Hidden, local.Epochs, local.Buffer, local.PRSamples = []int{16, 8}, 2, 8, 4
	local.Static = true
	return &TrainParams{Learner: "local", Protocol: "static", Seed: 3, StreamStride: 1, EvalStride: 1, Local: &local, KeepNetwork: true}
}

// decodeNetworkStage reads input "network" with readNetwork.
var decodeNetworkStage = &pipeline.Stage{Name: "decode", NewParams: func() any { return &struct{}{} },
	Run: func(ctx context.Context, rc *pipeline.RunContext) error {
		nw, err := readNetwork(ctx, rc.Input("network"))
		if err != nil {
			return err
		}
		decoded = nw
		return nil
	}}

var decoded *core.Network

// TestTrainKeepNetwork: keep_network adds the network's outputs and leaves
// the result's bytes alone; the decoded network predicts the evaluation
// set as the run's record says; digests are pinned.
func TestTrainKeepNetwork(t *testing.T) {
	in := tinyTrainInputs(t, "static")
	p := keptNetworkParams()
	out, order := runStage(t, Train, p, in, nil)
	plain := *p
	plain.KeepNetwork = false
	ref, refOrder := runStage(t, Train, &plain, in, nil)
	if len(refOrder) != 1 || string(ref["result"]) != string(out["result"]) {
		t.Fatalf("keep_network changed the result or the plain run's outputs (%v)", refOrder)
	}
	want := []string{"result", "network_sizes", "network_k", "network_w1", "network_b1", "network_mask1",
		"network_w2", "network_b2", "network_mask2", "network_w3", "network_b3"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("outputs %v, want %v", order, want)
	}
	checkGolden(t, "train-local-static-keep", digestLines(out, order))

	if _, _, err := runStageErr(t, decodeNetworkStage, &struct{}{}, map[string]outputs{"network": out}); err != nil {
		t.Fatal(err)
	}
	nw := decoded
	if got := nw.Sizes; len(got) != 4 || got[1] != 16 || got[2] != 8 {
		t.Fatalf("sizes %v", got)
	}
	// Rate inference on the decoded network gives the recorded accuracy.
	data, stream := in["data"], in["stream"]
	xs, shape, _ := artifacts.Float32s(data["train_x"])
	ys, _, _ := artifacts.Int32s(data["train_y"])
	evalIdx, _, _ := artifacts.Int32s(stream["eval_idx"])
	f := core.NewInference(nw)
	ok := 0
	for _, i := range evalIdx {
		if f.Forward(xs[int(i)*shape[1]:int(i+1)*shape[1]]) == int(ys[i]) {
			ok++
		}
	}
	var rec TrainRecord
	if err := json.Unmarshal(out["result"], &rec); err != nil {
		t.Fatal(err)
	}
	if got := float64(ok) / float64(len(evalIdx)); got != rec.Result.FinalAcc {
		t.Errorf("decoded network's accuracy %g, record's %g", got, rec.Result.FinalAcc)
	}
}

// TestReadNetworkErrors: a network artifact of the wrong shape is an error
// naming the input cell and the output.
func TestReadNetworkErrors(t *testing.T) {
	in := tinyTrainInputs(t, "static")
	out, _ := runStage(t, Train, keptNetworkParams(), in, nil)
	tests := []struct {
		name, want string
		mutate     func(o outputs)
	}{
		{"short weights", "network_w2: shape [8 15], want [8 16]", func(o outputs) { o["network_w2"] = artifacts.EncodeFloat32(make([]float32, 120), 8, 15) }},
		{"missing bias", "has no output network_b1", func(o outputs) { delete(o, "network_b1") }},
		{"bad k", "k of layer 1 is 17", func(o outputs) { o["network_k"] = artifacts.EncodeInt32([]int32{0, 17, 1, 0}, 4) }},
		{"mask value", "value 2 at 0", func(o outputs) {
			m := make([]uint8, 16*8)
			m[0] = 2
			o["network_mask2"] = artifacts.EncodeUint8(m, 8, 16)
		}},
		{"not a tensor", "network_sizes: malformed tensor", func(o outputs) { o["network_sizes"] = []byte("junk") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := outputs{}
			for k, v := range out {
				o[k] = v
			}
			tc.mutate(o)
			_, _, err := runStageErr(t, decodeNetworkStage, &struct{}{}, map[string]outputs{"network": o})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "input network") {
				t.Errorf("error %v, want one naming input network and %q", err, tc.want)
			}
		})
	}
}

// TestKeepNetworkKey: keep_network enters the canonical params only when
// set, so every train cell that does not keep its network keeps its key.
func TestKeepNetworkKey(t *testing.T) {
	t.Parallel()
	p := keptNetworkParams()
	text := func() string {
		ps, err := pipeline.EncodeParams("train", p)
		if err != nil {
			t.Fatal(err)
		}
		return pipeline.ParamsText(ps)
	}
	if kept := text(); !strings.Contains(kept, "train.keep_network true\n") {
		t.Errorf("kept params lack keep_network:\n%s", kept)
	}
	p.KeepNetwork = false
	if plain := text(); strings.Contains(plain, "keep_network") {
		t.Errorf("plain params mention keep_network:\n%s", plain)
	}
}
