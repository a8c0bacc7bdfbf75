"""The README's pictures of the live page: desktop (1280×800) and phone (390×844) size.

Run from the repo root: `.venv/bin/python docs/page_pictures.py` (docs/make-pictures.sh
does). It serves the bundled Tornado Splash session, opens the page in Debian's chromium
through Playwright and writes JPEGs to docs/img/.
"""

from __future__ import annotations

import io
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "img"
CHROMIUM = "/usr/bin/chromium"


def _serve() -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "webui.cli", "serve", "--replay", "samples/sessions/tornado",
                             "--loop", "--port", str(port)], cwd=REPO, stderr=subprocess.PIPE, text=True)
    while "referee on" not in (line := proc.stderr.readline()):
        if not line:
            raise SystemExit("refcam serve did not start")
    return proc, f"http://127.0.0.1:{port}/"


def _jpeg(png: bytes, path: Path, width: int) -> None:
    from PIL import Image

    img = Image.open(io.BytesIO(png)).convert("RGB")
    if img.width > width:
        img = img.resize((width, round(img.height * width / img.width)), Image.LANCZOS)
    img.save(path, quality=82, optimize=True)
    print(f"{path.relative_to(REPO)}: {img.width}x{img.height}, {path.stat().st_size // 1024} KB")


def _wait_for_a_move(page) -> None:
    """Until the card shows a judged move on a still table (a picture worth showing)."""
    page.wait_for_function("window.refcam.rulings.some(r => r.legal === true)", timeout=90000)
    page.wait_for_function("window.refcam.status === 'stable'", timeout=30000)
    time.sleep(0.5)


def main() -> None:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    proc, url = _serve()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            desk = browser.new_page(viewport={"width": 1280, "height": 800}, bypass_csp=True)  # wait_for_function evals
            desk.goto(url)
            _wait_for_a_move(desk)
            _jpeg(desk.screenshot(), OUT / "live-page.jpg", 1280)
            phone = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2, bypass_csp=True)
            phone.goto(url)
            _wait_for_a_move(phone)
            _jpeg(phone.screenshot(), OUT / "live-phone.jpg", 585)
            for _ in range(4):  # the replay's next pass has no stable state for a moment: settle again
                _wait_for_a_move(phone)
                phone.click("#settle")
                try:
                    phone.wait_for_function("document.getElementById('photo-img').naturalWidth > 0", timeout=10000)
                    break
                except Exception:
                    continue
            time.sleep(0.5)
            _jpeg(phone.screenshot(), OUT / "photo-finish-phone.jpg", 585)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
