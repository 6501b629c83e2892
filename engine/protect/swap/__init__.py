"""Named-entity swapping between similar chunks of different documents (Greve & Sablica)."""
