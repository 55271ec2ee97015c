"""Build the replay test's broken history (test_broken_history_replay.build) as the user of $TRIAL_ENV."""
import json
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "integration"), str(HERE.parent)]
from galaxy_mcp_analysis.testing import McpClient
from replay_transcript import Transcript
from test_broken_history_replay import build
conf = json.load(open(os.environ["TRIAL_ENV"]))
client = McpClient(conf["url"], headers={"x-api-key": conf["api_key"]})
try:
    t = Transcript(client, conf["api_key"])
    history, made = build(t)
    print(history, json.dumps(made))
finally:
    client.close()
