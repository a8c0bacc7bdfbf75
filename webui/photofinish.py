"""The photo finish: a picture that shows why refcam ranked the boats as it did.

On the photo (when the game frame can be mapped to its pixels) or on a top-down
schematic of the course (when not, e.g. for an observation file), it draws: the
zones along the course path, every boundary line extended without end (dashed)
with its physical part solid, the finish segment, each boat's measured distance
(a line to the foot of the perpendicular) or angle (an arc at the curve marker)
with its value and +- sigma, the finish-line reach, and the ranking with every
"equidistant within measurement" pair marked.

Game frame -> pixels: the stickers found in the photo are matched with where the
observation puts them (catalog placements) and a plane homography is fitted;
boats stand 5 mm above the table, which this ignores (well under a pixel at
ordinary camera distances).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from referee.catalog import default_catalog
from referee.errors import InvalidInputError
from referee.observation import Observation
from referee.tornado import geometry as g
from referee.tornado.standings import RankResult

BOAT_COLOURS = [(40, 40, 230), (230, 120, 30), (40, 180, 40), (200, 40, 200), (30, 200, 230), (130, 80, 20)]
ZONE_COLOURS = [(255, 220, 170), (170, 230, 255), (200, 255, 200), (230, 200, 255), (200, 240, 240), (240, 210, 210), (220, 220, 255)]
LINE_COLOUR = (0, 140, 255)
FINISH_COLOUR = (255, 255, 255)
EQUI_COLOUR = (0, 215, 255)
MIN_MATCHES = 4


def _boat_colour(name: str) -> tuple[int, int, int]:
    try:
        k = int(name.rsplit("-", 1)[1]) - 1
    except (IndexError, ValueError):
        k = 0
    return BOAT_COLOURS[k % len(BOAT_COLOURS)]


def game_to_image_homography(image: np.ndarray, observation: Observation, camera=None,
                              detections=None) -> np.ndarray | None:
    """(3, 3) homography from game-frame mm (table plane) to image pixels, or None.

    Sticker centres found in the image are paired with their game-frame position
    (piece pose + catalog placement); needs at least 4 flat stickers. The detections
    the observation was made from are reused: ``detections`` (a vision.detect
    DetectionResult) or the live page's ``observation.extra["detections"]``; only
    without either is the image searched again. With a camera
    (calibration.camera.CameraModel) the centres are undistorted first and the
    homography maps to ideal (undistorted) pixels: see _View.px for the way back.
    """
    import cv2

    catalog = default_catalog()
    src, dst = [], []
    for marker_id, corners in _sticker_corners(image, observation, detections, catalog):
        st = catalog.sticker(marker_id)
        if st is None or st.top_z_mm > 2.0:
            continue
        pose = observation.piece(st.piece)
        if pose is None or marker_id not in pose.marker_ids:
            continue
        src.append(g.to_world((pose.x_mm, pose.y_mm), pose.theta_deg, (st.x_mm, st.y_mm)))
        dst.append(tuple(np.asarray(corners, dtype=float).reshape(4, 2).mean(axis=0)))
    if len(src) < MIN_MATCHES:
        return None
    if camera is not None:
        dst = cv2.undistortPoints(np.array(dst, float).reshape(-1, 1, 2), camera.K, camera.dist, None,
                                  camera.K).reshape(-1, 2).tolist()
    H, _mask = cv2.findHomography(np.array(src, float), np.array(dst, float), cv2.RANSAC, 8.0)
    return H


def _sticker_corners(image, observation: Observation, detections, catalog) -> list[tuple[int, object]]:
    """(marker id, (4, 2) corners px) of every sticker found in the image."""
    if detections is not None:
        return [(d.marker_id, d.corners) for d in detections.detections]
    kept = observation.extra.get("detections")
    if kept:
        return [(int(d["id"]), d["corners"]) for d in kept]
    from vision import detect

    try:
        return [(d.marker_id, d.corners) for d in detect.detect_all(image, catalog).detections]
    except Exception:  # noqa: BLE001 - the picture falls back to the schematic
        return []


class _View:
    """Maps game-frame mm to canvas pixels: a homography, then the lens distortion
    when a camera model is known (radial-tangential, as OpenCV)."""

    def __init__(self, H: np.ndarray, camera=None):
        self.H = H
        self.K = camera.K if camera is not None else None
        self.dist = camera.dist if camera is not None else None

    def px(self, p: g.Point) -> tuple[int, int]:
        v = self.H @ np.array([p[0], p[1], 1.0])
        if abs(v[2]) < 1e-9:
            return (-10**6, -10**6)
        u, w = v[0] / v[2], v[1] / v[2]
        if self.K is not None:
            u, w = self._distort(u, w)
        if not (abs(u) < 1e6 and abs(w) < 1e6):
            return (-10**6, -10**6)
        return (int(round(u)), int(round(w)))

    def _distort(self, u: float, w: float) -> tuple[float, float]:
        from synth.camera import distort_normalized

        K = self.K
        x, y = (u - K[0, 2]) / K[0, 0], (w - K[1, 2]) / K[1, 1]
        if x * x + y * y > 4.0:  # far outside the picture the polynomial model turns back on itself
            return u, w
        xd, yd = distort_normalized(x, y, self.dist)
        return xd * K[0, 0] + K[0, 2], yd * K[1, 1] + K[1, 2]

    def visible(self, p: g.Point) -> bool:
        """In front of the camera (a plane point beyond the horizon maps mirrored)."""
        w = (self.H @ np.array([p[0], p[1], 1.0]))[2]
        w0 = (self.H @ np.array([0.0, 0.0, 1.0]))[2]
        return w * w0 > 0

    def scale_at(self, p: g.Point) -> float:
        """Pixels per mm near p."""
        a, b = self.px(p), self.px((p[0] + 10.0, p[1]))
        return max(math.hypot(b[0] - a[0], b[1] - a[1]) / 10.0, 1e-6)


def _schematic_view(result: RankResult, width: int = 1400) -> tuple[np.ndarray, _View]:
    """A top-down canvas fitting the course and the boats; +y of the game frame up."""
    pts = []
    course = result.course
    if course is not None:
        for z in course.zones:
            pts += list(z.path)
            if z.vertex:
                pts.append(z.vertex)
        pts += [course.finish.point_at(s) for s in (-course.finish.half_length, course.finish.half_length)]
        pts += [course.start.point_at(s) for s in (-course.start.half_length, course.start.half_length)]
    pts += [b.position for b in result.boats if b.position is not None]
    if not pts:
        pts = [(-500.0, -500.0), (500.0, 500.0)]
    margin = (course.track_width if course else 300.0) * 0.8
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    x0, x1, y0, y1 = min(xs) - margin, max(xs) + margin, min(ys) - margin, max(ys) + margin
    s = width / (x1 - x0)
    height = int(math.ceil((y1 - y0) * s))
    H = np.array([[s, 0, -x0 * s], [0, -s, y1 * s], [0, 0, 1.0]])
    canvas = np.full((height, width, 3), (70, 110, 60), np.uint8)  # a green table
    return canvas, _View(H)


def _text(img, text: str, org: tuple[int, int], scale: float, colour, thick: int = 2) -> None:
    import cv2

    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, (0, 0, 0), thick + 3, cv2.LINE_AA)
    cv2.putText(img, text, org, cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick, cv2.LINE_AA)


def _dashed(img, view: _View, a: g.Point, b: g.Point, colour, thick: int, dash_mm: float = 25.0) -> None:
    import cv2

    n = max(1, int(g.dist(a, b) / dash_mm))
    for i in range(0, n, 2):
        p = g.add(a, g.scale(g.sub(b, a), i / n))
        q = g.add(a, g.scale(g.sub(b, a), min(1.0, (i + 1) / n)))
        if view.visible(p) and view.visible(q):
            cv2.line(img, view.px(p), view.px(q), colour, thick, cv2.LINE_AA)


def render_photo_finish(result: RankResult, image: np.ndarray | None = None,
                        observation: Observation | None = None, camera=None,
                        detections=None) -> tuple[np.ndarray, str | None]:
    """The annotated picture (H, W, 3) BGR, and a note when the schematic stood in for the photo.

    camera: the CameraModel the image was taken with, if known (corrects lens distortion).
    detections: the vision.detect result the observation came from, to reuse."""
    import cv2

    note = None
    H = None
    if image is not None and observation is not None:
        H = game_to_image_homography(image, observation, camera, detections)
        if H is None:
            note = "photo finish drawn on a top-down schematic: too few stickers to map the course onto the photo"
    elif image is None:
        note = "photo finish drawn on a top-down schematic of the course (no photo given)"
    if H is not None:
        canvas, view = image.copy(), _View(H, camera)
    else:
        canvas, view = _schematic_view(result)
    h, w = canvas.shape[:2]
    unit = max(w, h) / 1400.0  # text and line sizes follow the picture size
    fs, th = 0.8 * unit, max(1, int(round(2 * unit)))
    course = result.course
    mm_px = view.scale_at(course.start.origin) if course else 1.0
    overlay = canvas.copy()

    if course is not None:
        tw = course.track_width
        # zones: the course path band, one colour per zone
        for z in course.zones:
            col = ZONE_COLOURS[z.index % len(ZONE_COLOURS)]
            left, right = [], []
            for i, a in enumerate(z.path):
                b = z.path[min(i + 1, len(z.path) - 1)]
                c = z.path[max(i - 1, 0)]
                if g.dist(b, c) < 1e-6:
                    continue
                n = g.rotate(g.unit(g.sub(b, c)), 90.0)
                left.append(view.px(g.add(a, g.scale(n, tw / 2))))
                right.append(view.px(g.add(a, g.scale(n, -tw / 2))))
            band = [np.array(left + right[::-1], np.int32)] if len(left) >= 2 else []
            if band:
                cv2.fillPoly(overlay, band, col)
        cv2.addWeighted(overlay, 0.25, canvas, 0.75, 0, canvas)
        for z in course.zones:
            # the zone's name near the edge of its band, clear of the boats on the path
            i = len(z.path) // 2
            a, b = z.path[max(i - 1, 0)], z.path[min(i + 1, len(z.path) - 1)]
            mid = z.path[i] if len(z.path) > 2 else g.scale(g.add(z.path[0], z.path[-1]), 0.5)
            if g.dist(a, b) > 1e-6:
                mid = g.add(mid, g.scale(g.rotate(g.unit(g.sub(b, a)), -90.0), 0.4 * tw))
            _text(canvas, z.name, view.px(mid), fs * 0.7, (255, 255, 255), th)
        # boundary lines: extended without end (dashed), the physical part solid
        reach = 4000.0
        for line in course.lines():
            _dashed(canvas, view, line.point_at(-reach), line.point_at(reach), LINE_COLOUR, max(1, th // 2))
            if line.kind == "ray":
                cv2.line(canvas, view.px(line.origin), view.px(line.point_at(course.track_width + 150)), LINE_COLOUR,
                         th + 1, cv2.LINE_AA)
            elif line is not course.finish:
                cv2.line(canvas, view.px(line.point_at(-line.half_length)), view.px(line.point_at(line.half_length)),
                         LINE_COLOUR, th + 1, cv2.LINE_AA)
        fin = course.finish
        a, b = fin.point_at(-fin.half_length), fin.point_at(fin.half_length)
        cv2.line(canvas, view.px(a), view.px(b), (0, 0, 0), th * 4, cv2.LINE_AA)
        cv2.line(canvas, view.px(a), view.px(b), FINISH_COLOUR, th * 2, cv2.LINE_AA)
        _text(canvas, "FINISH", view.px(b), fs, FINISH_COLOUR, th)
        for z in course.zones:
            if z.vertex:
                cv2.circle(canvas, view.px(z.vertex), max(4, int(8 * unit)), LINE_COLOUR, -1, cv2.LINE_AA)

    # boats: measure drawn as a line (straight) or an arc (curve), value +- sigma
    for b in result.boats:
        if b.position is None:
            continue
        col = _boat_colour(b.name)
        p = view.px(b.position)
        m = b.measure
        if m is not None and course is not None:
            if m.kind == "distance_mm" and m.foot is not None:
                cv2.line(canvas, p, view.px(m.foot), col, th + 1, cv2.LINE_AA)
                label = f"{m.value:.1f} +-{m.sigma:.1f} mm"
                at = view.px(g.add(b.position, g.scale(g.sub(m.foot, b.position), 0.5)))
            elif m.kind == "angle_deg" and b.zone_index is not None and b.zone_index < len(course.zones):
                z = course.zones[b.zone_index]
                rho = g.dist(b.position, z.vertex)
                start = g.angle_deg(g.sub(b.position, z.vertex))
                steps = max(2, int(abs(m.value) / 3))
                arc = [view.px(g.add(z.vertex, g.scale(g.direction(start + z.turn * m.value * i / steps), rho)))
                       for i in range(steps + 1)]
                cv2.polylines(canvas, [np.array(arc, np.int32)], False, col, th + 1, cv2.LINE_AA)
                cv2.line(canvas, view.px(z.vertex), p, col, max(1, th // 2), cv2.LINE_AA)
                label = f"{m.value:.1f} +-{m.sigma:.1f} deg"
                at = arc[len(arc) // 2]
            else:
                label, at = "", p
            # the value sits on its own line or arc, so neighbouring boats' labels part
            _text(canvas, label, (at[0] + int(6 * unit), at[1] - int(8 * unit)), fs * 0.75, col, th)
        if b.finish is not None:
            pts = np.array([view.px(q) for q in b.finish.front], np.int32)
            cv2.polylines(canvas, [pts], b.standing_on is None, (255, 255, 255), th, cv2.LINE_AA)
        r = max(8, int(17 * mm_px))
        cv2.circle(canvas, p, r, (0, 0, 0), th + 3, cv2.LINE_AA)
        cv2.circle(canvas, p, r, col, th + 1, cv2.LINE_AA)
        tag = (str(b.rank) if b.rank is not None else "?") + " " + b.name.split("/")[-1]
        _text(canvas, tag, (p[0] + r + 4, p[1] - r), fs, col, th + 1)

    # "equidistant within measurement" pairs: a yellow link between the two boats
    pos = {b.name: b.position for b in result.boats if b.position is not None}
    for c in result.calls:
        if c.verdict == "equidistant within measurement" and c.ahead in pos and c.behind in pos:
            a, b = view.px(pos[c.ahead]), view.px(pos[c.behind])
            cv2.line(canvas, a, b, EQUI_COLOUR, th, cv2.LINE_AA)
            mid = ((a[0] + b[0]) // 2, (a[1] + b[1]) // 2)
            _text(canvas, "=", (mid[0] - int(8 * unit), mid[1] + int(8 * unit)), fs * 1.2, EQUI_COLOUR, th + 1)

    # the ranking panel beside the picture
    rows = _panel_rows(result)
    line_h = int(42 * unit)
    panel_w = int(640 * unit)
    panel = np.full((max(h, line_h * (len(rows) + 2)), panel_w, 3), 32, np.uint8)
    y = line_h
    for text, colour, scale in rows:
        _text(panel, text, (int(16 * unit), y), fs * scale, colour, th)
        y += int(line_h * max(scale, 0.8))
    if panel.shape[0] > h:
        canvas = np.vstack([canvas, np.zeros((panel.shape[0] - h, w, 3), np.uint8)])
    out = np.hstack([canvas, panel])
    if note:
        _text(out, note, (int(10 * unit), out.shape[0] - int(14 * unit)), fs * 0.55, (255, 255, 255), max(1, th - 1))
    return out, note


def _panel_rows(result: RankResult) -> list[tuple[str, tuple[int, int, int], float]]:
    rows = [(f"Ranking - {result.course_id}", (255, 255, 255), 1.1)]
    if result.first_round:
        rows.append(("first round: all on the start gate, by weight", (200, 200, 200), 0.7))
    for b in result.boats:
        col = _boat_colour(b.name)
        rank = "-" if b.rank is None else str(b.rank)
        meas = ""
        if b.measure is not None:
            unit = "mm" if b.measure.kind == "distance_mm" else "deg"
            meas = f"  {b.measure.value:.1f}+-{b.measure.sigma:.1f} {unit}"
        fin = " FINISHED" if b.finished is True else (" finish: too close to call" if b.finished == "too close to call" else "")
        rows.append((f"{rank}. {b.name.split('/')[-1]}  w{b.weight:g}{meas}{fin}", col, 0.9))
        where = b.zone or b.status
        if b.measure is not None and b.measure.line:
            where += f"  ({'distance' if b.measure.kind == 'distance_mm' else 'angle'} to {b.measure.line})"
        rows.append((f"     {where}", (220, 220, 220), 0.65))
        if b.equidistant_with:
            rows.append(("     = equidistant within measurement with " +
                         ", ".join(n.split('/')[-1] for n in b.equidistant_with) + ": lower weight first",
                         EQUI_COLOUR, 0.6))
    # why each boat is ahead of the next one
    ranked = [b for b in result.boats if b.rank is not None and b.measure is not None]
    calls = {frozenset((c.ahead, c.behind)): c for c in result.calls}
    for a, b in zip(ranked, ranked[1:]):
        c = calls.get(frozenset((a.name, b.name)))
        if c is None:
            continue
        na, nb = a.name.split("/")[-1], b.name.split("/")[-1]
        unit = "deg" if c.kind == "angle_deg" else "mm"
        if c.verdict == "zone":
            text, colour = f"{na} before {nb}: zone nearer the finish", (200, 200, 200)
        elif c.verdict == "ahead":
            text = f"{na} before {nb}: {c.delta:.1f} {unit} apart > band {2 * c.sigma:.1f}"
            colour = (200, 200, 200)
        else:
            text = (f"{na} = {nb}: {c.delta:.1f} {unit} apart < band {2 * c.sigma:.1f}: lighter first"
                    if c.kind != "start gate" else f"{na} = {nb}: both on the start gate: lighter first")
            colour = EQUI_COLOUR
        rows.append((text, colour, 0.6))
    if result.hand_size:
        rows.append(("hand size: " + ", ".join(f"{k.split('/')[-1]} {v}" for k, v in result.hand_size.items()),
                     (255, 255, 255), 0.7))
    for w in result.warnings[:4]:
        rows.append(("! " + (w if len(w) < 70 else w[:67] + "..."), (120, 200, 255), 0.55))
    return rows


def write_photo_finish(result: RankResult, out_path: str | Path, image: np.ndarray | None = None,
                       observation: Observation | None = None, camera=None, detections=None) -> str | None:
    """Render and write the photo finish (PNG/JPEG by suffix); returns the schematic note, if any."""
    import cv2

    picture, note = render_photo_finish(result, image, observation, camera, detections)
    out_path = Path(out_path)
    if out_path.suffix.lower() not in (".png", ".jpg", ".jpeg"):
        raise InvalidInputError(f"--annotate {str(out_path)!r}: use a .png or .jpg file name")
    if not cv2.imwrite(str(out_path), picture):
        raise InvalidInputError(f"cannot write the photo finish to {str(out_path)!r}")
    return note
