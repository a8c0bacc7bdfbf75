"""refcam's web page and command line."""
