"""The real-photo ground-truth suite: real photos, real cut-outs, truth by construction (see cases.py)."""
