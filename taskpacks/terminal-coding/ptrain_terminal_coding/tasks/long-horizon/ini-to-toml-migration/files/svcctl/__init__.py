"""svcctl: our services configuration."""
