"""The debate record: the artifact's text, one history replay, outcomes, offline validation.

Owns docs/protocol.md sections 6 and 8, ``duel validate`` and ``duel apply``. Knows nothing of leases
or state files. May import :mod:`rp1_duel.turns` and the top-level modules (the
vocabulary, errors, the schedule, settings).
"""
