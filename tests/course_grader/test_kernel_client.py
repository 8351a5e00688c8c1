"""course_grader/kernel_client.py: a reply that has arrived is read within a slice, not at the wait's end.

The lost wake-up is made on purpose: a message reaches the socket while a wait is
pending, and reading the socket's events (``getsockopt(EVENTS)``, as a send on the
same socket does) consumes the "readable" signal before the event loop sees it.
"""

import asyncio
import time

import zmq
import zmq.asyncio
from event_loops import run_coroutine
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.session import Session

from course_grader.kernel_client import SLICE, PromptChannel, PromptKernelClient
from course_grader.preprocessors.bounded_execute import PromptKernelManager

WAIT = 4.0   # seconds: the wait's timeout, far longer than a slice


async def _wait_through_a_lost_signal(channel_class, timeout=WAIT, send=True):
    """``(message or the error raised, seconds from the wait's start, seconds from the lost signal)``
    for one wait on ``channel_class``."""
    context, peer_context = zmq.asyncio.Context(), zmq.Context()
    socket = context.socket(zmq.DEALER)
    peer = peer_context.socket(zmq.DEALER)
    try:
        peer.connect(f"tcp://127.0.0.1:{socket.bind_to_random_port('tcp://127.0.0.1')}")
        session = Session(key=b"")
        started = time.monotonic()
        waiting = asyncio.ensure_future(channel_class(socket, session).get_msg(timeout=timeout))
        await asyncio.sleep(0.1)                     # the wait is polling the socket
        if send:
            session.send(peer, "execute_reply", {"status": "ok"})
            # Until the reply is queued, read the socket's events, with no await between: each
            # read consumes the "readable" signal, so the event loop never sees it raised.
            while not socket.getsockopt(zmq.EVENTS) & zmq.POLLIN:
                assert time.monotonic() - started < timeout / 2, "the reply never reached the socket"
                time.sleep(0.01)
        else:
            socket.getsockopt(zmq.EVENTS)
        lost_at = time.monotonic()
        try:
            message = await waiting
        except Exception as error:
            message = error
        ended = time.monotonic()
        return message, ended - started, ended - lost_at
    finally:
        peer.close(0)
        socket.close(0)
        context.term()
        peer_context.term()


def test_jupyter_clients_channel_sleeps_through_the_reply_to_the_end_of_its_wait():
    """The failure itself (jupyter/nbclient#312): without slices the reply is found only at the end."""
    message, waited, _ = run_coroutine(_wait_through_a_lost_signal(AsyncZMQSocketChannel))
    assert message["msg_type"] == "execute_reply"
    assert waited >= WAIT - 0.01          # asyncio may fire a timer a clock tick early


def test_the_prompt_channel_reads_the_reply_within_a_slice():
    message, _, after_the_loss = run_coroutine(_wait_through_a_lost_signal(PromptChannel))
    assert message["msg_type"] == "execute_reply" and message["content"] == {"status": "ok"}
    assert after_the_loss < WAIT / 2


def test_the_prompt_channel_with_nothing_to_read_waits_its_whole_timeout():
    """Slices change when a message is seen, not how long a wait lasts: Empty comes at the timeout."""
    from queue import Empty

    error, waited, _ = run_coroutine(_wait_through_a_lost_signal(PromptChannel, timeout=1.5, send=False))
    assert isinstance(error, Empty)
    assert 1.5 - 0.01 <= waited < 1.5 + 1.0


def test_the_prompt_channel_without_a_timeout_waits_for_a_late_message():
    async def late():
        context, peer_context = zmq.asyncio.Context(), zmq.Context()
        socket, peer = context.socket(zmq.DEALER), peer_context.socket(zmq.DEALER)
        try:
            peer.connect(f"tcp://127.0.0.1:{socket.bind_to_random_port('tcp://127.0.0.1')}")
            session = Session(key=b"")
            waiting = asyncio.ensure_future(PromptChannel(socket, session).get_msg())
            await asyncio.sleep(4 * SLICE)           # several slices pass with nothing to read
            assert not waiting.done()
            session.send(peer, "status", {"execution_state": "idle"})
            return await asyncio.wait_for(waiting, 5)
        finally:
            peer.close(0)
            socket.close(0)
            context.term()
            peer_context.term()

    assert run_coroutine(late())["content"] == {"execution_state": "idle"}


def test_the_graders_kernel_manager_talks_through_prompt_channels_on_every_socket():
    client = PromptKernelManager(kernel_name="python3").client()
    assert isinstance(client, PromptKernelClient)
    for name in ("shell", "iopub", "stdin", "control"):
        assert getattr(client, f"{name}_channel_class") is PromptChannel, name


def test_plain_nbgrader_takes_the_client_from_configuration():
    """What the module's docstring tells an instructor to configure works as written (nbgrader's
    ``Execute`` makes an ``AsyncKernelManager`` with its configuration)."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets.config import Config

    config = Config()
    config.AsyncKernelManager.client_class = "course_grader.kernel_client.PromptKernelClient"
    assert isinstance(AsyncKernelManager(kernel_name="python3", config=config).client(), PromptKernelClient)
