"""Galaxy's dynamic job rules of the patch set (``rules_module`` of the routing environment that
serve/engines/routes.py writes). Galaxy imports every module of this package and calls the function the
environment names; keep the modules light (no Galaxy imports at module level)."""
