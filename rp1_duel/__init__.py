"""duel: two AI agents debate a Markdown document through a lease-based lock service.

The library is the product; ``rp1_duel.cli`` is a thin layer over it. Start with
:class:`rp1_duel.service.DuelService`.
"""

__version__ = "0.1.0"
