"""A steward's own gold (issue 51): a stratified random sample of the records, the chosen detector's spans
pre-filled, the steward's corrections kept in the cache folder (never in a bundle), exported to span JSON and
CoNLL and read back, and the detector's recall and precision on them with Wilson intervals, which then stand in
for the shipped gold in the residual detection risk (`engine.protect.detection.DetectionShare`)."""
