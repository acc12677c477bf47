"""Counts of records by level and by hour."""

from collections import Counter

SEVERITY = {"DEBUG": 10, "INFO": 20, "WARNING": 30, "ERROR": 40, "CRITICAL": 50}


def summarize(records, min_level="DEBUG"):
    levels, hours, total = Counter(), Counter(), 0
    for record in records:
        if SEVERITY[record.level] < SEVERITY[min_level]:
            continue
        levels[record.level] += 1
        hours[record.timestamp.strftime("%Y-%m-%d %H")] += 1
        total += 1
    return {"levels": dict(sorted(levels.items())), "hours": dict(sorted(hours.items())), "records": total}
