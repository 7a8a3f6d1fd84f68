"""Training strategies: what the forward pass keeps for the backward pass, and what it recomputes.

- `vanilla`: backpropagation through time storing everything (the layer as built).
- `checkpoint-layer`: torch.utils.checkpoint around the whole layer (Linear + neuron): only its input
  is kept, everything is recomputed in the backward pass.
- `checkpoint-neuron`: the Linear's output is kept, the neuron's membrane potentials and spikes of all
  time steps are recomputed in the backward pass (what Liang et al., DATE 2022, store and recompute).
- `checkpoint-time`: as checkpoint-neuron, per chunk of `chunk` time steps, the membrane carried from
  one chunk to the next (each chunk's recomputation holds one chunk's graph at a time).
- `library`: the library's own memory-saving mode where it has one (SpikingJelly's
  `activation_based.memopt`); the others say why not (`not_offered`).

On the convolutional network (snnbench.training.convnet) each strategy applies to every block (pool, conv or
FC, batch norm, neuron) in turn: "layer" is a block, "Linear's output" the block's Conv/FC output.

Each strategy must give vanilla's gradients (snnbench.training.gradients checks it per point).
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils.checkpoint import checkpoint

from snnbench.training.spec import strategy_not_offered as not_offered


# How to run a library's neuron on a chunk of the sequence from a given membrane and read the
# membrane after it: run(neuron_module, current_chunk, v_or_None) -> (spikes, v).
def _own_loop(module, current, v):
    return module.run(current, v)


def _norse(module, current, v):
    lift = module.module  # FirstOutput(Lift(LIFBoxCell))
    return lift(current if v is None else (current, v))


def _stateful(attribute: str):
    """Libraries that keep the membrane in the module (FromRest(module)): reset to rest, then set it."""

    def run(module, current, v):
        inner = module.module
        module.reset()
        if v is not None:
            setattr(inner, attribute, v.clone())  # copies: sinabs detaches its state in place on reset
        spikes = inner(current)
        return spikes, getattr(inner, attribute).clone()

    return run


STATE: dict[str, Callable] = {
    "torch": _own_loop,
    "snntorch": _own_loop,
    "norse": _norse,
    "spikingjelly": _stateful("v"),
    "sinabs": _stateful("v_mem"),
}


def _time_dim(layer) -> int:
    return 0 if layer.layout == "TBN" else 1


def _chunked(layer, framework: str, chunk: int, detach_state: bool = False) -> Callable:
    run = STATE[framework]

    def chunk_forward(current, v):
        return run(layer.neuron, current, v)

    def forward(x: torch.Tensor) -> torch.Tensor:
        current = layer.current(x)
        dim, v, spikes = _time_dim(layer), None, []
        for part in current.split(chunk, dim=dim):
            if detach_state and v is not None:
                v = _detach(v)
            out, v = checkpoint(chunk_forward, part, v, use_reentrant=False)
            spikes.append(out)
        return torch.cat(spikes, dim=dim)

    return forward


def _detach(state):
    if isinstance(state, torch.Tensor):
        return state.detach()
    return type(state)(*(_detach(s) for s in state))


def _spikingjelly_memopt(layer, chunk: int | None) -> Callable:
    """SpikingJelly's memopt: its checkpoint wrapper around the multi-step neuron, with explicit state
    recomputation, over `chunk`-step chunks of time (level 1 of optimize_memory; levels 2-4 search by
    CUDA memory profiling and need a GPU)."""
    from spikingjelly.activation_based import memopt

    node = layer.neuron.module
    wrapped: dict[int, torch.nn.Module] = {}  # by number of chunks; kept outside the layer's modules

    def forward(x: torch.Tensor) -> torch.Tensor:
        current = layer.current(x)
        chunks = 1 if chunk is None else max(1, -(-current.shape[0] // chunk))
        if chunks not in wrapped:
            wrapped[chunks] = memopt.checkpoint_module(node, chunks=chunks)
        node.reset()
        return wrapped[chunks](current)

    return forward


def _per_block(net, forward: Callable) -> Callable:
    """A network of blocks (snnbench.training.convnet.ConvNet): `forward(block)` on each block in turn."""
    forwards = [forward(block) for block in net.blocks]
    return lambda x: net.run(forwards, x)


def forward_of(layer, framework: str, strategy: str, chunk: int | None = None) -> Callable:
    """The forward pass of `layer` (x -> spikes) under `strategy`; on a network of blocks, the strategy
    applies to each block (checkpoint-layer keeps each block's input, checkpoint-neuron each block's
    synaptic output: Liang et al.'s store-only-the-Conv/FC-outputs)."""
    reason = not_offered(framework, strategy)
    if reason:
        raise ValueError(f"{framework}, {strategy}: {reason}")
    if hasattr(layer, "blocks"):
        return _per_block(layer, lambda block: _layer_forward(block, framework, strategy, chunk))
    return _layer_forward(layer, framework, strategy, chunk)


def _layer_forward(layer, framework: str, strategy: str, chunk: int | None) -> Callable:
    if strategy == "vanilla":
        return layer
    if strategy == "checkpoint-layer":
        return lambda x: checkpoint(layer, x, use_reentrant=False)
    if strategy == "checkpoint-neuron":
        return lambda x: checkpoint(layer.neuron, layer.current(x), use_reentrant=False)
    if strategy == "checkpoint-time":
        return _chunked(layer, framework, chunk)
    # the library's own mode: SpikingJelly's memopt (spec.LIBRARY_MODES says why the others have none)
    return _spikingjelly_memopt(layer, chunk)


def broken_forward(layer, framework: str, chunk: int) -> Callable:
    """A deliberately wrong strategy for the gradient check to reject: chunks of time whose membrane is
    detached between chunks (truncated BPTT), so no gradient flows across a chunk boundary."""
    if hasattr(layer, "blocks"):
        return _per_block(layer, lambda block: _chunked(block, framework, chunk, detach_state=True))
    return _chunked(layer, framework, chunk, detach_state=True)
