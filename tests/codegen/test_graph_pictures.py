"""Pictures of graphs: nodes that read as code, colours a legend explains, clusters of
the user's lines, one box per line for a large graph, never wider than a screen; in a
notebook the picture (with Graphviz) or the text."""

from __future__ import annotations

import inspect
import re
import shutil
import textwrap

import pytest

import autodiff as ad
from autodiff.graph.dot import MAX_NODES, WIDTH_INCHES, drawn_nodes


@pytest.fixture
def programs(user_module):
    return user_module(textwrap.dedent("""
        import numpy as np

        def net(W1, b1, W2, x):
            h = np.tanh(x @ W1 + b1)
            y = np.sum(h @ W2, axis=1)
            return np.mean(np.power(y, 2))

        def rnn(Wx, Wh, b, xs, h0):
            h = h0
            loss = 0.0
            for t in range(50):
                h = np.tanh(xs[t] @ Wx + h @ Wh + b)
                loss = loss + np.sum(h ** 2)
            return loss
    """) + "\n".join(["", "def chain(x):", "    y = x"]
                    + [f"    y = np.sin(y) * {k + 1.5} + np.exp(-y)" for k in range(40)]
                    + ["    return np.sum(y)"]))


def test_nodes_read_as_code_in_clusters_of_the_users_lines(programs):
    gradient = ad.grad(programs.net, wrt=(0, 1, 2))
    dot = gradient.graph.to_dot()
    assert 'label="y = sum(t3, axis=1)"' in dot  # a setting by its name
    assert re.search(r'label="t\d+ = multiply\(t\d+, 2\)"', dot)  # a constant operand
    assert 'label="line 5: h = np.tanh(x @ W1 + b1)"' in dot
    assert 'label="grad of line 5: h = np.tanh(x @ W1 + b1)"' in dot
    # the legend names the sweeps the graph holds, in their colours
    assert '"legend: forward" [label="your function", color=black' in dot
    assert '"legend: backward" [label="reverse sweep", color=firebrick' in dot
    assert "legend: tangent" not in dot
    assert '"legend: tangent" [label="tangents (forward mode)"' in (
        ad.jvp(programs.net).graph.to_dot())
    assert f'size="{WIDTH_INCHES},' in dot


def test_a_large_graph_is_drawn_a_line_at_a_time(programs):
    graph = ad.grad(programs.chain).graph
    assert drawn_nodes(graph) > MAX_NODES
    dot = graph.to_dot()
    boxes = re.findall(r'^    "(forward|backward): line (\d+): [^"]*" \[label=', dot, re.MULTILINE)
    source = inspect.getsource(programs.chain).splitlines()
    first = programs.chain.__code__.co_firstlineno
    chain_lines = {str(first + k) for k, text in enumerate(source) if "np.sin(y)" in text}
    assert len(chain_lines) == 40 and len(boxes) == len(set(boxes))  # a box per line
    assert {(phase, line) for phase, line in boxes if line in chain_lines} == {
        (phase, line) for phase in ("forward", "backward") for line in chain_lines}
    assert "sin, multiply, exp, negative, add" in dot.replace("negative, exp", "exp, negative")
    assert "cluster_" not in dot.replace("cluster_legend", "")
    assert dot.count("->") < 6 * len(boxes)  # edges between lines, once each
    small = ad.grad(programs.net).graph.to_dot(by_line=True)
    assert '"backward: line 5: h = np.tanh(x @ W1 + b1)"' in small


def test_in_a_notebook_a_graph_shows_its_picture_or_its_text(programs):
    graph = ad.grad(programs.rnn, wrt=(0, 1, 2)).graph
    assert re.fullmatch(r"<Graph rnn_grad\(Wx, Wh, b, xs, h0\): \d+ nodes; print\(\) shows "
                        r"them>", repr(graph))

    class Printer:  # IPython's pretty printer: _repr_pretty_ calls its text(part)
        def __init__(self):
            self.parts = []

        def text(self, part):
            self.parts.append(part)

    printer = Printer()
    graph._repr_pretty_(printer, False)
    assert "".join(printer.parts) == str(graph)
    svg = graph._repr_svg_()
    if shutil.which("dot") is None:
        assert svg is None  # IPython then shows the text
        return
    width = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
    assert width <= WIDTH_INCHES * 72 + 1  # never wider than a screen
    assert "grad of line 13: h = np.tanh(xs[t] @ Wx + h @ Wh + b)" in svg.replace("&#45;", "-")
    chain = ad.grad(programs.chain).graph._repr_svg_()
    assert float(re.search(r'<svg width="([\d.]+)pt"', chain).group(1)) <= WIDTH_INCHES * 72 + 1
