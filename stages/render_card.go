package stages

import "strings"

// CardName is the file name (without .html) of a number's card in the
// report site: its ID with each / as a dot (IDs have no dots, so no two
// numbers share a name).
func CardName(id string) string { return strings.ReplaceAll(id, "/", ".") }

// cardLink wraps a printed table cell in \reprocard{<card name>}{<cell>},
// which paper/main.tex (CardMacro) makes a hyperlink to the number's card
// in the report site (`repro report`). A blank cell (not run, or left empty
// by the layout) and "---" (not applicable) link nowhere.
func cardLink(id, text string) string {
	if text == "" || text == "---" {
		return text
	}
	return `\reprocard{` + CardName(id) + `}{` + text + `}`
}

// CardMacro is the LaTeX that defines \reprocard for a document that
// inputs the rendered tables: a link to site/cards/<name>.html relative to
// the PDF. \reprosite is the site's base: define it before (a URL ending in
// /) to link elsewhere.
const CardMacro = `\providecommand{\reprosite}{site/}
\providecommand{\reprocard}[2]{\href{\reprosite cards/#1.html}{#2}}
`
