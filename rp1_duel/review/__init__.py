"""Review: what a person reads and watches — ``duel report``, ``duel watch``, ``duel list``, ``duel stats``.

Computes reports from the record alone (plus its verification sidecar and recorded usage),
and follows live duels through the lock service's read-only calls. May import every
layer below it: :mod:`rp1_duel.participant` (for model-written assessments),
:mod:`rp1_duel.coordination`, :mod:`rp1_duel.verify`, :mod:`rp1_duel.record`,
:mod:`rp1_duel.turns` and the top-level modules; never the CLI.
"""
