"""Camera models, the camera file, and ChArUco calibration."""
