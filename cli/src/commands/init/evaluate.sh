#!/bin/sh
# The evaluator: a score between 0 and 1, per-dimension scores and notes (an LLM judge prints
# the same JSON; prose around it is fine).
echo '{"score": 0.9, "dimensions": {"clarity": 0.9}, "notes": "a clear greeting"}'
