package core

import (
	"errors"
	"fmt"
	"slices"
)

// LocalConfig is one configuration of the local learner (the reference's
// `run_local` cell dictionary). Every variant of the paper is
// a field, so a pipeline.toml cell selects it by params; the TOML names are
// the reference's config keys where one exists. DefaultLocalConfig returns the
// default system; the zero value is not valid.
type LocalConfig struct {
	// Substrate.
	Hidden      []int   `toml:"hidden"`       // hidden widths, e.g. [512, 256]
	ActiveFrac  float64 `toml:"active_frac"`  // k-WTA fraction f, k = max(1, round(f n))
	ConnDensity float64 `toml:"conn_density"` // fraction of W^l (l <= L-1) synapses kept
	ConnMode    string  `toml:"conn_mode"`    // "dist" (exp(-d/conn_lambda) propensity) or "random"
	ConnLambda  float64 `toml:"conn_lambda"`  // length scale of the distance propensity, 0.15
	EIFrac      float64 `toml:"ei_frac"`      // excitatory fraction of each hidden layer, 0.8
	Kappa       float64 `toml:"kappa"`        // error bound kappa of kappa*tanh(eps/kappa), 1
	TgtScale    float64 `toml:"tgt_scale"`    // one-hot target scale, 1
	Skip        bool    `toml:"skip"`         // skip synapses S^l from a^{l-2} for l >= 3 (deep nets)

	// Substrate switches (the substrate ladder of the appendix; substrate.go).
	// Each zero value is the default system's setting.
	//
	// ActiveFracs is a k-WTA fraction per hidden layer (replaces
	// active_frac), e.g. [0.15, 0.05].
	ActiveFracs []float64 `toml:"active_fracs,omitzero"`
	NoKWTA      bool      `toml:"no_kwta,omitzero"`    // every positive unit fires (no k-WTA)
	Unbounded   bool      `toml:"unbounded,omitzero"`  // the raw error eps instead of kappa tanh(eps/kappa)
	NoDale      bool      `toml:"no_dale,omitzero"`    // no Dale sign clamp on W^l (l >= 2)
	NoDaleFB    bool      `toml:"no_dale_fb,omitzero"` // no Dale sign clamp on the feedback twins
	// Transport makes the feedback the forward weights (B^{l-1} = W^l, weight
	// transport): no twin, no Kolen-Pollack decay, and the coupled L2
	// input_l2 on every layer, as the reference's transport=True.
	Transport   bool `toml:"transport,omitzero"`
	NoBurstGate bool `toml:"no_burst_gate,omitzero"` // silent units learn and relay the burst error too
	// BurstMult makes hidden plasticity and the relayed burst proportional
	// to the rate (the burst deviation times a), instead of gated by a > 0.
	BurstMult bool `toml:"burst_mult,omitzero"`
	// RelaxT > 0 replaces the single-phase burst sweep by RelaxT steps of
	// iterative settling of the hidden value nodes with step RelaxGamma.
	RelaxT     int     `toml:"relax_t,omitzero"`
	RelaxGamma float64 `toml:"relax_gamma,omitzero"`
	// Mirror > 0 runs that many weight-mirror batches (noise through W^l,
	// Hebbian pull of B^{l-1} toward it) after every epoch.
	Mirror int `toml:"mirror,omitzero"`
	// SpikeTrain > 0 replaces every hidden rate a by Poisson(a T_s)/T_s
	// while training (not at evaluation), T_s = SpikeTrain.
	SpikeTrain int `toml:"spike_train,omitzero"`

	// Plasticity and optimiser.
	Opt         string  `toml:"opt"`          // "sgd" (heavy ball) or "adam" (masked, eps-floored)
	Momentum    float64 `toml:"momentum"`     // heavy-ball mu, 0.9
	AdamEps     float64 `toml:"adam_eps"`     // Adam epsilon, 1e-3
	LeakMoments bool    `toml:"leak_moments"` // Adam moments advance outside the replay mask
	Eta         float64 `toml:"eta"`          // base rate; waking eta*batch_wake/256, replay eta*nrem_gain
	NremGain    float64 `toml:"nrem_gain"`    // replay gain, 3
	KPDecay     float64 `toml:"kp_decay"`     // Kolen-Pollack decay per update call, layers >= 2
	InputL2     float64 `toml:"input_l2"`     // coupled L2 of W^1 inside its gradient, 1e-3
	BaselineEMA float64 `toml:"baseline_ema"` // burst-baseline EMA rate (waking calls), 0.01
	// Anchor is the two-timescale anchor (lambda_a, mu_a), e.g. [3e-4, 3e-4];
	// empty for none.
	Anchor []float64 `toml:"anchor"`
	// KPAdapt is the adaptive decay controller's rho (0.25); 0 = fixed decay.
	KPAdapt     float64 `toml:"kp_adapt"`
	KPAdaptMode string  `toml:"kp_adapt_mode"` // "drive" or "grad"

	// Schedule is "local" (the reference's run_local: waking replay under
	// the masks) or "offline" (its run(): no rotation and no waking replay;
	// with night = true, a night of buffer batches after every epoch, which
	// is the paper's offline-night reference).
	Schedule    string `toml:"schedule"`
	Epochs      int    `toml:"epochs"`       // epochs per task (1 = single pass)
	Static      bool   `toml:"static"`       // one task holding all classes (i.i.d. protocol)
	BatchWake   int    `toml:"batch_wake"`   // waking batch, 16
	BatchReplay int    `toml:"batch_replay"` // replay micro-batch, 16
	Cadence     int    `toml:"cadence"`      // replay on every cadence-th waking batch
	Burst       int    `toml:"burst"`        // replay micro-batches per replay event
	Buffer      int    `toml:"buffer"`       // reservoir capacity K (0 = no replay)
	Mask        string `toml:"mask"`         // refractory, silent, none, random, soft, mirror
	Readout     string `toml:"readout"`      // "free" or "isolated"
	NoIso       bool   `toml:"no_iso"`       // rotation runs but replay is unmasked
	// ReplayReadoutOnly freezes every hidden synapse during replay but
	// the skip synapses S^l, which keep the asleep mask (as the
	// reference's loop does).
	ReplayReadoutOnly bool    `toml:"replay_readout_only"`
	MaskPostWake      bool    `toml:"mask_post_wake"` // awake sets re-inferred after the waking update
	SoftGain          float64 `toml:"soft_gain"`      // suppression of the soft rotation, 0.5
	// Rotation by accumulated unit pressure (mask refr_press: bench units
	// whose pressure reached theta_r, 0 = 4; refr_frac: bench the top
	// frac_r of units by pressure, 0 = 0.25) and utility-exempt rotation
	// (mask refr_util: the top util_q of units by long-term use stay awake,
	// 0 = 0.25). See rotation.go.
	ThetaR float64 `toml:"theta_r,omitzero"`
	FracR  float64 `toml:"frac_r,omitzero"`
	UtilQ  float64 `toml:"util_q,omitzero"`
	// ReplayNoise is the s.d. of Gaussian noise added to every replayed
	// input (waking replay and nights); 0 = verbatim replay.
	ReplayNoise float64 `toml:"replay_noise,omitzero"`
	// Structural plasticity (prune the weakest sp_rho of each masked
	// layer's synapses and regrow as many): sp = "local" after every
	// sp_every replay micro-batches, "epoch" after every epoch, "night"
	// after every night; "" = off. sp_rho 0 = 0.05, sp_every 0 = 128.
	SP      string  `toml:"sp,omitzero"`
	SPRho   float64 `toml:"sp_rho,omitzero"`
	SPEvery int     `toml:"sp_every,omitzero"`

	// Gates: "" (always), pressure, surprise,
	// refr_nov, refr_prog, refr_block.
	Gate     string  `toml:"gate"`
	Theta    float64 `toml:"theta"`     // pressure / surprise threshold
	Delta    float64 `toml:"delta"`     // pressure discharge, 1
	BetaNov  float64 `toml:"beta_nov"`  // relative-novelty beta, 1.3
	GammaP   float64 `toml:"gamma_p"`   // unmastered clause gamma (code default 0.3, tables 0.5)
	Block    int     `toml:"block"`     // bout length M, 2048
	BlockOff int     `toml:"block_off"` // OFF refractory after a bout, 0

	// Night on top of local sleep: after every epoch NightBatches unmasked
	// buffer batches of NightBatch at eta*nrem_gain.
	Night        bool `toml:"night"`
	NightBatches int  `toml:"night_batches"`
	NightBatch   int  `toml:"night_batch"`

	// Diagnostics.
	DiagDrift bool `toml:"diag_drift"` // record the exactness diagnostic (Drift)
	// DiagChannels records which consolidation channel each masked synapse
	// enters through (Result.MaskChannels). It only counts: the run's
	// numbers are bit-identical with it on or off.
	DiagChannels bool `toml:"diag_channels,omitzero"`
	PRSamples    int  `toml:"pr_samples"` // evaluation samples of the participation ratio, 3000
}

// DefaultLocalConfig returns the paper's default system, the reference's
// `g16_sgd_refr_s10_w512` on MNIST.
func DefaultLocalConfig() LocalConfig {
	return LocalConfig{
		Hidden: []int{512, 256}, ActiveFrac: 0.10,
		ConnDensity: 0.30, ConnMode: "dist", ConnLambda: 0.15, EIFrac: 0.8,
		Kappa: 1, TgtScale: 1,
		Opt: "sgd", Momentum: 0.9, AdamEps: 1e-3,
		Eta: 0.02, NremGain: 3, KPDecay: 1e-3, InputL2: 1e-3, BaselineEMA: 0.01,
		KPAdaptMode: "drive",
		Schedule:    "local", Epochs: 5, BatchWake: 16, BatchReplay: 16, Cadence: 1, Burst: 1, Buffer: 1000,
		Mask: "refractory", Readout: "free", SoftGain: 0.5,
		Delta: 1, BetaNov: 1.3, GammaP: 0.3, Block: 2048,
		NightBatches: 20, NightBatch: 256,
		PRSamples: 3000,
	}
}

// ErrConfig is wrapped by every LocalConfig validation error.
var ErrConfig = errors.New("invalid config")

// Validate checks every field and returns an error naming the first bad one.
func (c *LocalConfig) Validate() error {
	if err := CheckFinite(c, ErrConfig); err != nil {
		return err
	}
	if err := c.validateLearner(); err != nil {
		return err
	}
	if err := c.validateReplay(); err != nil {
		return err
	}
	return c.validateSubstrate()
}

// badField is the error Validate returns for field holding v: why it is
// out of range.
func badField(field string, v any, why string) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf("%v: %s = %v: %s", ErrConfig, field, v, why), Err: ErrConfig}
}

// validateLearner checks the network, plasticity and optimiser fields.
func (c *LocalConfig) validateLearner() error {
	if len(c.Hidden) == 0 {
		return badField("hidden", c.Hidden, "need at least one hidden layer")
	}
	for _, h := range c.Hidden {
		if h < 1 {
			return badField("hidden", c.Hidden, "widths must be >= 1")
		}
	}
	switch {
	case !(c.ActiveFrac > 0 && c.ActiveFrac <= 1):
		return badField("active_frac", c.ActiveFrac, "must be in (0, 1]")
	case !(c.ConnDensity > 0 && c.ConnDensity <= 1):
		return badField("conn_density", c.ConnDensity, "must be in (0, 1]")
	case c.ConnMode != "dist" && c.ConnMode != "random":
		return badField("conn_mode", c.ConnMode, `must be "dist" or "random"`)
	case !(c.ConnLambda > 0):
		return badField("conn_lambda", c.ConnLambda, "must be > 0")
	case !(c.EIFrac >= 0 && c.EIFrac <= 1):
		return badField("ei_frac", c.EIFrac, "must be in [0, 1]")
	case !(c.Kappa > 0):
		return badField("kappa", c.Kappa, "must be > 0")
	case !(c.TgtScale > 0):
		return badField("tgt_scale", c.TgtScale, "must be > 0")
	case !slices.Contains(optNames, c.Opt):
		return badField("opt", c.Opt, `must be "sgd" or "adam"`)
	case !(c.Momentum >= 0 && c.Momentum < 1):
		return badField("momentum", c.Momentum, "must be in [0, 1)")
	case !(c.AdamEps > 0):
		return badField("adam_eps", c.AdamEps, "must be > 0")
	case !(c.Eta > 0):
		return badField("eta", c.Eta, "must be > 0")
	case !(c.NremGain >= 0):
		return badField("nrem_gain", c.NremGain, "must be >= 0")
	case !(c.KPDecay >= 0 && c.KPDecay < 1):
		return badField("kp_decay", c.KPDecay, "must be in [0, 1)")
	case !(c.InputL2 >= 0):
		return badField("input_l2", c.InputL2, "must be >= 0")
	case !(c.BaselineEMA >= 0 && c.BaselineEMA <= 1):
		return badField("baseline_ema", c.BaselineEMA, "must be in [0, 1]")
	case len(c.Anchor) != 0 && len(c.Anchor) != 2:
		return badField("anchor", c.Anchor, "must be empty or [lambda_a, mu_a]")
	case !(c.KPAdapt >= 0):
		return badField("kp_adapt", c.KPAdapt, "must be >= 0")
	case !slices.Contains(ctrlNames, c.KPAdaptMode):
		return badField("kp_adapt_mode", c.KPAdaptMode, `must be "drive" or "grad"`)
	}
	for i, a := range c.Anchor {
		if !(a >= 0 && a <= 1) {
			return badField(fmt.Sprintf("anchor[%d]", i), a, "must be in [0, 1]")
		}
	}
	return nil
}

// validateReplay checks the schedule, replay, mask and gate fields.
func (c *LocalConfig) validateReplay() error {
	switch {
	case !slices.Contains(scheduleNames, c.Schedule):
		return badField("schedule", c.Schedule, `must be "local" or "offline"`)
	case c.Epochs < 1:
		return badField("epochs", c.Epochs, "must be >= 1")
	case c.BatchWake < 1:
		return badField("batch_wake", c.BatchWake, "must be >= 1")
	case c.BatchReplay < 1:
		return badField("batch_replay", c.BatchReplay, "must be >= 1")
	case c.Cadence < 1:
		return badField("cadence", c.Cadence, "must be >= 1")
	case c.Burst < 1:
		return badField("burst", c.Burst, "must be >= 1")
	case c.Buffer < 0:
		return badField("buffer", c.Buffer, "must be >= 0")
	case !slices.Contains(maskNames, c.Mask):
		return badField("mask", c.Mask, "must be refractory, silent, none, random, soft, mirror, refr_press, refr_frac or refr_util")
	case !slices.Contains(readoutNames, c.Readout):
		return badField("readout", c.Readout, `must be "free" or "isolated"`)
	case !(c.SoftGain >= 0 && c.SoftGain <= 1):
		return badField("soft_gain", c.SoftGain, "must be in [0, 1]")
	case !slices.Contains(gateNames, c.Gate):
		return badField("gate", c.Gate, `must be "", pressure, surprise, refr_nov, refr_prog or refr_block`)
	case !(c.Delta >= 0 && c.Delta <= 1):
		return badField("delta", c.Delta, "must be in [0, 1]")
	case c.Block < 0:
		return badField("block", c.Block, "must be >= 0")
	case c.BlockOff < 0:
		return badField("block_off", c.BlockOff, "must be >= 0")
	case c.Night && c.NightBatches < 1:
		return badField("night_batches", c.NightBatches, "must be >= 1 with night")
	case c.Night && c.NightBatch < 1:
		return badField("night_batch", c.NightBatch, "must be >= 1 with night")
	case c.PRSamples < 0:
		return badField("pr_samples", c.PRSamples, "must be >= 0")
	}
	if c.Gate == "refr_nov" || c.Gate == "refr_prog" || c.Gate == "refr_block" {
		if c.Mask != "refractory" {
			return badField("gate", c.Gate, "rotation gates need mask = refractory")
		}
	}
	return nil
}
