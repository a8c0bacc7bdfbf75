"""`make bench`: every benchmark in one run, each printing its figures and the ratio
to a baseline measured in the same run (vision: the bare OpenCV detector; live page:
the source's frame rate)."""

from __future__ import annotations

import sys

from tests.bench import accuracy, kang, kayak, live


def main() -> int:
    print("=== vision accuracy (refcam vs bare cv2.aruco, same run) ===", flush=True)
    code = accuracy.main([])
    for game in ("tornado", "kang"):
        print(f"\n=== live page: frames per second to 1 and 5 tabs ({game} session) ===", flush=True)
        code = live.main(["--game", game]) or code
    print("\n=== Kang: perft to depth 4, explain time, square occupancy on the stills ===", flush=True)
    code = kang.main([]) or code
    print("\n=== Kayak Chaos: explain time for 3-action turns (vs unpruned search, same run); river and kayak-space errors ===",
          flush=True)
    code = kayak.main([]) or code
    return code


if __name__ == "__main__":
    sys.exit(main())
