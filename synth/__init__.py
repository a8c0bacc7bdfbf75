"""Tools that make pictures and paper, not part of the detection pipeline: the scene renderer
(render, camera, canvas, draw), the random legal scene builder (scenes) and the sticker and
ChArUco sheets (printing). They feed samples/, tests and `refcam render` / `refcam markers`."""
