package judge

import (
	"fmt"
	"slices"
	"strings"

	"repro/published"
	"repro/verdict"
)

// Row is one published number judged against ours.
type Row struct {
	ID    string `json:"id"`
	Group string `json:"group"` // the table or figure it belongs to
	Cite  string `json:"cite,omitempty"`
	Line  int    `json:"line,omitempty"` // of paper.tex
	// Published and Ours are the numbers as printed ("" when we have none).
	Published string `json:"published"`
	Ours      string `json:"ours"`
	// Verdict is the three-way verdict, NotRun when we have no number;
	// Judgement what it rests on (nil when not run).
	Verdict   verdict.Outcome    `json:"verdict"`
	Judgement *verdict.Judgement `json:"judgement,omitempty"`
	// Note says how it was judged when not the plain way (a single run, a
	// missing seed, why not run); Cause what is known of a difference.
	Note  string `json:"note,omitempty"`
	Cause string `json:"cause,omitempty"`
	// Restates names the row whose comparison this one repeats (the same
	// quantity printed alike elsewhere): one judgement, counted once.
	// RestatedAt lists, on that row, the lines that restate it.
	Restates   string `json:"restates,omitempty"`
	RestatedAt []int  `json:"restated_at,omitempty"`
}

// ConditionResult is one condition of a claim, judged.
type ConditionResult struct {
	Text      string             `json:"text"`
	Verdict   verdict.Outcome    `json:"verdict"`
	Judgement *verdict.Judgement `json:"judgement,omitempty"`
	// Detail gives the operands' values ("why not run" when not run).
	Detail string `json:"detail"`
}

// ClaimResult is one claim of the paper judged on our numbers: agrees when
// every condition agrees, differs when one differs, not run when an operand
// has no number here, inconclusive otherwise.
type ClaimResult struct {
	ID         string            `json:"id"`
	Text       string            `json:"text"`
	Cite       string            `json:"cite"`
	Line       int               `json:"line"`
	Verdict    verdict.Outcome   `json:"verdict"`
	Conditions []ConditionResult `json:"conditions"`
	// Cause is what is known of a difference (published.toml).
	Cause string `json:"cause,omitempty"`
}

// Tally counts verdicts.
type Tally struct {
	Judged       int `json:"judged"`
	Agree        int `json:"agree"`
	Differ       int `json:"differ"`
	Inconclusive int `json:"inconclusive"`
	NotRun       int `json:"not_run"`
}

// Add counts one outcome.
func (t *Tally) Add(o verdict.Outcome) {
	switch o {
	case verdict.Agrees:
		t.Agree++
	case verdict.Differs:
		t.Differ++
	case verdict.Inconclusive:
		t.Inconclusive++
	default:
		t.NotRun++
		return
	}
	t.Judged++
}

// Total is the judged and the not-run.
func (t Tally) Total() int { return t.Judged + t.NotRun }

// String is the tally as the summary line prints it.
func (t Tally) String() string {
	return fmt.Sprintf("%d judged, %d agree, %d differ, %d inconclusive, %d not run", t.Judged, t.Agree, t.Differ, t.Inconclusive, t.NotRun)
}

// ComparisonTally counts the distinct comparisons (a number restated
// elsewhere counted once) by outcome, and the inconclusive ones by who
// could settle them.
type ComparisonTally struct {
	Distinct     int `json:"distinct"`
	Agree        int `json:"agree"`
	Differ       int `json:"differ"`
	Inconclusive int `json:"inconclusive"`
	// Of the inconclusive: more of our seeds would settle them (Settle12
	// of them at 12 seeds or fewer); no count of our seeds would (the
	// published value's own uncertainty); single runs without a noise
	// model; counts of failures over too few runs.
	BySeeds      int `json:"by_our_seeds"`
	Settle12     int `json:"by_12_seeds"`
	Unsettleable int `json:"unsettleable"`
	NoNoise      int `json:"no_noise_model"`
	FewRuns      int `json:"few_runs"`
}

// AddJudgement counts one distinct comparison.
func (t *ComparisonTally) AddJudgement(j *verdict.Judgement) {
	t.Distinct++
	switch j.Outcome {
	case verdict.Agrees:
		t.Agree++
	case verdict.Differs:
		t.Differ++
	case verdict.Inconclusive:
		t.Inconclusive++
		switch j.Reason {
		case verdict.MoreSeeds:
			t.BySeeds++
			if j.Settle > 0 && j.Settle <= 12 {
				t.Settle12++
			}
		case verdict.PaperUncertain:
			t.Unsettleable++
		case verdict.NoNoiseModel:
			t.NoNoise++
		case verdict.FewRuns:
			t.FewRuns++
		}
	}
}

// String is the tally as the summary line prints it (the reasons an
// inconclusive is one, those that have any).
func (t ComparisonTally) String() string {
	var why []string
	if t.BySeeds > 0 {
		why = append(why, fmt.Sprintf("%d our seeds would settle, %d of them at 12 or fewer", t.BySeeds, t.Settle12))
	}
	if t.Unsettleable > 0 {
		why = append(why, fmt.Sprintf("%d they cannot: the paper's own uncertainty", t.Unsettleable))
	}
	if t.NoNoise > 0 {
		why = append(why, fmt.Sprintf("%d single runs with no noise model", t.NoNoise))
	}
	if t.FewRuns > 0 {
		why = append(why, fmt.Sprintf("%d failure counts over too few runs", t.FewRuns))
	}
	s := fmt.Sprintf("%d distinct, %d agree, %d differ, %d inconclusive", t.Distinct, t.Agree, t.Differ, t.Inconclusive)
	if len(why) > 0 {
		s += " (" + strings.Join(why, "; ") + ")"
	}
	return s
}

// CategoryCount is how many of the paper's numbers are not run for one
// reason.
type CategoryCount struct {
	Category published.NotRunCategory `json:"category"`
	Count    int                      `json:"count"`
}

// CategoryCounts is the not-run numbers by category.
type CategoryCounts []CategoryCount

func (cs *CategoryCounts) add(c published.NotRunCategory, n int) {
	for i := range *cs {
		if (*cs)[i].Category == c {
			(*cs)[i].Count += n
			return
		}
	}
	*cs = append(*cs, CategoryCount{c, n})
}

// String lists the categories: "38 configuration, 16 CIFAR-100 release
// absent, ...".
func (cs CategoryCounts) String() string {
	var parts []string
	for _, c := range cs {
		name := string(c.Category)
		if name == "" {
			name = "no category"
		}
		parts = append(parts, fmt.Sprintf("%d %s", c.Count, name))
	}
	return strings.Join(parts, ", ")
}

// GroupTally is the tally of one table or figure.
type GroupTally struct {
	Group string `json:"group"`
	Tally
}

// Report is the "report" output of the reproduction cell.
type Report struct {
	Profile string                  `json:"profile"`
	Stamp   string                  `json:"stamp,omitempty"`
	Rows    []Row                   `json:"rows"`
	Claims  []ClaimResult           `json:"claims,omitempty"`
	NotRun  []published.NotRunGroup `json:"not_run_groups,omitempty"`
	// Numbers and ClaimTally count the verdicts; Groups per table and
	// figure (and one "paper only" group for NotRun), in report order.
	Numbers    Tally `json:"numbers"`
	ClaimTally Tally `json:"claim_tally"`
	// Comparisons counts the distinct comparisons behind Numbers.
	Comparisons ComparisonTally `json:"comparisons"`
	// NotRunByCategory counts the paper's numbers no cell computes, by why
	// (the [[not_run]] groups' categories), in the order first met.
	NotRunByCategory CategoryCounts `json:"not_run_by_category,omitempty"`
	Groups           []GroupTally   `json:"groups"`
	// PaperNumbers is how many numbers the paper states (0: not counted).
	PaperNumbers int `json:"paper_numbers,omitempty"`
	// Disputed is the table of disputed rows (judgeDisputed).
	Disputed []DisputedResult `json:"disputed,omitempty"`
}

// Summary is the report's verdict in one line: the counts of numbers and
// of claims. `repro show reproduction --summary` prints it, and so does
// `make paper`, last.
func (rep *Report) Summary() string {
	of := ""
	if n := rep.Numbers.Total(); rep.PaperNumbers > 0 && n >= rep.PaperNumbers {
		// The paper's count is of numbers printed with a decimal point;
		// integers, counts in words and plotted points come on top.
		of = fmt.Sprintf(": the paper's %d with a decimal point and %d others", rep.PaperNumbers, n-rep.PaperNumbers)
	}
	nr := ""
	if len(rep.NotRunByCategory) > 0 {
		nr = fmt.Sprintf("; not run, by why: %s", rep.NotRunByCategory)
	}
	return fmt.Sprintf("reproduction (profile %s): numbers: %s (%d in all%s%s); comparisons: %s; claims: %s (%d in all)",
		rep.Profile, rep.Numbers, rep.Numbers.Total(), of, nr, rep.Comparisons, rep.ClaimTally, rep.ClaimTally.Total())
}

// SortedRows is the report's rows with the differs first (then
// inconclusive, agrees, not run), each kind in the report's order.
func (rep *Report) SortedRows() []Row {
	rows := slices.Clone(rep.Rows)
	rank := map[verdict.Outcome]int{verdict.Differs: 0, verdict.Inconclusive: 1, verdict.Agrees: 2, verdict.NotRun: 3}
	slices.SortStableFunc(rows, func(a, b Row) int { return rank[a.Verdict] - rank[b.Verdict] })
	return rows
}
