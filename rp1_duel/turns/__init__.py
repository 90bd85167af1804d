"""Turns: the Markdown scanner, the source document, the turn grammar and the turn rules.

Pure functions of text (the source is read from a path by :func:`source.read_source`,
the one decoding policy). Owns docs/protocol.md section 7. May import only
:mod:`rp1_duel.vocabulary` and :mod:`rp1_duel.errors`; everything else imports it.
"""
