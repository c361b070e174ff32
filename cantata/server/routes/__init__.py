"""HTTP routes, a few lines each: parse, call the service, shape the answer."""
