"""Reading images from disk, refusing anything that is not a whole picture.

A JPEG cut off mid-transfer still decodes in OpenCV (the missing rows come out
grey), and a grey band over half the table would silently hide pieces, so a
truncated file is refused rather than half-read.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from referee.errors import InvalidInputError


class ImageReadError(InvalidInputError):
    """The file is missing, empty, not an image, or a truncated image."""


_JPEG_SOI = b"\xff\xd8"
_JPEG_EOI = b"\xff\xd9"
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_PNG_IEND = b"IEND"


def load_image(path: str | Path) -> np.ndarray:
    """Read an image file as (H, W, 3) BGR uint8.

    Raises ImageReadError (one line, quoting the path) for a missing or unreadable
    file, zero bytes, a file that is not an image, or a truncated JPEG/PNG.
    """
    import cv2

    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ImageReadError(f"no such image file: {path}") from None
    except IsADirectoryError:
        raise ImageReadError(f"{path} is a directory, not an image") from None
    except OSError as exc:
        raise ImageReadError(f"cannot read image {path}: {exc.strerror or exc}") from None
    return decode_image(data, str(path), cv2)


def decode_image(data: bytes, source: str = "image", cv2=None) -> np.ndarray:
    """Decode encoded image bytes (JPEG, PNG, ...) to (H, W, 3) BGR uint8, refusing truncation."""
    if cv2 is None:
        import cv2
    if len(data) == 0:
        raise ImageReadError(f"{source} is empty (0 bytes)")
    if data.startswith(_JPEG_SOI):
        # A whole JPEG ends with the EOI marker (some writers pad a few bytes after it).
        if _JPEG_EOI not in data[-64:]:
            raise ImageReadError(f"{source} is a truncated JPEG (no end-of-image marker)")
    elif data.startswith(_PNG_MAGIC):
        if _PNG_IEND not in data[-16:]:
            raise ImageReadError(f"{source} is a truncated PNG (no IEND chunk)")
    _refuse_huge(data, source)
    buf = np.frombuffer(data, dtype=np.uint8)
    image = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
    if image is None:
        if _looks_like_text(data):
            raise ImageReadError(f"{source} is a text file, not an image")
        raise ImageReadError(f"{source} is not an image OpenCV can decode")
    if image.dtype != np.uint8:
        # 16-bit PNG/TIFF: scale down to 8 bits
        image = (image.astype(np.float64) / np.iinfo(image.dtype).max * 255.0).round().astype(np.uint8) \
            if np.issubdtype(image.dtype, np.integer) else np.clip(image, 0, 255).astype(np.uint8)
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    elif image.shape[2] == 4:
        image = cv2.cvtColor(image, cv2.COLOR_BGRA2BGR)
    elif image.shape[2] != 3:
        raise ImageReadError(f"{source} has {image.shape[2]} channels; expected grey, BGR or BGRA")
    if image.shape[0] < 8 or image.shape[1] < 8:
        raise ImageReadError(f"{source} is only {image.shape[1]}x{image.shape[0]} pixels")
    return np.ascontiguousarray(image)


def _refuse_huge(data: bytes, source: str) -> None:
    """Refuse a picture larger than any camera takes before decoding it: a 1 MB PNG of
    30000x30000 pixels otherwise takes 7 GB of memory and half a minute to find nothing.
    Pillow reads only the header and calls anything over 2 x Image.MAX_IMAGE_PIXELS
    (about 179 Mpx) a decompression bomb."""
    import io
    import warnings

    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # 89-179 Mpx: read it
            with Image.open(io.BytesIO(data)):
                pass
    except Image.DecompressionBombError:
        limit = 2 * Image.MAX_IMAGE_PIXELS / 1e6
        raise ImageReadError(f"{source} has more pixels than refcam reads ({limit:.0f} Mpx): scale it down") from None
    except Exception:  # a format Pillow does not know, or a broken header: OpenCV decides below
        return


def _looks_like_text(data: bytes) -> bool:
    head = data[:4096]
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
