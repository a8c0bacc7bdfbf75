# refcam: `make demo` and `make test` work on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-dev
PORT ?= 8000

.PHONY: demo test fuzz bench bench-accuracy bench-robust bench-memory bench-lan bench-json bench-games samples clean venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

# The main job: a quick look at what refcam sees and rules on two bundled stills,
# then the live page replaying the bundled Tornado Splash session.
demo: $(STAMP)
	@echo "== refcam observe: every piece of a bundled Kang still, in mm, with sigma =="
	$(VENV)/bin/refcam observe samples/kang/004.jpg --camera-file samples/kang/004.camera.json
	@echo
	@echo "== refcam rank: a Tornado Splash close call (photo finish in out/photo-finish.png) =="
	@mkdir -p out
	$(VENV)/bin/refcam rank samples/tornado/001.jpg --course roundabout-river \
		--camera-file samples/tornado/001.camera.json --annotate out/photo-finish.png
	@echo
	@echo "== refcam serve: open http://127.0.0.1:$(PORT)/ in a browser (Ctrl-C stops) =="
	$(VENV)/bin/refcam serve --port $(PORT)

test: $(STAMP)
	$(PY) -m pytest -q

# The long fuzz campaign over every loader, every command's file arguments (special files in each:
# FIFO, /dev/zero, symlink loop, 300 MB sparse), huge counts, lying camera streams from a local fault
# server and every route of the live page (>= 10,000 inputs; FUZZ_SCALE=2 doubles it), then the classes
# of hostile input that cost seconds per byte or crashed (tests/test_fuzz_classes.py: escaped-quote strings up to 1 MB in every JSON file and POST,
# checkerboards and marker sheets, many-scan JPEGs, render's numbers, camera URLs, catalog words).
# It fails on any traceback, hang (20 s, or 10 s of CPU for one input) or process over 600 MB.
# `make test` runs the same tests seeded and short.
fuzz: $(STAMP)
	@mkdir -p out
	@rm -f out/fuzz-report.json
	HYPOTHESIS_PROFILE=long FUZZ_REPORT=out/fuzz-report.json $(PY) -m pytest -q -p no:cacheprovider \
		-W ignore::hypothesis.errors.HypothesisWarning tests/test_fuzz_loaders.py tests/test_fuzz_routes.py \
		tests/test_fuzz_classes.py; \
		status=$$?; $(PY) -m tests.test_fuzz_loaders out/fuzz-report.json || status=1; exit $$status

bench: $(STAMP)
	$(PY) -m tests.bench.run_all

# the three LAN attacks (hundreds of trickling connections, unread streams, a QR-code flood) against `refcam serve`, on loopback only (about 2 min)
bench-lan: $(STAMP)
	$(PY) -m tests.bench.lan

# the JSON guard against json.loads of the same bytes, on escaped quotes and deep arrays up to 1 MB (seconds)
bench-json: $(STAMP)
	$(PY) -m tests.bench.json_guard

# whole games to the winner: seeded Kang, Kayak Chaos and Tornado Splash playouts rendered as sessions
# (4 fps, a hand before each turn, each table still 4, 2 or 1 frames; clean and through the webcam chain),
# refereed by `refcam replay` and by the page's replay, each ruling matched to the playout's truth.
# One game of each on the reporting seeds: about 20-30 min on 2 busy cores (docs/bench-games.md;
# --quick, --holds, --copies, --games N, --tuning: `$(PY) -m tests.bench.games --help`)
bench-games: $(STAMP)
	$(PY) -m tests.bench.games

bench-memory: $(STAMP)
	$(PY) -m tests.bench.image_memory

bench-accuracy: $(STAMP)
	$(PY) -m tests.bench.accuracy

# vision under real optics: tone curves, blur, noise, foreign markers (about 3-5 min on one core),
# then varied tables and settings never used for tuning (synth/variety.py, held-out set, about 3 min),
# then webcams of synth/webcam.py's harsher chain (tuning and held-back conditions, 7 px motion blur
# among them) at 1080p and 720p: found % by sticker px, refcam / +re-read / +3 frames / bare detector,
# confidently wrong and phantoms (tests/bench/webcam.py; docs/vision-webcam.md; about 15 min)
bench-robust: $(STAMP)
	$(PY) -m tests.bench.robust --verbose
	$(PY) -m tests.bench.robust_heldout --set held-out
	$(PY) -m tests.bench.webcam --verbose

samples: $(STAMP)
	$(PY) samples/generate.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
