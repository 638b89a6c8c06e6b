"""What the server tests and the benchmarks share to drive a running GradLab: not shipped in the wheel.

- :mod:`harness.server`: ``streamlit run`` on a free port (:class:`~harness.server.Server`),
  and replicas measured together (:class:`~harness.server.Fleet`);
- :mod:`harness.processes`: a process's memory, threads and CPU, its tree, the machine's load;
- :mod:`harness.session`: one browser tab over Streamlit's websocket protocol
  (:class:`~harness.session.StreamlitSession`);
- :mod:`harness.runs`: what one script run produced (:class:`~harness.runs.RunResult`) and
  :class:`~harness.runs.ProtocolError`;
- :mod:`harness.widgets`: a page's widgets, their values and another one a user could pick;
- :mod:`harness.message_cache`: the frontend's cache of messages named by hash;
- :mod:`harness.page_load`: the page's HTML load, its cookies and the replica that answered;
- :mod:`harness.browser`: Chromium's path and flags, and when a page has finished its run;
- :mod:`harness.heavy_requests`: the heaviest requests one session can make, and another
  session's reruns measured meanwhile;
- :mod:`harness.stats`: percentiles.
"""
