"""Evaluation campaigns: task sets × conditions run through the session core, scored blind by several people.

`tasks` and `importers` read task sets; `conditions` and `assign` say what runs and who scores it; `items` and
`runner` run the items (resumable); `desk` is what the Campaign tab shows an evaluator; `stats` and `report` make the
papers' tables, agreement and the cost–quality plot; `verdicts` hands the human verdicts to the real-photo
calibration; `commands` is `python -m costa campaign …`; every query is in `db`.
"""
