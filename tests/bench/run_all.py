"""`make bench`: every benchmark in one run, each printing its figures and the ratio
to a baseline measured in the same run (vision: the bare OpenCV detector; live page:
the source's frame rate)."""

from __future__ import annotations

import sys

from tests.bench import accuracy, kang, live


def main() -> int:
    print("=== vision accuracy (refcam vs bare cv2.aruco, same run) ===", flush=True)
    code = accuracy.main([])
    for game in ("tornado", "kang"):
        print(f"\n=== live page: frames per second to 1 and 5 tabs ({game} session) ===", flush=True)
        code = live.main(["--game", game]) or code
    print("\n=== Kang: perft to depth 4, explain time, square occupancy on the stills ===", flush=True)
    code = kang.main([]) or code
    return code


if __name__ == "__main__":
    sys.exit(main())
