"""k-anonymity of privacy attributes found in text (Abeywardana & Thayasivam): the gold set the tagger learns from."""
