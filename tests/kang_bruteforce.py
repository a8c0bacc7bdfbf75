"""A deliberately plain second reading of the Kang rules (SPEC section 3), for cross-checking perft.

It shares no code with referee/kang: positions are plain tuples, the board a dict, lines a set
of frozensets of two squares, and every step is tried in every direction. Slow and obvious on
purpose. Used by tests/make_kang_perft.py to compute the committed perft counts and by
tests/test_kang_perft.py to re-check the shallow ones.
"""

from __future__ import annotations

KINDS = {"s": 1, "m": 2, "l": 3}


def parse(text: str):
    """Our own reading of the position string: (board dict, zone A dict, zone B dict, turn, alfalfa, no-score)."""
    board_txt, za, zb, turn, alf, flags = text.split()
    board = {}
    for k, row_txt in enumerate(board_txt.split("/")):
        y = 6 - k
        x = 0
        for ch in row_txt:
            if ch.isdigit():
                x += int(ch)
            else:
                board[(x, y)] = ch
                x += 1
    zones = ({c: za.count(c) for c in "sml"}, {c: zb.count(c) for c in "sml"})
    a, b = alf.split("-")
    return freeze(board, zones, turn, (int(a), int(b)), ("A" in flags, "B" in flags))


def freeze(board, zones, turn, alfalfa, no_score):
    return (tuple(sorted(board.items())), tuple(sorted(zones[0].items())), tuple(sorted(zones[1].items())),
            turn, alfalfa, no_score)


def children(state) -> set:
    board_items, za, zb, turn, alfalfa, no_score = state
    if 3 in alfalfa:
        return set()
    board = dict(board_items)
    zones = (dict(za), dict(zb))
    me = 0 if turn == "A" else 1
    home_y, goal_y = (0, 7) if me == 0 else (7, 0)
    # candidate groups, nearest first: the start zone, then board rows counted from my edge
    groups = [[((x, home_y), kind) for kind in "sml" if zones[me][kind] > 0 for x in range(6)]]
    row_order = range(1, 7) if me == 0 else range(6, 0, -1)
    for y in row_order:
        groups.append([((x, y), board[(x, y)]) for x in range(6) if (x, y) in board])
    for group in groups:
        found = set()
        for start, kind in group:
            for end, kicked_to in paths(board, start, kind, home_y, goal_y, no_score[me], me):
                found.add(result(board, zones, start, kind, end, kicked_to, me, alfalfa, no_score))
        if found:
            return found
    passed = list(no_score)
    passed[me] = False
    return {freeze(board, zones, "B" if me == 0 else "A", alfalfa, tuple(passed))}


def paths(board, start, kind, home_y, goal_y, no_score, me):
    """(end square, kick target or None) of every way the kangaroo can go."""
    out = []

    def step(cur, left, crossed):
        for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            nxt = (cur[0] + dx, cur[1] + dy)
            line = frozenset((cur, nxt))
            if line in crossed or not 0 <= nxt[0] <= 5:
                continue
            if nxt[1] == goal_y:
                if left == 1 and not no_score:
                    out.append((nxt, None))
                continue
            if not 1 <= nxt[1] <= 6:
                continue
            taken = nxt in board and nxt != start
            if left > 1:
                if not taken:
                    step(nxt, left - 1, crossed | {line})
                continue
            if not taken:
                out.append((nxt, None))
                continue
            step(nxt, KINDS[board[nxt]], crossed | {line})
            for target in kick_spots(board, start, nxt, kind, me):
                out.append((nxt, target))

    step(start, KINDS[kind], frozenset())
    return out


def kick_spots(board, start, at, kind, me):
    after = dict(board)
    after.pop(start, None)
    after[at] = kind  # the kicked one is lifted off
    # distance of a row from the opponent's edge: opponent of A sits at y=7, of B at y=0
    dist = (lambda y: 7 - y) if me == 0 else (lambda y: y)
    nearest = min(dist(y) for (_, y) in after)
    return [(x, y) for x in range(6) for y in range(1, 7) if (x, y) not in after and dist(y) <= nearest]


def result(board, zones, start, kind, end, kicked_to, me, alfalfa, no_score):
    board = dict(board)
    zones = (dict(zones[0]), dict(zones[1]))
    if start[1] in (0, 7):
        zones[me][kind] -= 1
    else:
        del board[start]
    scored = end[1] in (0, 7)
    alfalfa = list(alfalfa)
    if scored:
        zones[1 - me][kind] += 1
        alfalfa[me] += 1
    else:
        if kicked_to is not None:
            board[kicked_to] = board[end]
        board[end] = kind
    flags = list(no_score)
    flags[me] = scored
    return freeze(board, zones, "B" if me == 0 else "A", tuple(alfalfa), tuple(flags))


def perft(state, depth: int, memo=None) -> int:
    if depth == 0:
        return 1
    memo = {} if memo is None else memo
    if (state, depth) not in memo:
        kids = children(state)
        memo[(state, depth)] = len(kids) if depth == 1 else sum(perft(k, depth - 1, memo) for k in kids)
    return memo[(state, depth)]
