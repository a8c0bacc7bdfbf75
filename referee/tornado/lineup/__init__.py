"""Measuring one physical copy of Tornado Splash: where its stickers really sit on the boats, the
course pieces and the finish line, from line-up photos (`refcam measure tornado-boats`,
`tornado-course`, `tornado-finish`). This is calibration of a copy, not rules: the referee only
reads the catalog it writes."""
