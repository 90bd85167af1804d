"""``python -m rp1_duel …``: the ``duel`` command."""

from rp1_duel.cli import main

main()
