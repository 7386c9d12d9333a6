package site

// styleCSS is the site's one style sheet.
const styleCSS = `body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1b1b1b;background:#fff}
nav{background:#1f3a5f;padding:.4em 1em}nav a{color:#fff;text-decoration:none;font-weight:600}
main{max-width:1100px;margin:0 auto;padding:1em 1.2em 3em}
h1{font-size:1.5em;margin:.3em 0}h2{font-size:1.15em;margin:1.4em 0 .4em;border-bottom:1px solid #ddd}
a{color:#0b57d0}code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto}
.meta{color:#555;font-size:.9em}.stamp{background:#fff3cd;padding:.4em}.summary{font-weight:600}
table{border-collapse:collapse;margin:.4em 0}th,td{padding:.25em .55em;text-align:left;vertical-align:top}
table.paper{border-top:2px solid #000;border-bottom:2px solid #000}table.paper thead th{border-bottom:1px solid #000}
table.paper td{text-align:right;white-space:nowrap}table.paper th.label{font-weight:normal;max-width:34em}
table.list td,table.list th,table.tally td,table.tally th{border-bottom:1px solid #eee}
table.kv th{width:7em;color:#444}.big{font-size:1.2em;font-weight:600}.stats{font-family:ui-monospace,monospace;font-size:.85em}
td.agree a,td.agree,.agree{color:#146c2e}td.differ a,td.differ,.differ{color:#b3261e;font-weight:600}
td.inconclusive a,td.inconclusive,.inconclusive{color:#8a5a00}td.notrun a,td.notrun,.notrun{color:#777}td.unjudged a{color:#1b1b1b}
.badge{display:inline-block;padding:0 .5em;border-radius:.6em;font-size:.85em;border:1px solid currentColor}
.caption{max-width:60em}
.legend span{margin-right:.8em}.key{display:inline-block;width:.8em;height:.8em;margin-right:.25em;border-radius:50%}
ul.cols{columns:3;padding-left:1.2em}
svg{display:block;margin:.4em 0}svg .axis{font-size:10px;fill:#555}svg .ptitle{font-size:13px;font-weight:bold;fill:#222}svg .alabel{font-size:12px;fill:#222}svg .grid{stroke:#eee}svg.swatch{display:inline-block;vertical-align:middle;margin:0 .2em 0 0}figure.panel{margin:.6em 0 1.2em}
svg .frame{fill:none;stroke:#bbb}svg .bar{stroke-width:1.5}svg .ref{stroke-dasharray:5 4;stroke-width:1.5}svg .hit{fill:transparent}
svg .pt{stroke:#fff;stroke-width:1}svg a:hover .pt{stroke:#000;stroke-width:2}
svg .band{fill:#d6e4f5}svg .mean{stroke:#1f3a5f;stroke-width:2}svg .seed{fill:#1f3a5f;fill-opacity:.75}svg .pub{fill:#b3261e}
pre.diff .del{color:#b3261e}pre.diff .add{color:#146c2e}
`
