package stages

import "repro/numbers"

// cardLink wraps a printed table cell in \reprocard{<card name>}{<cell>},
// which paper/main.tex (CardMacro) makes a hyperlink to the number's card
// in the report site (`repro report`). Only a number links: a blank cell,
// "---" (not applicable), "not run" and "n=0" stay as they are.
func cardLink(x *numbers.AggCell, text string) string {
	if !x.Status.Is(numbers.StatusOK) || text == "" {
		return text
	}
	return `\reprocard{` + numbers.CardName(x.ID) + `}{` + text + `}`
}

// cardFallback opens every rendered table: a document that does not link
// numbers to cards (one that inputs a table without CardMacro) prints them
// plain.
const cardFallback = "\\providecommand{\\reprocard}[2]{#2}% a link to the number's card where the document defines it (main.tex)\n"

// CardMacro is the LaTeX that defines \reprocard for a document that
// inputs the rendered tables: a link to site/cards/<name>.html relative to
// the PDF. \reprosite is the site's base: define it before (a URL ending in
// /) to link elsewhere.
const CardMacro = `\providecommand{\reprosite}{site/}
\providecommand{\reprocard}[2]{\href{\reprosite cards/#1.html}{#2}}
`
