"""The agent factory: a team that designs, writes, tests in a sandbox and deploys agents."""
