"""salesreport: revenue by segment and by city."""
