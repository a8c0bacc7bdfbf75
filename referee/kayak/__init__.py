"""Kayak Chaos referee: the river and the kayaks, the rules, and which actions explain a change.

tiles.py (layouts from the catalog), position.py (positions and their text form),
actions.py (actions as values), rules.py (apply / is_legal), explain.py (explain(before,
after)), river.py (Observation -> position), game.py (the Game object, ``GAME``),
commands.py (`refcam kayak state|check|replay`), playout.py (seeded random games).
"""
