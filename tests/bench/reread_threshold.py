"""How vision/reread.py's LLR_MIN was chosen: `python -m tests.bench.reread_threshold N CONDITION...`.

On TUNING conditions only (synth.webcam.TUNING_CONDITIONS; tables of the tuning seed 7002), half
the first pass's stickers (odd ids) are dropped so the re-read has to read them, and for each
dropped sticker's piece a piece of the game that is NOT on the table is expected at its place (a
look-alike: another id there). It prints the lowest LLRs of true re-reads and the highest of
look-alikes; LLR_MIN sits well above every look-alike's (docs/vision-webcam.md).
"""
import sys, numpy as np
from tests.bench import webcam as wb, robust
from referee.catalog import default_catalog
from vision import pipeline, detect, reread
cat = default_catalog()
rng = np.random.default_rng(5)
true_llr, ghost_llr = [], []
orig = reread._read_at
def spy(gray, quad, piece, ids, game_ids, catalog, evidence, key):
    r = orig(gray, quad, piece, ids, game_ids, catalog, evidence, key)
    if r is not None:
        (ghost_llr if piece.name in GH else true_llr).append((round(r.llr,1), piece.name, round(detect.side_px(quad),1)))
    return r
reread._read_at = spy
for cond in sys.argv[2:]:
    for label, game, seed, image, truth in wb.still_tables(int(sys.argv[1]), 7002):
        exp, GH = wb.expected_from_truth(truth, game, cat, rng)
        for size_label, size in wb.SIZES:
            img = wb.harsh_image(image, cond, size, seed)
            tr = wb.scaled_truth(truth, size)
            res = detect.detect_all(img, cat, game=game)
            # drop half the first-pass detections so the re-read has to read them
            keep = tuple(d for d in res.detections if d.marker_id % 2 == 0 or cat.sticker(d.marker_id).piece.endswith('board'))
            from dataclasses import replace
            from referee.game import ExpectedPiece
            res = replace(res, detections=keep)
            tp = {p["name"]: p for p in tr["pieces"]}
            absent = [p.name for p in cat.pieces(game) if p.name not in tp and p.stickers and len(p.stickers) <= 2]
            look = []
            dropped = [n for n in tp if any(st["id"] % 2 == 1 and st["piece"] == n for st in tr["stickers"])]
            for k, n in enumerate(dropped[:len(absent)]):
                look.append(ExpectedPiece(absent[k], tp[n]["x_mm"], tp[n]["y_mm"], tp[n]["theta_deg"], 3.0))
                GH = set(GH) | {absent[k]}
            exp = tuple(exp) + tuple(look)
            try:
                o2 = pipeline.observe(img, robust.camera_of(tr), game, catalog=cat, detections=res, expected=exp)
            except Exception as exc:
                continue
print("true", sorted(true_llr)[:15], len(true_llr))
print("ghost", sorted(ghost_llr)[-10:], len(ghost_llr))
