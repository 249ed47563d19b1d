"""Words for people: the terminal summary of a run, a comparison as text, Markdown, CSV and
JSON, the HTML reports with their SVG figures, and the regression gate's words
(gate_words.py).  Everything here reads what analysis/ computed."""
