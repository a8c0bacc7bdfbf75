"""`refcam render SCENE.json OUT.jpg`: a photo-like image of a described table and its exact truth."""

from __future__ import annotations

import json
from pathlib import Path

from webui.catalog_option import add_catalog_option


def register(subparsers) -> None:
    p = subparsers.add_parser("render", help="render a scene description to a photo-like image with its truth",
                              description="Render a scene (docs/scene-format.md) to OUT.jpg and write the exact "
                                          "ground truth (camera, piece poses, sticker corners) beside it.")
    p.add_argument("scene", help="scene JSON file")
    p.add_argument("out", help="output image (.jpg, .jpeg or .png)")
    p.add_argument("--truth", help="truth JSON path (default: OUT with .truth.json)")
    p.add_argument("--json", action="store_true", help="print a JSON summary with the paths written")
    add_catalog_option(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from synth.render import default_truth_path, load_scene, write_render
    from referee.paths import refuse_overwriting_inputs

    from referee import safeload

    truth = args.truth or default_truth_path(Path(args.out))
    safeload.output_path(args.out, "OUT")  # a FIFO or a device is refused before any work
    safeload.output_path(truth, "--truth" if args.truth else "the truth file")
    refuse_overwriting_inputs("OUT", args.out, [("the scene", args.scene)])
    refuse_overwriting_inputs("--truth" if args.truth else "the truth file", truth,
                              [("the scene", args.scene), ("the output image", args.out)])
    scene = load_scene(args.scene)
    image_path, truth_path, truth = write_render(scene, args.out, args.truth)
    stickers = truth["stickers"]
    summary = {"image": str(image_path), "truth": str(truth_path), "image_size": truth["image_size"],
               "pieces": len(truth["pieces"]), "stickers": len(stickers),
               "stickers_visible": sum(1 for s in stickers if s["visible"])}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"wrote {image_path} ({truth['image_size'][0]}x{truth['image_size'][1]}, "
              f"{summary['stickers_visible']}/{summary['stickers']} stickers visible) and {truth_path}")
    return 0
