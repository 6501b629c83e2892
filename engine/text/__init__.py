"""Text processing: tokens, n-grams and named entities."""
