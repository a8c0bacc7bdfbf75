"""refcam referee: game state, rules and rulings on plain values (no cv2)."""
