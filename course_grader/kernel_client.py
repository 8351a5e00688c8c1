"""A kernel client that never sleeps through a message that has already arrived.

nbclient stands in for a browser's widget manager: when a cell's widget
(ipywidgets' ``interact``, any ``Output`` widget) prints, nbclient sends the
widget's new state back to the kernel on the shell socket, from the task that
reads IOPub, while another task waits on that same socket for the cell's
reply (``nbclient.output_widget.OutputWidget``).  A ZeroMQ socket signals
"readable" once, on an edge; the send can swallow that signal, and the wait
then sleeps to the end of its timeout, where a last look finds the reply that
had been there all along (jupyter/nbclient#312).  The cell's result is right,
but the wait costs the cell's whole time limit, at random (on two busy cores,
8 of 40 runs of a notebook with three ``interact`` cells, cs1302's Lab3b, had
such a wait).  Under the grader that time comes out of the notebook's budget:
an honest student whose budget ran out lost the cells after it.

:class:`PromptKernelClient` is jupyter_client's asynchronous client whose
channels wait in slices of :data:`SLICE` seconds, each ending with that last
look, so a lost signal costs at most one slice.  The grader's kernel manager
uses it (:mod:`course_grader.preprocessors.bounded_execute`); plain nbgrader
takes it from configuration::

    c.AsyncKernelManager.client_class = "course_grader.kernel_client.PromptKernelClient"
"""

from __future__ import annotations

from queue import Empty
from time import monotonic

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from traitlets import Type

#: the longest a wait goes without looking at its socket again (seconds)
SLICE = 0.25


class PromptChannel(AsyncZMQSocketChannel):
    """jupyter_client's asynchronous channel, waiting for a message in slices of :data:`SLICE` s."""

    async def get_msg(self, timeout: float | None = None) -> dict:
        """The next message; :class:`queue.Empty` if none came within ``timeout`` s (None: wait on)."""
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            wait = SLICE if deadline is None else min(SLICE, max(0.0, deadline - monotonic()))
            try:
                return await super().get_msg(timeout=wait)
            except Empty:
                if deadline is not None and monotonic() >= deadline:
                    raise


class PromptKernelClient(AsyncKernelClient):
    """jupyter_client's asynchronous kernel client with :class:`PromptChannel` channels."""

    shell_channel_class = Type(PromptChannel)
    iopub_channel_class = Type(PromptChannel)
    stdin_channel_class = Type(PromptChannel)
    control_channel_class = Type(PromptChannel)
