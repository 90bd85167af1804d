"""The report page's style sheet, inline in its ``<style>`` (the page loads nothing): readable without script,
printable, and on a phone (tables scroll sideways in their own box, and the chart keeps a readable size)."""

__all__ = ["BADGE_COLOURS", "CAUTION_COLOUR", "CSS", "OUTCOME_COLOURS", "WARNING_COLOUR"]

OUTCOME_COLOURS = {
    "ACCEPTED_CONSENSUS": "#1a7f37",
    "DISSENT": "#cf222e",
    "MAX_TURNS": "#9a6700",
    "TIMEOUT": "#6e7781",
    "INVALIDATED": "#6e7781",
}
CAUTION_COLOUR = "#bc4c00"  # a consensus badge under a caution (a fabricated citation, a record that fails validate)
WARNING_COLOUR = "#cf222e"
# A badge's colour by its tone (blocks.Badge): an outcome's, or a caution's, or a warning's; grey for an open duel.
BADGE_COLOURS = {**OUTCOME_COLOURS, "caution": CAUTION_COLOUR, "warning": WARNING_COLOUR}

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: #1f2328; max-width: 1100px; margin: 24px auto; padding: 0 20px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; }
.outcome { display: inline-block; color: #fff; font-weight: 600; padding: 2px 10px; border-radius: 12px; }
.facts { color: #57606a; margin: 6px 0 10px; }
.warning { border: 2px solid #cf222e; background: #fff1f0; padding: 8px 12px; border-radius: 6px; margin: 10px 0; }
.summary { border-left: 4px solid #d0d7de; padding: 2px 12px; color: #3b434b; }
.position { white-space: pre-wrap; overflow-wrap: anywhere; border-left: 4px solid #d0d7de; background: #f6f8fa;
            padding: 6px 12px; margin: 4px 0 12px; }
.agreed .position { border-left-color: #1a7f37; }
.seats { display: grid; gap: 12px; }
.seat { border: 1px solid #d0d7de; border-radius: 6px; padding: 4px 12px; }
.seat h3 { margin: 6px 0; } .seat .position { margin: 2px 0 8px; }
/* A seat's opening and final positions side by side, one above the other on a narrow screen. */
.pair { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(260px, 100%), 1fr)); gap: 0 16px; }
pre.diff { overflow-x: auto; background: #f6f8fa; border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 0; }
pre.diff span { display: block; padding: 0 12px; white-space: pre; }
.diff .add { background: #dafbe1; color: #116329; } .diff .del { background: #ffebe9; color: #82071e; }
.diff .hunk { color: #8250df; }
/* On a narrow screen a table scrolls in its own box, at a width its columns stay readable in. */
.scroll { overflow-x: auto; margin: 6px 0; } .scroll > table { margin: 0; min-width: 600px; }
td.text { min-width: 16em; } td code { overflow-wrap: normal; white-space: nowrap; }
.chart { overflow-x: auto; } .chart svg { min-width: 720px; }
.fit { overflow-x: auto; }  /* a small table beside text: it scrolls in its own column, at its own width */
li a, td.text a, .position a { overflow-wrap: anywhere; }  /* a long URL breaks, not the page */
table { border-collapse: collapse; width: 100%; margin: 6px 0; font-size: 14px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.n { text-align: right; white-space: nowrap; }
.alerts { border-left: 4px solid #bc4c00; background: #fff8f0; padding: 6px 12px 6px 30px; margin: 10px 0; }
.tag-blocking, .other-model { color: #cf222e; font-weight: 600; } .open { font-weight: 600; }
.changed { font-weight: 600; } .muted { color: #57606a; }
.question { overflow-wrap: anywhere; } .unanswered { color: #9a6700; font-style: italic; }
.verdict { padding: 0 6px; border-radius: 8px; background: #eaeef2; white-space: nowrap; }
.verdict-verified { background: #dafbe1; } .verdict-fabricated, .verdict-unreliable { background: #ffebe9; }
svg { width: 100%; height: auto; } svg text { font: 14px system-ui, sans-serif; fill: #57606a; }
.model-written { border: 2px dashed #9a6700; padding: 4px 12px; margin: 12px 0; }
footer { margin-top: 28px; color: #57606a; font-size: 13px; }
code, pre { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
code { overflow-wrap: anywhere; }
@media (max-width: 600px) {
  body { margin: 12px auto; padding: 0 12px; } h1 { font-size: 20px; } ul { padding-left: 22px; }
  pre.diff span { white-space: pre-wrap; overflow-wrap: anywhere; }  /* a diff line wraps: the change is all seen */
}
@media print {
  body { margin: 0; max-width: none; font-size: 11pt; }
  .scroll, .chart, pre.diff { overflow: visible; } .scroll > table, .chart svg, td.text { min-width: 0; }
  a { color: inherit; text-decoration: none; }
  h2 { break-after: avoid; } tr, li, svg { break-inside: avoid; }
  .outcome, .verdict, .warning { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
@page { margin: 15mm; }
"""
