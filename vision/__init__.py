"""refcam vision: stickers in an image -> piece poses in mm on the table."""
