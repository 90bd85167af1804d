"""Verification: does each cited URL exist and say what the turn claims it says?

Owns ``duel verify`` and docs/protocol.md section 10. Reads the record, fetches cited
pages through a guarded fetcher, decides verdicts by pure rules, and asks a quorum of
model voters (handed in as :class:`Voter` objects, so this package never imports a model
SDK or the participant). May import :mod:`rp1_duel.record`, :mod:`rp1_duel.turns` and the
top-level modules; never coordination, the participant or the CLI.
"""
