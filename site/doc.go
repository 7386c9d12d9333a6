// Package site writes the reproduction as a static web site: plain HTML,
// one CSS file and inline SVG, opened from the file system with no server,
// no script and no network.
//
// Nouns:
//
//   - Input: the typed results the site is built from (the reproduction
//     report, judge.Report; the tables' and figures' sidecars,
//     numbers.Sidecar and numbers.FigureSidecar; the seeds' records, the
//     default configurations). The site reads these; it never parses
//     rendered text, and it imports no stage: it reads judgements.
//   - Card: the page of one number or plotted point: ours against the
//     paper's with the verdict and its statistics, the seeds as a strip
//     plot, the cells, keys, configuration (as a difference from the
//     default system), data digests and code revision, the paper's line
//     and the command that recomputes it. Its file is
//     cards/<numbers.CardName(ID)>.html.
//   - Index, table pages (tables/<name>.html) and figure pages
//     (figures/<name>.html), whose every number and point links to a card.
//
// Build writes a new site beside the old one and swaps them, so a reader
// never sees half a site; CheckLinks verifies every local link resolves.
package site
