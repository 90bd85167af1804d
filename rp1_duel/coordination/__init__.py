"""Coordination: the lease-based lock service over a shared directory.

Owns docs/protocol.md sections 2 to 5 and 9: the state files (:mod:`.state`), every
"may this happen now?" rule as a pure function (:mod:`.policy`), the directory and its
locks (:mod:`.storage`), who a participant is (:mod:`.identity`), the typed events
(:mod:`.events`; the usage counts they carry, :mod:`.counts`) and results
(:mod:`.results`; the answers of the ops that write, :mod:`.write_results`) and the
service that ties them together (:mod:`.service`), writing the record through
:mod:`.record_writer`. May import :mod:`rp1_duel.record`,
:mod:`rp1_duel.turns` and the top-level vocabulary, errors, clock and settings.
"""
