import cProfile, pstats, sys, cv2
cv2.setNumThreads(1)
from tests.bench import speed
from vision.sources import SessionSource
from webui.live import LiveEngine, LiveSettings, tracking_observe
image, camera = speed.scaling_frames(120)
e = LiveEngine(SessionSource(speed.REPO / "samples/sessions/tornado", realtime=False), tracking_observe(mode=sys.argv[1]), LiveSettings(game="tornado", camera=camera))
fs, es = e.frames.subscribe(), e.events.subscribe()
e.process(0.0, image)
pr = cProfile.Profile(); pr.enable()
for i in range(2):
    e.process(0.1*(i+1), image); speed._drain(fs, es, [])
pr.disable()
pstats.Stats(pr).sort_stats("cumulative").print_stats(40)
