"""Detection that follows the stickers from frame to frame: whole frames only when needed.

A table at rest changes only where hands and pieces move. So after a whole-frame pass
(detect.detect_all) the next frames are searched only around the stickers found, and the
whole frame is searched again when

* ``full_every`` frames have gone by since the last whole-frame pass (a safety net);
* anything changed in more than ``changed_max_share`` of the frame: shrunk ``motion_scale``
  times, it differs from the frame as last searched by more than ``motion_grey`` grey levels
  (a hand coming in, a piece put down; a sticker cannot appear without pixels changing).
  A smaller change is searched where it happened only: the detector runs on crops around the
  changed cells (grown so a sticker there lies wholly inside), and the stickers elsewhere are
  followed as below;
* a sticker is not found again where it was (missing, moved more than ``moved_px``, or its
  bits read as another marker): a new event.

Between whole frames, two ways (RoiSettings.mode):

* "regions": the detector itself on crops around the stickers (merged where they overlap),
  with its marker-size limits (relative to the image size) rescaled to the whole frame's:
  the same stickers and corners (within 0.001 px) as whole frames measured afresh, so the
  same rulings to the last digit (its whole-frame passes hand on unchanged stickers as every
  mode does; its crops measure afresh). The crops cost the detector's own time per pixel.
* "follow": each sticker's corners refined again on its own edges from where they were
  (detect's edge-line fit, the one a whole-frame pass ends with) and its bits read again
  there; no detector run at all. Corners are within 0.01 px of a whole-frame pass on the
  same frame (noise moves a corner ~0.05 px), verdicts the same, sigmas within ~2 %
  (the edge scatter depends a little on where the fit starts). Cheapest: the live page's way.
  A followed sticker whose corners all stay within ``hold_px`` of where they were last given
  out is given out unchanged (the same Detection): at rest, frame after frame hands the same
  stickers on, and what comes after detection (the table's fit: vision/table_pose.py keeps
  its last answers by their inputs) is not done again. A sticker that moves further, even
  slowly, is given out where it is now and held there. The stickers the detector reads in
  the crops around a change, or in a whole frame, are held the same way: a hand passing
  over the table without moving a sticker leaves the reading as it was.

A third mode, "whole", runs the detector on the whole frame every frame and holds its stickers
as "follow" does (``hold_px``): whole-frame corners of a still sticker move ~0.03 px between
frames of the speed bench's sessions (0.05 at most), so a table at rest hands on the same
result and nothing after detection is done again; whatever moved is read from this frame.
Its second look at small unread candidates searches as "follow" does (where the picture changed,
around a sticker the first pass misses, everywhere every ``full_every`` frames), and a sticker
no pass reads whose pixels are unchanged is given out again, as "follow" follows it.

In every mode a sticker whose pixels are as they were when it was measured (vision/stillness.py:
it cannot have moved 0.1 px) is handed on without measuring it again, and the busy-picture guard
(image_guard.check_square_shapes) looks only at what changed since a check covering it passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

from . import detect, edges
from .image_guard import MAX_SQUARE_SHAPES, remap
from .stillness import StillStickers


@dataclass(frozen=True)
class RoiSettings:
    mode: str = "follow"  # between whole frames: "follow" the stickers, or detect in "regions" around them;
    # "whole": every frame whole, its stickers held (hold_px)
    full_every: int = 30  # frames between full passes at the latest (1 s at 30 fps)
    margin_sides: float = 1.0  # ROI margin around a sticker, in its own side lengths (0.5 missed 4K stickers
    # whose quiet zone borders a dark piece: tests/bench/speed.py tornado and kayak 4K)
    margin_min_px: int = 32  # ... and at least this (the threshold windows are up to 23 px)
    motion_scale: int = 8  # the motion check compares frames shrunk this many times
    motion_grey: float = 12.0  # grey levels of change (in a shrunk cell) that count as motion
    moved_px: float = 2.0  # an ROI detection this far from its last place is a new event
    # when something moved: detect afresh only around what changed (this share of the frame at
    # most) and follow the stickers elsewhere, instead of a whole-frame pass
    changed_only: bool = True
    changed_max_share: float = 0.8
    # where something changed is searched again for this many quiet frames after: a piece put down
    # shows when the hand leaves, and one look at a small sticker through a noisy webcam misses it
    # about half the time (21 px, Kayak Chaos through synth.webcam's chain); nothing changes there
    # afterwards, so without a second look it would wait for the next whole-frame pass
    settle_frames: int = 4
    # modes "follow" and "whole": a sticker whose corners moved no more than this (px) since they were
    # last given out keeps them. Noise moves a followed corner ~0.05 px (1080p sessions, 1.2 grey levels); a
    # held corner is an earlier measurement of a still sticker, as good as this frame's, and a piece
    # that truly moves goes far beyond it. 0: never held.
    hold_px: float = 0.25
    # modes "follow" and "whole": a sticker whose pixels are as they were when it was last measured
    # (vision/stillness.py: they cannot have moved 0.1 px) is handed on without measuring it again
    reuse_still: bool = True


class RoiDetector:
    """detect.detect_all with memory: call detect(image) on consecutive frames of one camera."""

    def __init__(self, catalog=None, second_pass: bool = True, settings: RoiSettings | None = None):
        self.catalog = catalog
        self.second_pass = second_pass
        self.settings = settings or RoiSettings()
        self.reset()

    def reset(self) -> None:
        self._last: detect.DetectionResult | None = None
        self._reference: np.ndarray | None = None  # the shrunk frame as of the last search of each part
        self._since_full = 0
        self.full_passes = 0
        self.roi_passes = 0
        self.changed_passes = 0  # of the roi passes: searches of what changed
        self._settling: np.ndarray | None = None  # the cells that last changed, searched again while quiet
        self._settle_left = 0
        self._kept = None  # (result, key, what was made of it): remember / recall
        self._guarded: np.ndarray | None = None  # the shrunk frame that last passed the busy-picture guard
        self._outlines_bound: int | None = None  # at most this many outlines in the frame as guarded
        self._still = StillStickers()  # each sticker's pixels when it was last measured

    def detect(self, image: np.ndarray) -> detect.DetectionResult:
        gray = detect.to_gray(image)
        small = self._shrink(gray)
        if self.settings.mode == "whole":
            self._last = self._still_unread(self._held(self._whole_pass(gray, small), gray), gray)
            self.full_passes += 1
            self._still.remember(gray, self._last.detections)
            return self._last
        result = None
        changed = self._changed_cells(small)
        if changed is not None:
            changed = self._settled(changed)
        if changed is not None and not changed.any():
            result = self._follow_pass(gray) if self.settings.mode == "follow" else self._roi_pass(gray)
        elif changed is not None and self.settings.changed_only:
            result = self._changed_pass(gray, small, changed)
            self.changed_passes += result is not None
        if result is None:
            result = self._whole_pass(gray, small)
            self._reference, self._since_full = small, 0
            self.full_passes += 1
        else:
            self._since_full += 1
            self.roi_passes += 1
        if self.settings.mode == "follow":  # the detector's reads (crops, whole frames) held as followed ones
            result = self._held(result, gray)
            self._still.remember(gray, result.detections)
        self._last = result
        return result

    def _whole_pass(self, gray: np.ndarray, small: np.ndarray) -> detect.DetectionResult:
        """detect.detect_all on the whole frame, after the busy-picture guard where it changed
        (_guard_whole)."""
        self._guard_whole(gray, small)
        where = self._second_look_where(small, gray.shape) if self.settings.mode == "whole" else None
        return detect.detect_all(gray, self.catalog, second_pass=self.second_pass, guard=False,
                                 reuse=self._still.reuse_for(gray) if self.settings.reuse_still else None,
                                 second_pass_in=where)

    def _guard_whole(self, gray: np.ndarray, small: np.ndarray) -> None:
        """The busy-picture guard (image_guard.check_square_shapes, ~3 ms at 1080p) for a whole-frame pass,
        only where the frame changed since a check covering it passed: squares cannot appear without
        pixels changing, and a frame it refused is checked again. The frame's outlines are bounded by
        those of the last whole check plus those of every part checked since (an outline of a part that
        changed is counted again, never left out); past the guard's limit the whole frame is checked."""
        h, w = gray.shape
        boxes = None
        if self._guarded is not None and self._guarded.shape == small.shape and self._outlines_bound is not None:
            changed = changed_cells(small, self._guarded, self.settings.motion_grey)
            if not changed.any():
                return
            boxes = _cell_boxes(changed, w, h)
        if boxes is not None and sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1 in boxes) <= 0.5 * w * h:
            added = sum(detect.check_square_shapes(np.ascontiguousarray(gray[y0:y1, x0:x1])) for x0, y0, x1, y1 in boxes)
            if self._outlines_bound + added <= MAX_SQUARE_SHAPES:
                self._outlines_bound += added
                for box in boxes:
                    self._mark_guarded(small, gray.shape, box)
                return
        self._outlines_bound, self._guarded = detect.check_square_shapes(gray), small.copy()

    def _crop_pass(self, gray: np.ndarray, small: np.ndarray, box, **kwargs) -> detect.DetectionResult:
        """detect.detect_all on the crop box (x0, y0, x1, y1, ...) of the frame, with the crop's detector
        parameters and its stickers reused where unchanged; its busy-picture guard run only where
        the crop changed since a check covering it passed (a crop searched again while the table
        settles has not)."""
        x0, y0, x1, y1 = box[:4]
        crop = np.ascontiguousarray(gray[y0:y1, x0:x1])
        due = self._guard_due(small, gray.shape, box)
        reuse = self._still.reuse_for(gray, (x0, y0)) if self.settings.reuse_still else None
        res = detect.detect_all(crop, self.catalog, params=_crop_parameters(crop.shape, gray.shape), guard=due,
                                reuse=reuse, **kwargs)
        if due and self._guarded is not None and self._guarded.shape == small.shape:
            self._mark_guarded(small, gray.shape, box)
        return res

    def _mark_guarded(self, small: np.ndarray, shape: tuple, box) -> None:
        """The cells box (x0, y0, x1, y1) px touches are now as the guard last passed them."""
        cy0, cy1, cx0, cx1 = _cells_of(box, small.shape, shape)
        self._guarded[cy0:cy1, cx0:cx1] = small[cy0:cy1, cx0:cx1]

    def _guard_due(self, small: np.ndarray, shape: tuple, box) -> bool:
        """Must the busy-picture guard look at this part of the frame (box px)? Only where a shrunk cell of
        it changed since a check covering it passed, or none ever did."""
        guarded = self._guarded
        if guarded is None or guarded.shape != small.shape:
            return True
        cy0, cy1, cx0, cx1 = _cells_of(box, small.shape, shape)
        return bool(changed_cells(small[cy0:cy1, cx0:cx1], guarded[cy0:cy1, cx0:cx1], self.settings.motion_grey).any())

    def _still_unread(self, found: detect.DetectionResult, gray: np.ndarray) -> detect.DetectionResult:
        """Mode "whole": found with each sticker last given out that neither pass read in this frame but
        whose pixels are as they were when it was measured (vision/stillness.py) given out again, as
        mode "follow" follows it: a small sticker read in one frame and not the next is still there
        (its place did not change), and a table whose stickers come and go with the noise is
        observed afresh, and its calm frames fused, for nothing. The last result itself when that
        makes it whole again."""
        last = self._last
        if last is None or not self.settings.reuse_still:
            return found
        have = {d.marker_id for d in found.detections}
        back = [d for d in last.detections if d.marker_id not in have and self._still.unchanged(gray, d.marker_id) is d]
        if not back:
            return found
        detections = tuple(sorted(found.detections + tuple(back), key=lambda d: d.marker_id))
        if len(detections) == len(last.detections) and all(a is b for a, b in zip(detections, last.detections)) \
                and found.unknown_ids == last.unknown_ids:
            return last
        return detect.DetectionResult(detections, found.unknown_ids, found.second_pass_found)

    def _second_look_where(self, small: np.ndarray, shape: tuple):
        """Mode "whole": detect_all's second_pass_in for this frame: the boxes where the second pass looks
        at small unread candidates, as mode "follow" searches: around each sticker last given out that
        the first pass does not read now, where the picture changed since it was last looked at there,
        and for settle_frames quiet frames after; everywhere (None) on the first frame and every
        full_every frames. A still part of the table had its looks; the re-reads at expected places
        and the fusion of still frames go on reading what they miss."""
        h, w = shape[:2]
        changed = self._changed_cells(small)
        if changed is None:
            self._reference, self._since_full, self._settle_left = small, 0, 0
            return lambda read: None
        self._since_full += 1
        if changed.any():
            self._reference = np.where(changed, small, self._reference)
        changed = self._settled(changed)
        changed_boxes = self._changed_boxes(changed, w, h) if changed.any() else []
        sticker_boxes = self._sticker_boxes(w, h)

        def where(read: set) -> list:
            return changed_boxes + [b for b in sticker_boxes if b[4][0] not in read]
        return where

    def _held(self, found: detect.DetectionResult, gray: np.ndarray) -> detect.DetectionResult:
        """A result with each sticker found within hold_px of where it was last given out (the same
        id, by either pass: a small sticker the first pass reads in one frame and the second pass in
        the next is one still sticker), or found near it with its pixels unchanged since (a second
        pass's corners, fitted from a rough outline, scatter more), given out as it was then: the last
        result itself when every sticker held and none came or went."""
        last, hold = self._last, self.settings.hold_px
        if last is None or hold <= 0 or not found.detections:
            return found
        before = {d.marker_id: d for d in last.detections}
        pairs = [(d, before.get(d.marker_id)) for d in found.detections]
        known = [(d, b) for d, b in pairs if b is not None and b.known == d.known]
        moved = np.abs(np.array([d.corners for d, _ in known]) - np.array([b.corners for _, b in known])
                       ).max(axis=(1, 2)) if known else np.zeros(0)
        keep = {id(d): b for (d, b), m in zip(known, moved)
                if m <= hold or (self.settings.reuse_still and self._still.unchanged(gray, d.marker_id, d.corners) is b)}
        out = tuple(keep.get(id(d), d) for d in found.detections)
        if len(out) == len(last.detections) and all(a is b for a, b in zip(out, last.detections)) \
                and found.unknown_ids == last.unknown_ids:
            return last
        return detect.DetectionResult(out, found.unknown_ids, found.second_pass_found)

    def recall(self, found: detect.DetectionResult, key) -> object | None:
        """What remember() kept for this very result (the same object: every sticker held since) and
        the same key (the camera and game it was read with), or None."""
        kept = self._kept
        return kept[2] if kept is not None and kept[0] is found and kept[1] == key else None

    def remember(self, found: detect.DetectionResult, key, what) -> None:
        """Keep what was made of this result (an observation) for recall()."""
        self._kept = (found, key, what)

    def _shrink(self, gray: np.ndarray) -> np.ndarray:
        return motion_cells(gray, self.settings.motion_scale)

    def _changed_cells(self, small: np.ndarray) -> np.ndarray | None:
        """The shrunk cells that changed since they were last searched (bool, none: follow the
        stickers), or None when a whole-frame pass is due anyway."""
        if self._last is None or self._reference is None or not self._last.detections:
            return None
        if self._reference.shape != small.shape or self._since_full + 1 >= self.settings.full_every:
            return None
        return changed_cells(small, self._reference, self.settings.motion_grey)

    def _settled(self, changed: np.ndarray) -> np.ndarray:
        """The cells to search this frame: those that changed, or, on the settle_frames quiet frames
        after a change, the cells that changed then (looked at again)."""
        if changed.any():
            self._settling, self._settle_left = changed, self.settings.settle_frames
        elif self._settle_left > 0 and self._settling.shape == changed.shape:
            changed, self._settle_left = self._settling, self._settle_left - 1
        return changed

    def _changed_pass(self, gray: np.ndarray, small: np.ndarray, changed: np.ndarray
                      ) -> detect.DetectionResult | None:
        """The detector on crops around what changed (a sticker cannot appear, leave or move without
        changing pixels there), and the other stickers followed (mode "follow") or found again in
        their regions ("regions"). None when the change is too large: a whole-frame pass is cheaper."""
        h, w = gray.shape
        boxes = self._changed_boxes(changed, w, h)
        last = self._last.detections
        sticker_boxes = {d.marker_id: b for d, b in zip(last, self._sticker_boxes(w, h))}
        # nothing changed around these: they must be found again, or the crops do not tell the whole story
        unchanged = {i for i, b in sticker_boxes.items() if not any(_overlap(b, o) for o in boxes)}
        if self.settings.mode == "regions":  # every sticker in a crop: the detector's corners everywhere
            boxes += [list(b) for b in sticker_boxes.values()]
        while True:  # a sticker reaching into a crop is searched in it whole, not followed
            boxes = [list(b) for b in merge_boxes(boxes)]
            reaching = [b for b in sticker_boxes.values()
                        if any(_overlap(b, o) for o in boxes) and not any(_inside(b, o) for o in boxes)]
            if not reaching:
                break
            boxes += [list(b) for b in reaching]
        if sum((x1 - x0) * (y1 - y0) for x0, y0, x1, y1, _ in boxes) > self.settings.changed_max_share * w * h:
            return None
        found, unknown = [], set(self._last.unknown_ids)
        for x0, y0, x1, y1, _ in boxes:
            res = self._crop_pass(gray, small, (x0, y0, x1, y1), second_pass=self.second_pass)
            found += [_shifted(d, x0, y0) for d in res.detections]
            unknown |= set(res.unknown_ids)
        elsewhere = [d for d in last if not any(_inside(sticker_boxes[d.marker_id], b) for b in boxes)]
        followed = self._follow_many(gray, elsewhere) if elsewhere else ()
        if followed is None:
            return None
        detections = sorted(list(followed) + found, key=lambda d: d.marker_id)
        ids = {d.marker_id for d in detections}
        if len(ids) != len(detections) or not unchanged <= ids:
            return None  # a sticker found twice, or lost where nothing changed: let a whole frame settle it
        self._mark_searched(small, boxes, w, h)
        return detect.DetectionResult(tuple(detections), tuple(sorted(unknown)),
                                      sum(d.source != "full" for d in detections))

    def _changed_boxes(self, changed: np.ndarray, w: int, h: int) -> list[list]:
        """Pixel boxes [x0, y0, x1, y1, []] around the changed cells, grown so that a sticker showing
        there (up to the largest known size) lies wholly inside with the detector's margin."""
        fx, fy = w / changed.shape[1], h / changed.shape[0]
        reach = max(d.side_px for d in self._last.detections) * 1.5 + self.settings.margin_min_px
        k = 2 * int(np.ceil(reach / min(fx, fy))) + 1
        grown = cv2.dilate(changed.astype(np.uint8), np.ones((k, k), np.uint8))
        _, _, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
        return [[int(x * fx), int(y * fy), min(w, int(np.ceil((x + bw) * fx))), min(h, int(np.ceil((y + bh) * fy))), []]
                for x, y, bw, bh, _ in stats[1:]]

    def _mark_searched(self, small: np.ndarray, boxes, w: int, h: int) -> None:
        """The cells wholly inside the searched boxes are now as searched (changes there are news)."""
        fx, fy = w / small.shape[1], h / small.shape[0]
        reference = self._reference.copy()
        for x0, y0, x1, y1, _ in boxes:
            cx0, cy0 = int(np.ceil(x0 / fx)), int(np.ceil(y0 / fy))
            cx1, cy1 = int(np.floor(x1 / fx)), int(np.floor(y1 / fy))
            reference[cy0:cy1, cx0:cx1] = small[cy0:cy1, cx0:cx1]
        self._reference = reference

    def _roi_pass(self, gray: np.ndarray) -> detect.DetectionResult | None:
        """The stickers of the last frame, found again in their ROIs; None when the ROIs do not
        tell the whole story (a sticker missing, moved or unexpected): then a full pass is due."""
        last = {d.marker_id: d for d in self._last.detections}
        found: list[detect.Detection] = []
        h, w = gray.shape
        for x0, y0, x1, y1, ids in self._regions(w, h):
            crop = np.ascontiguousarray(gray[y0:y1, x0:x1])
            needs_second = self.second_pass and any(last[i].source != "full" for i in ids)
            params = _crop_parameters(crop.shape, (h, w))
            res = detect.detect_all(crop, self.catalog, second_pass=needs_second, params=params)
            found += [_shifted(d, x0, y0) for d in res.detections]
            if res.unknown_ids:
                return None
        by_id = {d.marker_id: d for d in found}
        if len(by_id) != len(found) or set(by_id) != set(last):
            return None
        for mid, d in by_id.items():
            if np.abs(d.centre - last[mid].centre).max() > self.settings.moved_px:
                return None
        detections = tuple(sorted(found, key=lambda d: d.marker_id))
        return detect.DetectionResult(detections, self._last.unknown_ids,
                                      sum(d.source != "full" for d in detections))

    def _follow_pass(self, gray: np.ndarray) -> detect.DetectionResult | None:
        """Mode "follow": the stickers of the last frame, followed into this one; None when one cannot
        be followed (then a full pass is due)."""
        found = self._follow_many(gray, self._last.detections)
        if found is None:
            return None
        if all(d is last for d, last in zip(found, self._last.detections)):
            return self._last  # every sticker held: the same result, so what follows it may be kept too
        return detect.DetectionResult(found, self._last.unknown_ids, self._last.second_pass_found)

    def _follow_many(self, gray: np.ndarray, last) -> tuple[detect.Detection, ...] | None:
        """These stickers followed into this frame: each one's corners refined on its edges from where
        they were (all stickers in one batch), and its bits read again there; None when one cannot be
        followed."""
        if self.settings.reuse_still:
            still = [self._still.unchanged(gray, d.marker_id) is d for d in last]
            if all(still):
                return tuple(last)
            moving = self._follow_many_measured(gray, [d for d, s in zip(last, still) if not s])
            if moving is None:
                return None
            measured = iter(moving)
            return tuple(d if s else next(measured) for d, s in zip(last, still))
        return self._follow_many_measured(gray, last)

    def _follow_many_measured(self, gray: np.ndarray, last) -> tuple[detect.Detection, ...] | None:
        """_follow_many by measuring every one of these stickers again."""
        before = np.array([d.corners for d in last])
        h, w = gray.shape
        x0, y0 = np.maximum(np.floor(before.min(axis=(0, 1))).astype(int) - FOLLOW_MARGIN_PX, 0)
        x1, y1 = np.minimum(np.ceil(before.max(axis=(0, 1))).astype(int) + FOLLOW_MARGIN_PX + 1, (w, h))
        crop = gray[y0:y1, x0:x1].astype(np.float32)  # only the part of the frame the stickers span
        offset = np.array([x0, y0], dtype=np.float64)
        corners, rms, blur, blur_edges = edges.refine_corners(crop, before - offset, per_edge=True)
        if (rms <= 0).any() or (np.abs(corners + offset - before).max(axis=(1, 2)) > self.settings.moved_px).any():
            return None
        if not reads_as_many(crop, corners, [d.marker_id for d in last]).all():
            return None
        corners = corners + offset
        held = np.abs(corners - before).max(axis=(1, 2)) <= self.settings.hold_px
        sides = np.linalg.norm(corners - np.roll(corners, -1, axis=1), axis=2).mean(axis=1)
        return tuple(d if held[k] else
                     detect.Detection(marker_id=d.marker_id, corners=corners[k], side_px=float(sides[k]),
                                      edge_rms_px=float(rms[k]), source=d.source, known=d.known,
                                      blur_px=float(blur[k]), extra=_edge_blur_extra(blur_edges[k]))
                     for k, d in enumerate(last))

    def _regions(self, w: int, h: int) -> list[tuple[int, int, int, int, list[int]]]:
        """Boxes (x0, y0, x1, y1, marker ids) around the last stickers, overlapping ones merged."""
        return merge_boxes(self._sticker_boxes(w, h))

    def _sticker_boxes(self, w: int, h: int) -> list[list]:
        """[x0, y0, x1, y1, [marker id]] around each of the last stickers, with the ROI margin."""
        s = self.settings
        boxes = []
        for d in self._last.detections:
            m = max(s.margin_min_px, s.margin_sides * d.side_px)
            lo, hi = d.corners.min(axis=0) - m, d.corners.max(axis=0) + m
            boxes.append([max(0, int(lo[0])), max(0, int(lo[1])), min(w, int(np.ceil(hi[0]))),
                          min(h, int(np.ceil(hi[1]))), [d.marker_id]])
        return boxes


def motion_cells(gray: np.ndarray, scale: int = RoiSettings.motion_scale) -> np.ndarray:
    """The grey frame shrunk `scale` times (cell means): what the motion checks compare. The last one
    is kept for the very same grey array (detect.to_gray hands out one read-only grey a frame), so the
    live page asks for it again at no cost."""
    memo = _LAST_CELLS[0]
    if memo is not None and memo[0] is gray and memo[1] == scale:
        return memo[2]
    h, w = gray.shape
    cells = cv2.resize(gray, (max(1, w // scale), max(1, h // scale)), interpolation=cv2.INTER_AREA)
    _LAST_CELLS[0] = (gray, scale, cells) if not gray.flags.writeable else None  # a writable grey may change
    return cells


_LAST_CELLS: list = [None]  # (grey, scale, cells) of the last frame


def changed_cells(cells: np.ndarray, before: np.ndarray, grey: float = RoiSettings.motion_grey) -> np.ndarray:
    """(bool) the motion cells that differ from those before by more than `grey` grey levels."""
    return cv2.absdiff(cells, before) > grey


def same_cells(cells: np.ndarray, before: np.ndarray) -> bool:
    """Do two frames' motion cells show the same picture (the same grid, no cell changed)?"""
    return cells.shape == before.shape and not changed_cells(cells, before).any()


def _cell_boxes(cells: np.ndarray, w: int, h: int) -> list[tuple[int, int, int, int]]:
    """Pixel boxes (x0, y0, x1, y1) around each group of marked cells of a shrunk frame, a cell wider
    on every side (an outline crossing a group's edge lies inside)."""
    fx, fy = w / cells.shape[1], h / cells.shape[0]
    grown = cv2.dilate(cells.astype(np.uint8), np.ones((3, 3), np.uint8))
    _, _, stats, _ = cv2.connectedComponentsWithStats(grown, connectivity=8)
    return [(int(x * fx), int(y * fy), min(w, int(np.ceil((x + bw) * fx))), min(h, int(np.ceil((y + bh) * fy))))
            for x, y, bw, bh, _ in stats[1:]]


def _cells_of(box, small_shape: tuple, shape: tuple) -> tuple[int, int, int, int]:
    """(cy0, cy1, cx0, cx1): the shrunk frame's cells that box (x0, y0, x1, y1) px touches."""
    fy, fx = shape[0] / small_shape[0], shape[1] / small_shape[1]
    x0, y0, x1, y1 = box[:4]
    return (int(y0 // fy), min(small_shape[0], int(np.ceil(y1 / fy))),
            int(x0 // fx), min(small_shape[1], int(np.ceil(x1 / fx))))


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _inside(a, b) -> bool:
    return b[0] <= a[0] and b[1] <= a[1] and a[2] <= b[2] and a[3] <= b[3]


def _shifted(d: detect.Detection, x0: int, y0: int) -> detect.Detection:
    """A detection in a crop, in the whole frame's pixels."""
    return detect.Detection(marker_id=d.marker_id, corners=d.corners + (x0, y0), side_px=d.side_px,
                            edge_rms_px=d.edge_rms_px, source=d.source, known=d.known, blur_px=d.blur_px,
                            extra=d.extra)


def _edge_blur_extra(blur_edges: np.ndarray) -> dict:
    """A followed sticker's blur across each edge, as a whole-frame pass gives it (the motion
    streak of the sigma model, vision/pipeline.py); nothing when an edge was not measured."""
    return {"edge_blur_px": tuple(float(b) for b in blur_edges)} if blur_edges.min() > 0 else {}


def merge_boxes(boxes: list[list]) -> list[tuple[int, int, int, int, list[int]]]:
    """Merge overlapping boxes [x0, y0, x1, y1, ids] until none overlap."""
    merged = True
    boxes = [list(b) for b in boxes]
    while merged:
        merged = False
        out: list[list] = []
        for b in boxes:
            for o in out:
                if b[0] < o[2] and o[0] < b[2] and b[1] < o[3] and o[1] < b[3]:
                    o[0], o[1], o[2], o[3] = min(o[0], b[0]), min(o[1], b[1]), max(o[2], b[2]), max(o[3], b[3])
                    o[4] = o[4] + b[4]
                    merged = True
                    break
            else:
                out.append(b)
        boxes = out
    return [tuple(b) for b in boxes]


_PARAMS: dict = {}


def _crop_parameters(crop_shape, frame_shape) -> cv2.aruco.DetectorParameters:
    """refcam's detector parameters for a crop: the marker perimeter limits, which OpenCV sets
    relative to the larger image side, rescaled so the crop accepts the full frame's sizes."""
    ratio = max(frame_shape) / max(crop_shape)
    key = round(ratio, 2)
    if key not in _PARAMS:
        p = detect.detector_parameters()
        p.minMarkerPerimeterRate = p.minMarkerPerimeterRate * key
        p.maxMarkerPerimeterRate = p.maxMarkerPerimeterRate * key
        if len(_PARAMS) > 512:
            _PARAMS.clear()
        _PARAMS[key] = p
    return _PARAMS[key]


# Crop margin around a followed sticker: the edge profiles reach 6 px out, plus the allowed move.
FOLLOW_MARGIN_PX = 12
MAX_BIT_ERRORS = 1  # inner bits that may read wrong (noise on a marginal cell) when following


def reads_as(gray_f: np.ndarray, corners: np.ndarray, marker_id: int, dictionary: int = detect.DICTIONARY) -> bool:
    """Do the cells inside these corners (TL, TR, BR, BL) read as this marker, in this turn?"""
    return bool(reads_as_many(gray_f, np.asarray(corners)[None], [marker_id], dictionary)[0])


def reads_as_many(gray_f: np.ndarray, corners: np.ndarray, marker_ids, dictionary: int = detect.DICTIONARY
                  ) -> np.ndarray:
    """(m,) bool: do the cells inside each of the (m, 4, 2) corner sets read as its marker, in this turn?
    Cell centres are sampled through each square's perspective (all stickers in one remap);
    each cell is black or white against the level half-way between the black border and the
    white quiet zone."""
    want = np.array([_bits(i, dictionary) for i in marker_ids])  # (m, n, n)
    m, n = want.shape[:2]
    if not m:
        return np.zeros(0, bool)
    unit = np.array([[0, 0], [n, 0], [n, n], [0, n]], np.float32)
    read_pts = _read_points(n).reshape(-1, 1, 2)
    pts = np.stack([cv2.perspectiveTransform(read_pts, cv2.getPerspectiveTransform(unit, c.astype(np.float32)))
                    .reshape(-1, 2) for c in corners])  # (m, P, 2)
    hh, ww = gray_f.shape
    inside = ((pts[..., 0] >= 0) & (pts[..., 1] >= 0) & (pts[..., 0] <= ww - 1) & (pts[..., 1] <= hh - 1)).all(axis=1)
    vals = remap(gray_f, pts[..., 0].copy(), pts[..., 1].copy(), cv2.INTER_LINEAR)  # (m, P)
    cells, ring = vals[:, :n * n].reshape(m, n, n), vals[:, n * n:]
    border = np.concatenate([cells[:, 0], cells[:, -1], cells[:, 1:-1, 0], cells[:, 1:-1, -1]], axis=1)
    black = np.median(border, axis=1).astype(np.float64)
    white = np.median(ring, axis=1).astype(np.float64)
    thr = ((black + white) / 2.0).astype(np.float32)  # the one-sticker read compared in float32 too
    lit = cells > thr[:, None, None]
    wrong = (lit[:, 1:-1, 1:-1] != want[:, 1:-1, 1:-1]).sum(axis=(1, 2))
    return inside & (white - black >= 25) & ((border > thr[:, None]).sum(axis=1) <= 1) & (wrong <= MAX_BIT_ERRORS)


_BITS: dict = {}


def _bits(marker_id: int, dictionary: int) -> np.ndarray:
    """(n, n) bool cells of a marker, border included (True: white)."""
    key = (marker_id, dictionary)
    if key not in _BITS:
        dic = cv2.aruco.getPredefinedDictionary(dictionary)
        n = dic.markerSize + 2
        _BITS[key] = dic.generateImageMarker(int(marker_id), n, borderBits=1) > 127
    return _BITS[key]


@lru_cache(maxsize=4)
def _read_points(n: int) -> np.ndarray:
    """(n*n + 4n, 2) float32 points in cell units: every cell's centre, then the quiet zone around."""
    jj, ii = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5)
    t = np.arange(n) + 0.5
    ring = np.concatenate([np.stack([t, np.full(n, -0.45)], 1), np.stack([t, np.full(n, n + 0.45)], 1),
                           np.stack([np.full(n, -0.45), t], 1), np.stack([np.full(n, n + 0.45), t], 1)])
    return np.concatenate([np.stack([jj.ravel(), ii.ravel()], 1), ring]).astype(np.float32)
