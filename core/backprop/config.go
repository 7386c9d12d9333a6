package backprop

import (
	"fmt"
	"slices"

	"repro/core"
)

// Methods accepted in Config.Method.
const (
	MethodNone  = "none"  // plain backprop, no buffer (the static reference)
	MethodER    = "er"    // BP+ER: incoming and replay batches concatenated, one step
	MethodDERPP = "derpp" // DER++: label loss + alpha logit distillation + beta buffer labels
	MethodERACE = "erace" // ER-ACE: incoming loss over the classes present in the batch
	MethodAGEM  = "agem"  // A-GEM: incoming gradient projected against a buffer gradient
	MethodLocal = "local" // k-WTA MLP under the local learner's schedule (run_bp_local)
)

// Config is one backprop learner's settings. The train stage uses it
// directly as a cell's params; field names follow the reference's config
// keys where it has one. Use DefaultConfig and override (the paper's
// reference configs are data: presets/presets.toml).
type Config struct {
	// Method is one of "none", "er", "derpp", "erace", "agem", "local".
	Method string `toml:"method"`
	// Hidden are the hidden-layer widths, e.g. [256, 128] or [512, 256].
	Hidden []int `toml:"hidden"`
	// Loss on labels: "mse" (sum over classes of the squared error against
	// the one-hot target) or "ce" (cross-entropy). ER-ACE requires "ce".
	Loss string `toml:"loss"`
	// LR is Adam's learning rate (the reference's bp_lr).
	LR float64 `toml:"lr"`
	// WeightDecay is Adam's coupled L2 coefficient (1e-3 in every cell).
	WeightDecay float64 `toml:"weight_decay"`
	// K is the reservoir capacity; 0 disables the buffer.
	K int `toml:"k"`
	// Epochs per task: 5, or 1 for the single-pass variants.
	Epochs int `toml:"epochs"`
	// Batch is the waking (incoming) batch: 256 for run(), 16 for "local".
	Batch int `toml:"batch"`
	// ReplayBatch is the number of buffer samples per draw (fewer while the
	// buffer holds fewer): 256 for run(), 16 for "local".
	ReplayBatch int `toml:"replay_batch"`
	// Alpha and Beta weight DER++'s logit and buffer-label terms; alpha
	// multiplies the per-sample sum of squared logit differences.
	Alpha float64 `toml:"alpha"`
	Beta  float64 `toml:"beta"`
	// KWTA is the active fraction of the k-WTA hidden layers; 0 is plain
	// ReLU. The local schedule uses 0.10.
	KWTA float64 `toml:"kwta"`
	// Isolate masks the local schedule's replay step with the awake sets of
	// the waking batch; Rotate benches the previous waking batch's awake
	// units on the next waking forward pass (refractory rotation).
	Isolate bool `toml:"isolate"`
	Rotate  bool `toml:"rotate"`
	// ReplayGain multiplies LR for the local schedule's replay step (1 in
	// the reference, unlike the local learner's 3).
	ReplayGain float64 `toml:"replay_gain"`
	// Conn, when > 0, gives every weight layer but the readout the local
	// learner's distance-dependent sparse wiring at this density (the
	// reference's bp_conn, 0.30 in its equal-connectivity control):
	// absent synapses start at zero and are zeroed again after every
	// optimiser step, so the wiring is structural. 0 is dense.
	Conn float64 `toml:"conn,omitzero"`
}

// DefaultConfig returns BP+ER as the paper runs it (`bp_er_1000`): 256-128,
// squared error, Adam lr 1e-3 with L2 1e-3, K = 1000, 5 epochs, batches of
// 256 + 256. DER++'s alpha and beta take the reference's fallbacks (0.3,
// 0.5), ReplayGain 1.
func DefaultConfig() Config {
	return Config{
		Method: MethodER, Hidden: []int{256, 128}, Loss: "mse", LR: 1e-3, WeightDecay: 1e-3,
		K: 1000, Epochs: 5, Batch: 256, ReplayBatch: 256, Alpha: 0.3, Beta: 0.5, ReplayGain: 1,
	}
}

// Validate reports the first invalid field, by its TOML name.
func (c *Config) Validate() error {
	methods := []string{MethodNone, MethodER, MethodDERPP, MethodERACE, MethodAGEM, MethodLocal}
	if err := core.CheckFinite(c, nil); err != nil {
		return err
	}
	switch {
	case !slices.Contains(methods, c.Method):
		return fieldErr("method", "method = %q, want one of %q", c.Method, methods)
	case len(c.Hidden) == 0:
		return fieldErr("hidden", "hidden is empty, want at least one width")
	case slices.ContainsFunc(c.Hidden, func(w int) bool { return w <= 0 }):
		return fieldErr("hidden", "hidden = %v, want positive widths", c.Hidden)
	case c.Loss != "mse" && c.Loss != "ce":
		return fieldErr("loss", "loss = %q, want \"mse\" or \"ce\"", c.Loss)
	case c.Method == MethodERACE && c.Loss != "ce":
		return fieldErr("loss", "loss = %q, ER-ACE is defined with cross-entropy, want \"ce\"", c.Loss)
	case !(c.LR > 0):
		return fieldErr("lr", "lr = %v, want > 0", c.LR)
	case !(c.WeightDecay >= 0):
		return fieldErr("weight_decay", "weight_decay = %v, want >= 0", c.WeightDecay)
	case c.K < 0:
		return fieldErr("k", "k = %d, want >= 0", c.K)
	case c.Method == MethodNone && c.K != 0:
		return fieldErr("k", "k = %d, method \"none\" has no buffer, want 0", c.K)
	case c.Epochs < 1:
		return fieldErr("epochs", "epochs = %d, want >= 1", c.Epochs)
	case c.Batch < 1:
		return fieldErr("batch", "batch = %d, want >= 1", c.Batch)
	case c.K > 0 && c.ReplayBatch < 1:
		return fieldErr("replay_batch", "replay_batch = %d, want >= 1", c.ReplayBatch)
	case !(c.Alpha >= 0):
		return fieldErr("alpha", "alpha = %v, want >= 0", c.Alpha)
	case !(c.Beta >= 0):
		return fieldErr("beta", "beta = %v, want >= 0", c.Beta)
	case !(c.KWTA >= 0 && c.KWTA <= 1):
		return fieldErr("kwta", "kwta = %v, want in [0, 1]", c.KWTA)
	case (c.Isolate || c.Rotate) && c.Method != MethodLocal:
		return fieldErr("isolate", "isolate/rotate set for method %q, want method \"local\"", c.Method)
	case !(c.Conn >= 0 && c.Conn <= 1):
		return fieldErr("conn", "conn = %v, want in [0, 1] (0: dense)", c.Conn)
	case c.Method == MethodLocal && !(c.ReplayGain > 0):
		return fieldErr("replay_gain", "replay_gain = %v, want > 0", c.ReplayGain)
	}
	return nil
}

// fieldErr is a validation error naming its TOML field.
func fieldErr(field, format string, args ...any) error {
	return &core.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

func (c *Config) loss() Loss {
	if c.Loss == "ce" {
		return CrossEntropy
	}
	return SquaredError
}
