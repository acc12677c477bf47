"""logstat: counts from application logs."""
