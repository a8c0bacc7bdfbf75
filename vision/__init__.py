"""refcam vision: stickers in an image -> piece poses in mm on the table."""

import os

# OpenCV's own "[ WARN:0@...]" lines would come before refcam's one-line message; errors still
# raise. Read when cv2 is first imported, which in refcam happens inside this package; a user's
# own setting wins.
os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")
