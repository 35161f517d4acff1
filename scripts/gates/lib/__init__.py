"""What the gate suites (scripts/gates/SUITE.py) share, each thing once. A suite imports from
here and never from another suite.

  paths      ROOT, SHARECTL, VENV_PY, WORK; read_json; rerun_in_venv_without (for aiohttp)
  suite      record, GateSkipped, choose (the gates named on the command line), run_gates, finish
  processes  start (with a log), stop
  ports      free_port, wait_http
  waits      wait_for, wait_for_async
  network    sh, drop_udp, drop_media, clear_drops (nftables on the namespace's loopback)
  stats      read_stats, last_stats: --stats-json lines, each checked against docs/stats.schema.json
  sharectl   share (a share to a WHIP endpoint, run to its end), Share (one typed to on its stdin)
  peers      start_aiortc, last_session, sessions (the aiortc WHIP endpoint's stats file)
  chromium   WHIPReceiver: the Chromium WHIP bridge and headless Chromium on its receiver page
  devtools   Browser: headless Chromium on a room's invite link, driven through DevTools (aiohttp)
  room       Server (sharectl serve), Participant (sharectl share --room or watch)
  janus      Janus (Debian's janus with its VideoRoom, on j0's 127.0.0.2), JanusViewer (Chromium with janus.js);
             scripts/gates/janus_check.py proves them by hand with an aiortc publisher
"""
