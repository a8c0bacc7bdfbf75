import cProfile, pstats, sys, cv2
cv2.setNumThreads(1)
from pathlib import Path
from tests.bench import speed
game = sys.argv[1]; variant = sys.argv[2] if len(sys.argv) > 2 else "b"
folder = speed.session_folder(game, "1080p", 20)
frames = speed.load_frames(folder, 20)
from webui.live import pipeline_observe
pipeline_observe(frames[0][1], None, None)
engine, fs, es = speed.make_engine(folder, variant)
engine.process(*frames[0])
pr = cProfile.Profile(); pr.enable()
for t, im in frames:
    engine.process(t, im); speed._drain(fs, es, [])
pr.disable()
st = pstats.Stats(pr); st.sort_stats("cumulative").print_stats(45)
