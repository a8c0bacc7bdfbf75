"""Detection that follows the stickers from frame to frame: full frames only when needed.

A table at rest changes only where hands and pieces move. So after a full-frame pass
(detect.detect_all) the next frames are searched only in regions of interest (ROIs)
around the stickers found, and the whole frame is searched again when

* ``full_every`` frames have gone by since the last full pass (a safety net);
* anything changed outside those regions: the frame, shrunk ``motion_scale`` times, differs
  from the one of the last full pass by more than ``motion_grey`` grey levels somewhere (a
  hand coming in, a piece put down; a sticker cannot appear without pixels changing);
* the ROI pass misses a sticker it expected, or finds one at another place (a new event).

So a calm frame costs the ROIs only, and every other frame is detected as before: on the
bundled sessions the stickers found, and so the rulings, are the same as with full frames.
The ROI crops use the detector's own parameters, with the marker-size limits (set relative
to the image size) rescaled to the full frame's, so a crop accepts exactly the sizes the
full frame does.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from . import detect


@dataclass(frozen=True)
class RoiSettings:
    full_every: int = 30  # frames between full passes at the latest (1 s at 30 fps)
    margin_sides: float = 1.0  # ROI margin around a sticker, in its own side lengths
    margin_min_px: int = 32  # ... and at least this (the threshold windows are up to 23 px)
    motion_scale: int = 8  # the motion check compares frames shrunk this many times
    motion_grey: float = 12.0  # grey levels of change (in a shrunk cell) that count as motion
    moved_px: float = 2.0  # an ROI detection this far from its last place is a new event


class RoiDetector:
    """detect.detect_all with memory: call detect(image) on consecutive frames of one camera."""

    def __init__(self, catalog=None, second_pass: bool = True, settings: RoiSettings | None = None):
        self.catalog = catalog
        self.second_pass = second_pass
        self.settings = settings or RoiSettings()
        self.reset()

    def reset(self) -> None:
        self._last: detect.DetectionResult | None = None
        self._reference: np.ndarray | None = None  # the shrunk frame of the last full pass
        self._since_full = 0
        self.full_passes = 0
        self.roi_passes = 0

    def detect(self, image: np.ndarray) -> detect.DetectionResult:
        gray = detect.to_gray(image)
        small = self._shrink(gray)
        result = None
        if self._can_follow(gray, small):
            result = self._roi_pass(gray)
        if result is None:
            result = detect.detect_all(gray, self.catalog, second_pass=self.second_pass)
            self._reference, self._since_full = small, 0
            self.full_passes += 1
        else:
            self._since_full += 1
            self.roi_passes += 1
        self._last = result
        return result

    def _shrink(self, gray: np.ndarray) -> np.ndarray:
        s = self.settings.motion_scale
        h, w = gray.shape
        return cv2.resize(gray, (max(1, w // s), max(1, h // s)), interpolation=cv2.INTER_AREA)

    def _can_follow(self, gray: np.ndarray, small: np.ndarray) -> bool:
        """May this frame be searched in the ROIs only?"""
        if self._last is None or self._reference is None or not self._last.detections:
            return False
        if self._reference.shape != small.shape or self._since_full + 1 >= self.settings.full_every:
            return False
        return float(cv2.absdiff(small, self._reference).max()) <= self.settings.motion_grey

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
            for d in res.detections:
                found.append(detect.Detection(marker_id=d.marker_id, corners=d.corners + (x0, y0), side_px=d.side_px,
                                              edge_rms_px=d.edge_rms_px, source=d.source, known=d.known))
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

    def _regions(self, w: int, h: int) -> list[tuple[int, int, int, int, list[int]]]:
        """Boxes (x0, y0, x1, y1, marker ids) around the last stickers, overlapping ones merged."""
        s = self.settings
        boxes = []
        for d in self._last.detections:
            m = max(s.margin_min_px, s.margin_sides * d.side_px)
            lo, hi = d.corners.min(axis=0) - m, d.corners.max(axis=0) + m
            boxes.append([max(0, int(lo[0])), max(0, int(lo[1])), min(w, int(np.ceil(hi[0]))),
                          min(h, int(np.ceil(hi[1]))), [d.marker_id]])
        return merge_boxes(boxes)


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
