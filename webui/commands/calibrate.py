"""`refcam calibrate`: ChArUco camera calibration from a folder of pictures or a live camera;
writes the camera file (SPEC section 4)."""

from __future__ import annotations

import json
import sys
import tempfile
import threading
from pathlib import Path

from webui.catalog_option import add_catalog_option


def register(subparsers) -> None:
    p = subparsers.add_parser("calibrate", help="calibrate the camera from views of the ChArUco board",
                              description="Calibrate the camera (pinhole + k1,k2,p1,p2,k3) from pictures of the "
                                          "ChArUco board printed by `refcam markers --charuco`, and write the "
                                          "camera file that every command reads with --camera-file.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--images", metavar="DIR", help="folder of pictures of the board (one camera mode)")
    src.add_argument("--camera", metavar="N|URL", help="capture views live from camera index N, or from a phone's / "
                                                        "IP camera's stream URL (http://PHONE:8080/video, rtsp://...)")
    p.add_argument("--out", required=True, metavar="FILE", help="camera file to write (JSON)")
    p.add_argument("--views", type=int, default=12, help="live capture: stop after this many views (default 12)")
    p.add_argument("--save-views", metavar="DIR", help="live capture: also save the kept frames here")
    p.add_argument("--camera-file", metavar="F", help="an earlier camera file for this camera mode: "
                                                       "its intrinsics seed the solver")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    add_catalog_option(p)
    p.set_defaults(run=run)


def check_out_file(path: str) -> Path:
    """Refuse an --out that cannot be written before any slow work is done."""
    from calibration.charuco import CalibrationError

    from referee import safeload

    out = Path(path)
    if out.is_dir():
        raise CalibrationError(f"--out {path!r} is a folder; give a file name such as camera.json")
    safeload.output_path(out, "camera file", CalibrationError)  # a FIFO or a device: refused before any work
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise CalibrationError(f"cannot write camera file {path!r}: folder {str(parent)!r} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".refcam-write-test-"):
            pass
    except OSError as exc:
        raise CalibrationError(f"cannot write camera file {path!r}: {exc.strerror or exc}") from None
    return out


def _refuse_overwriting_views(out: str, folder: str) -> None:
    """`--out views/view-00.png` would replace a picture of the board with JSON: refused, as the
    other commands refuse an output that names one of their inputs."""
    from calibration.charuco import IMAGE_SUFFIXES
    from referee.paths import refuse_overwriting_inputs

    views = Path(folder)
    if not views.is_dir():
        return  # calibrate_folder says what is wrong with the folder
    try:
        pictures = [p for p in views.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES]
    except OSError:
        return
    refuse_overwriting_inputs("--out", out, [("the calibration picture", str(p)) for p in pictures])


def write_atomically(camera, out: Path) -> None:
    camera.save(out)  # referee.safeload.write_text: a temporary file renamed over out


def run(args) -> int:
    from calibration import charuco
    from calibration.camera import CameraModel
    from referee.errors import InvalidInputError

    if args.images is not None:
        out = check_out_file(args.out)
        _refuse_overwriting_views(args.out, args.images)
        initial = CameraModel.load(args.camera_file) if args.camera_file else None
        result = charuco.calibrate_folder(args.images, initial=initial)
    else:
        from vision.stream import parse_camera

        cap = open_camera(parse_camera(args.camera))  # first: a missing camera is the likeliest mistake
        try:
            out = check_out_file(args.out)
            initial = CameraModel.load(args.camera_file) if args.camera_file else None
            if args.views < charuco.MIN_VIEWS:
                raise InvalidInputError(f"--views {args.views} is too few (at least {charuco.MIN_VIEWS})")
        except BaseException:
            cap.release()
            raise
        result = _calibrate_live(args, charuco, cap, initial)
    write_atomically(result.camera, out)
    _report(result, out, args.json)
    return 0


def open_camera(index: int | str):
    """An opened cv2.VideoCapture (or a stream reader for a URL), or a one-line error when
    there is no such camera."""
    import cv2

    from referee.errors import InvalidInputError

    if isinstance(index, str):
        from vision.stream import open_stream_capture

        return open_stream_capture(index)

    level = cv2.utils.logging.getLogLevel()
    cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)  # backends print per-try warnings
    try:
        try:
            cap = cv2.VideoCapture(index)
        except (cv2.error, OverflowError):  # an index beyond a C int: no such camera
            cap = cv2.VideoCapture()
        opened = cap.isOpened()
    finally:
        cv2.utils.logging.setLogLevel(level)
    if not opened:
        raise InvalidInputError(f"cannot open camera {index} (no such camera, or it is busy)")
    return cap


def _calibrate_live(args, charuco, cap, initial=None):
    """Grab frames from the opened capture until the selector has its views (or Enter /
    Ctrl-C), then calibrate; releases the capture."""
    import cv2

    save_dir = None
    if args.save_views:
        from synth.printing import prepare_out_dir

        try:
            save_dir = prepare_out_dir(args.save_views)
        except BaseException:
            cap.release()
            raise
    log = sys.stderr if args.json else sys.stdout
    stop = threading.Event()
    if sys.stdin is not None and sys.stdin.isatty():
        threading.Thread(target=lambda: (sys.stdin.readline(), stop.set()), daemon=True).start()
    print(f"Show the ChArUco board to camera {args.camera}, tilted in different directions and at "
          f"different places in the picture. Stops at {args.views} views; Enter or Ctrl-C stops earlier.", file=log)

    def frames():
        failures = 0
        while failures < 30:
            ok, frame = cap.read()
            if not ok:
                failures += 1
                continue
            failures = 0
            yield frame

    selector = charuco.ViewSelector(target=args.views)
    images: dict[str, object] = {}

    def on_frame(i, frame, view, kept, reason):
        if kept:
            images[view.source] = frame
            print(f"kept view {len(selector.kept)}/{args.views}: {view.n_corners} corners, "
                  f"tilt {charuco.tilt_deg(view):.0f} deg", file=log, flush=True)
            if save_dir is not None:
                cv2.imwrite(str(save_dir / f"{view.source}.png"), frame)

    try:
        charuco.select_views(frames(), selector, on_frame=on_frame, should_stop=stop.is_set)
    except KeyboardInterrupt:
        print("stopped; calibrating with the views kept so far", file=log)
    finally:
        cap.release()
    views = selector.kept
    size = views[0].image_size if views else (0, 0)
    return charuco.calibrate_views(views, size, initial=initial)


def _report(result, out: Path, as_json: bool) -> None:
    if as_json:
        doc = result.to_json()
        doc["out"] = str(out)
        print(json.dumps(doc))
        return
    K = result.camera.K
    k1, k2, p1, p2, k3 = result.camera.dist_coeffs
    missed = f"; board not found in {len(result.missed)}: {', '.join(result.missed[:5])}" if result.missed else ""
    # the verdict first: is the camera file fit to use, then the numbers behind it
    if result.rms_px > 1.0:
        print(f"Calibrated, but recalibrate: the views disagree by {result.rms_px:.2f} px (over 1 px); wrote {out}")
    else:
        print(f"Calibrated: {out} is good to use ({result.rms_px:.2f} px RMS from {len(result.views_used)} views)")
    print(f"calibrated from {len(result.views_used)} views{missed}")
    print(f"RMS reprojection error {result.rms_px:.3f} px (worst view {max(result.per_view_rms):.3f} px)")
    w, h = result.camera.image_size
    sd = result.camera.extra.get("intrinsics_std") or {}
    print(f"fx {K[0, 0]:.2f} +-{sd.get('fx', 0):.2f}  fy {K[1, 1]:.2f} +-{sd.get('fy', 0):.2f}  "
          f"cx {K[0, 2]:.2f} +-{sd.get('cx', 0):.2f}  cy {K[1, 2]:.2f} +-{sd.get('cy', 0):.2f}  (image {w}x{h})")
    print(f"k1 {k1:.5f}  k2 {k2:.5f}  p1 {p1:.5f}  p2 {p2:.5f}  k3 {k3:.5f}")
    if result.rms_px > 1.0:
        print("warning: RMS above 1 px: blurred views or a board that is not flat; consider recalibrating")
    print(f"wrote {out}")
