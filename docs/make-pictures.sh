#!/usr/bin/env bash
# Regenerates the README pictures from the bundled samples (run from the repo root).
set -euo pipefail
R=.venv/bin/refcam
out=docs/img
mkdir -p "$out" /tmp/refcam-pictures
$R observe samples/kang/004.jpg --camera-file samples/kang/004.camera.json --annotate /tmp/refcam-pictures/observe-kang.png >/dev/null
$R rank samples/tornado/009.jpg --course roundabout-river --camera-file samples/tornado/009.camera.json \
   --annotate /tmp/refcam-pictures/photo-finish-clear.png >/dev/null
$R rank samples/tornado/001.jpg --course roundabout-river --camera-file samples/tornado/001.camera.json \
   --annotate /tmp/refcam-pictures/photo-finish-close.png >/dev/null
for f in observe-kang photo-finish-clear photo-finish-close; do
  .venv/bin/python -c "
import cv2, sys
img = cv2.imread('/tmp/refcam-pictures/$f.png')
scale = 1400 / img.shape[1]
img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
cv2.imwrite('$out/$f.jpg', img, [cv2.IMWRITE_JPEG_QUALITY, 85])
"
done
ls -la "$out"
.venv/bin/python docs/page_pictures.py  # the live page at desktop and phone size (Playwright, Debian chromium)
