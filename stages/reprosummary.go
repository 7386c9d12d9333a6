package stages

import "fmt"

// Summary is the report's verdict in one sentence, from its counts: how
// many of the numbers compared with the paper lie within the seed noise,
// how many published numbers were not run, and how many of the paper's
// claimed orderings hold. The CLI (repro show reproduction --summary, the
// end of make paper) and the report's first line print it.
func (r *ReproReport) Summary() string {
	s := fmt.Sprintf("%d of %d numbers compared with the paper lie within the seed noise", r.Within, r.Compared)
	if r.NotRun > 0 {
		s += fmt.Sprintf(", %d not run", r.NotRun)
	}
	if len(r.Claims) > 0 {
		s += fmt.Sprintf("; %d of %d claimed orderings hold", r.ClaimsHeld, len(r.Claims))
	}
	return s
}
