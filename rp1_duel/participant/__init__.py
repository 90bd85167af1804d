"""The participant: one seat of a duel, start to finish, behind ``duel join``.

The loop (:mod:`.loop`) drives the lock service in process; the prompt (:mod:`.prompt`)
lays out what a model is asked so prompt caches reuse it; providers
(:mod:`.providers`) compose turns with Anthropic, OpenAI-compatible servers, a person
or a script; :mod:`.console` is what a person sees; :mod:`.demo` runs two scripted
participants. May import :mod:`rp1_duel.coordination`, :mod:`rp1_duel.record`,
:mod:`rp1_duel.turns` and the top-level modules; never the CLI.
"""
