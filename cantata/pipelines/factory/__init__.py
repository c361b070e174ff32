"""The factory: a nine-role team that designs, writes, tests in a sandbox and deploys new agents."""
