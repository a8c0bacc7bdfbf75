"""ChArUco camera calibration: the board from the catalog, detection per view,
degenerate-set checks, view selection for live capture, and cv2.calibrateCamera.

Board frame (OpenCV >= 4.6): origin at the board's top-left outer corner, +x along the
5 squares, +y along the 7 squares (down the printed page), z = 0, millimetres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import cv2
import numpy as np

from referee.catalog import Catalog, default_catalog
from referee.errors import InvalidInputError
from vision.imageio import load_image

from .camera import CameraModel

MIN_VIEWS = 6
# Fewer corners than this in one view gives a weak homography; such a view is not used.
MIN_CORNERS_PER_VIEW = 8
# Board normals must spread over at least this angle, or focal length and tilt are
# not separable (Zhang's method needs views from different angles).
MIN_NORMAL_SPREAD_DEG = 20.0
# After solving, the intrinsics' standard deviations (from the Jacobian) must be small:
# this catches view sets that are degenerate in ways the normal spread does not see
# (e.g. every tilt about one image axis). Good sets give about 0.1-0.3 %.
MAX_FOCAL_REL_STD = 0.015
MAX_CENTRE_REL_STD = 0.02  # of the image width / height
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")


class CalibrationError(InvalidInputError):
    """The views cannot give a trustworthy calibration (too few, degenerate, unreadable)."""


# --- the board ------------------------------------------------------------------------

def board_spec(catalog: Catalog | None = None) -> dict:
    """The catalog's ChArUco board entry: dictionary, squares_x/y, square_mm, marker_mm."""
    return dict((catalog or default_catalog()).charuco_board)


def charuco_board(catalog: Catalog | None = None) -> "cv2.aruco.CharucoBoard":
    """The calibration board as OpenCV builds it, in millimetres (same object for print and detect)."""
    spec = board_spec(catalog)
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, spec["dictionary"]))
    return cv2.aruco.CharucoBoard((int(spec["squares_x"]), int(spec["squares_y"])),
                                  float(spec["square_mm"]), float(spec["marker_mm"]), dictionary)


def board_size_mm(board) -> tuple[float, float]:
    sx, sy = board.getChessboardSize()
    return sx * board.getSquareLength(), sy * board.getSquareLength()


def board_black_squares(board) -> list[tuple[int, int]]:
    """(col, row) of every black chessboard square: the squares that carry no marker."""
    sx, sy = board.getChessboardSize()
    sq = board.getSquareLength()
    with_marker = set()
    for corners in board.getObjPoints():
        cx, cy = np.asarray(corners)[:, :2].mean(axis=0)
        with_marker.add((int(cx // sq), int(cy // sq)))
    return [(c, r) for r in range(sy) for c in range(sx) if (c, r) not in with_marker]


def board_image(board, px_per_mm: float) -> np.ndarray:
    """(H, W) uint8 picture of the whole board, no margin; pixel (u, v) covers
    board mm [u/px_per_mm, (u+1)/px_per_mm) x [v/px_per_mm, (v+1)/px_per_mm)."""
    w_mm, h_mm = board_size_mm(board)
    size = (int(round(w_mm * px_per_mm)), int(round(h_mm * px_per_mm)))
    return board.generateImage(size, marginSize=0, borderBits=1)


# --- detection ------------------------------------------------------------------------

@dataclass
class BoardView:
    """The board seen in one image.

    corners: (N, 2) float32 ChArUco corner pixels; ids: (N,) int32 corner ids;
    object_points: (N, 3) float32 board-frame mm of the same corners.
    """

    source: str
    image_size: tuple[int, int]  # (w, h)
    corners: np.ndarray
    ids: np.ndarray
    object_points: np.ndarray

    @property
    def n_corners(self) -> int:
        return int(len(self.ids))


def make_detector(board) -> "cv2.aruco.CharucoDetector":
    params = cv2.aruco.DetectorParameters()
    params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_NONE  # ChArUco corners get their own sub-pixel step
    return cv2.aruco.CharucoDetector(board, cv2.aruco.CharucoParameters(), params)


def detect_view(image: np.ndarray, board, detector=None, source: str = "") -> BoardView | None:
    """Detect the board in a (H, W) or (H, W, 3) image; None when too little of it is seen."""
    gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    detector = detector or make_detector(board)
    ch_corners, ch_ids, _, _ = detector.detectBoard(gray)
    if ch_ids is None or len(ch_ids) < MIN_CORNERS_PER_VIEW:
        return None
    ids = np.asarray(ch_ids, dtype=np.int32).ravel()
    if board.checkCharucoCornersCollinear(ids):
        return None
    all_obj = np.asarray(board.getChessboardCorners(), dtype=np.float32)
    return BoardView(source=source, image_size=(gray.shape[1], gray.shape[0]),
                     corners=np.asarray(ch_corners, dtype=np.float32).reshape(-1, 2), ids=ids,
                     object_points=all_obj[ids])


def image_files(folder: str | Path) -> list[Path]:
    folder = Path(folder)
    if not folder.exists():
        raise CalibrationError(f"image folder {str(folder)!r} does not exist")
    if not folder.is_dir():
        raise CalibrationError(f"{str(folder)!r} is not a folder")
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise CalibrationError(f"no images ({', '.join(IMAGE_SUFFIXES)}) in folder {str(folder)!r}")
    return files


@dataclass
class FolderDetections:
    views: list[BoardView]
    missed: list[str]  # file names where the board was not found well enough
    image_size: tuple[int, int]


def detect_folder(folder: str | Path, board=None) -> FolderDetections:
    """Read every image of a folder (all must have one size) and detect the board in each."""
    board = board or charuco_board()
    detector = make_detector(board)
    views, missed, size = [], [], None
    first_name = ""
    for path in image_files(folder):
        # load_image refuses a truncated JPEG (which imread half-decodes, with libjpeg's own
        # line on stderr) and says why a file is not an image
        image = cv2.cvtColor(load_image(path), cv2.COLOR_BGR2GRAY)
        this_size = (image.shape[1], image.shape[0])
        if size is None:
            size, first_name = this_size, path.name
        elif this_size != size:
            raise CalibrationError(f"images differ in size: {first_name!r} is {size[0]}x{size[1]} but "
                                   f"{path.name!r} is {this_size[0]}x{this_size[1]} (use one camera mode)")
        view = detect_view(image, board, detector, source=path.name)
        if view is None:
            missed.append(path.name)
        else:
            views.append(view)
    return FolderDetections(views=views, missed=missed, image_size=size)


# --- view geometry (for degeneracy checks and selection) --------------------------------

def guess_camera_matrix(image_size: tuple[int, int]) -> np.ndarray:
    """(3, 3) rough intrinsics (about 53 degrees across) used only to compare view angles."""
    w, h = image_size
    f = float(max(w, h))
    return np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]], dtype=np.float64)


def board_normal(view: BoardView, K: np.ndarray | None = None) -> np.ndarray:
    """(3,) unit normal of the board in the camera frame, pointing toward the camera."""
    K = guess_camera_matrix(view.image_size) if K is None else K
    ok, rvec, _ = cv2.solvePnP(view.object_points, view.corners, K, None, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        return np.array([0.0, 0.0, -1.0])
    R, _ = cv2.Rodrigues(rvec)
    n = R[:, 2]
    return n if n[2] < 0 else -n  # board z points away from the camera (board y is down the page)


def normal_spread_deg(views: Sequence[BoardView]) -> float:
    """Largest angle between any two views' board normals, degrees."""
    normals = np.array([board_normal(v) for v in views])
    cos = np.clip(normals @ normals.T, -1.0, 1.0)
    return float(np.degrees(np.arccos(cos.min())))


def tilt_deg(view: BoardView) -> float:
    """Angle between the board normal and the optical axis, degrees (0 = fronto-parallel)."""
    n = board_normal(view)
    return float(np.degrees(np.arccos(min(1.0, abs(n[2])))))


# --- calibration ----------------------------------------------------------------------

@dataclass
class CalibrationResult:
    camera: CameraModel
    rms_px: float
    views_used: list[str]
    per_view_rms: list[float]
    missed: list[str] = field(default_factory=list)
    normal_spread_deg: float = 0.0

    def to_json(self) -> dict:
        K = self.camera.K
        return {"rms_px": round(self.rms_px, 4), "views_used": len(self.views_used),
                "views": [{"image": n, "rms_px": round(e, 4)} for n, e in zip(self.views_used, self.per_view_rms)],
                "board_not_found": list(self.missed), "normal_spread_deg": round(self.normal_spread_deg, 1),
                "image_size": list(self.camera.image_size),
                "fx": round(K[0, 0], 3), "fy": round(K[1, 1], 3), "cx": round(K[0, 2], 3), "cy": round(K[1, 2], 3),
                "dist_coeffs": [round(d, 6) for d in self.camera.dist_coeffs],
                "intrinsics_std": self.camera.extra.get("intrinsics_std")}


def _short_list(names: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_views(views: Sequence[BoardView], missed: Sequence[str] = ()) -> float:
    """Refuse a view set that cannot pin down the intrinsics; returns the normal spread (degrees)."""
    if not views:
        raise CalibrationError(f"ChArUco board not found in any of the {len(missed)} images "
                               f"(print it with `refcam markers --charuco`)")
    if len(views) < MIN_VIEWS:
        where = f"; board not found in {_short_list(list(missed))}" if missed else ""
        raise CalibrationError(f"only {len(views)} usable views of the ChArUco board, need at least {MIN_VIEWS}{where}")
    spread = normal_spread_deg(views)
    if spread < MIN_NORMAL_SPREAD_DEG:
        tilts = [tilt_deg(v) for v in views]
        raise CalibrationError(
            f"all {len(views)} views see the board from nearly one angle (normals within {spread:.1f} deg, "
            f"tilts {min(tilts):.0f}-{max(tilts):.0f} deg; need {MIN_NORMAL_SPREAD_DEG:.0f} deg): "
            f"tilt the board 20-45 deg in different directions")
    return spread


def calibrate_views(views: Sequence[BoardView], image_size: tuple[int, int],
                    missed: Sequence[str] = (), initial: CameraModel | None = None) -> CalibrationResult:
    """Pinhole + radial-tangential (k1, k2, p1, p2, k3) calibration from checked views;
    `initial` (an earlier camera file for the same mode) seeds the solver."""
    spread = check_views(views, missed)
    obj = [v.object_points.reshape(-1, 1, 3).astype(np.float32) for v in views]
    img = [v.corners.reshape(-1, 1, 2).astype(np.float32) for v in views]
    criteria = (cv2.TERM_CRITERIA_COUNT + cv2.TERM_CRITERIA_EPS, 100, 1e-9)
    K0, dist0, flags = None, None, 0
    if initial is not None:
        initial.check_image_size(*image_size, source="--camera-file")
        K0, dist0, flags = initial.K.copy(), initial.dist.copy(), cv2.CALIB_USE_INTRINSIC_GUESS
    try:
        rms, K, dist, _rv, _tv, std_intrinsics, _se, per_view = cv2.calibrateCameraExtended(
            obj, img, tuple(image_size), K0, dist0, flags=flags, criteria=criteria)
    except cv2.error as exc:
        raise CalibrationError(f"calibration failed on these views ({str(exc).strip().splitlines()[-1]})") from None
    dist = np.asarray(dist, dtype=np.float64).ravel()[:5]
    if not np.all(np.isfinite(K)) or not np.all(np.isfinite(dist)) or K[0, 0] <= 0 or K[1, 1] <= 0:
        raise CalibrationError("calibration did not converge on these views; take more views at varied angles")
    std = np.asarray(std_intrinsics, dtype=np.float64).ravel()
    sd_fx, sd_fy, sd_cx, sd_cy = (float(x) for x in std[:4])
    worst_focal = max(sd_fx / K[0, 0], sd_fy / K[1, 1])
    if not np.isfinite(worst_focal) or worst_focal > MAX_FOCAL_REL_STD:
        raise CalibrationError(
            f"the {len(views)} views do not pin down the focal length (uncertain by {100 * worst_focal:.1f}%, "
            f"need under {100 * MAX_FOCAL_REL_STD:.1f}%): add views tilted in other directions")
    w, h = image_size
    worst_centre = max(sd_cx / w, sd_cy / h)
    if not np.isfinite(worst_centre) or worst_centre > MAX_CENTRE_REL_STD:
        raise CalibrationError(
            f"the {len(views)} views do not pin down the image centre (uncertain by {sd_cx:.0f}/{sd_cy:.0f} px): "
            f"add views tilted left/right and up/down, with the board in different parts of the picture")
    per_view_list = [float(e) for e in np.asarray(per_view).ravel()]
    names = [v.source for v in views]
    extra = {"views_used": len(views), "per_view_rms": [round(e, 4) for e in per_view_list],
             "intrinsics_std": {"fx": round(sd_fx, 3), "fy": round(sd_fy, 3), "cx": round(sd_cx, 3),
                                "cy": round(sd_cy, 3), "dist": [round(float(x), 6) for x in std[4:9]]},
             "board": {k: v for k, v in board_spec().items()}}
    camera = CameraModel(image_size=(int(image_size[0]), int(image_size[1])),
                         camera_matrix=tuple(tuple(float(x) for x in row) for row in K),
                         dist_coeffs=tuple(float(d) for d in dist), rms_px=float(rms), extra=extra)
    return CalibrationResult(camera=camera, rms_px=float(rms), views_used=names, per_view_rms=per_view_list,
                             missed=list(missed), normal_spread_deg=spread)


def calibrate_folder(folder: str | Path, board=None, initial: CameraModel | None = None) -> CalibrationResult:
    found = detect_folder(folder, board)
    return calibrate_views(found.views, found.image_size, found.missed, initial)


# --- live capture: which frames to keep -------------------------------------------------

@dataclass
class _Signature:
    normal: np.ndarray  # (3,)
    centre: np.ndarray  # (2,) board corners' mean, as a fraction of the image diagonal
    scale: float  # sqrt of the corners' spread area, as a fraction of the diagonal


class ViewSelector:
    """Keeps a frame's view only when it shows enough of the board and differs from the
    views already kept by angle, position in the image or distance: repeated views add
    nothing to a calibration.
    """

    def __init__(self, target: int = 12, min_corners: int = 12, min_angle_deg: float = 8.0,
                 min_shift: float = 0.10, min_scale_change: float = 0.20):
        self.target = target
        self.min_corners = min_corners
        self.min_angle_deg = min_angle_deg
        self.min_shift = min_shift
        self.min_scale_change = min_scale_change
        self.kept: list[BoardView] = []
        self._signatures: list[_Signature] = []

    @staticmethod
    def _signature(view: BoardView) -> _Signature:
        w, h = view.image_size
        diag = math.hypot(w, h)
        pts = view.corners.astype(np.float64)
        cov = np.cov(pts.T) if len(pts) > 2 else np.eye(2)
        return _Signature(normal=board_normal(view), centre=pts.mean(axis=0) / diag,
                          scale=math.sqrt(max(np.linalg.det(cov), 1e-12)) ** 0.5 / diag)

    def why_rejected(self, view: BoardView | None) -> str | None:
        """None when the view would be kept, else a short reason."""
        if view is None:
            return "board not found"
        if view.n_corners < self.min_corners:
            return f"only {view.n_corners} corners seen"
        if self.kept and view.image_size != self.kept[0].image_size:
            return "frame size changed"
        sig = self._signature(view)
        for old in self._signatures:
            angle = math.degrees(math.acos(float(np.clip(sig.normal @ old.normal, -1, 1))))
            shift = float(np.linalg.norm(sig.centre - old.centre))
            scale_change = abs(math.log(sig.scale / old.scale))
            if angle < self.min_angle_deg and shift < self.min_shift and scale_change < self.min_scale_change:
                return "too similar to a kept view"
        return None

    def offer(self, view: BoardView | None) -> bool:
        """Keep the view if it is new enough; returns whether it was kept."""
        if self.done or self.why_rejected(view) is not None:
            return False
        self.kept.append(view)
        self._signatures.append(self._signature(view))
        return True

    @property
    def done(self) -> bool:
        return len(self.kept) >= self.target


def select_views(frames: Iterable[np.ndarray], selector: ViewSelector, board=None,
                 on_frame: Callable[[int, np.ndarray, BoardView | None, bool, str | None], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> list[BoardView]:
    """Run frames (H, W[, 3]) through detection and the selector until it has its target,
    the frames run out or should_stop() says so. on_frame(index, frame, view, kept, reason)
    is told about every frame (progress printing, saving kept frames)."""
    board = board or charuco_board()
    detector = make_detector(board)
    for i, frame in enumerate(frames):
        if should_stop is not None and should_stop():
            break
        view = detect_view(frame, board, detector, source=f"frame-{i:04d}")
        reason = selector.why_rejected(view)
        kept = selector.offer(view)
        if on_frame is not None:
            on_frame(i, frame, view, kept, reason)
        if selector.done:
            break
    return list(selector.kept)
